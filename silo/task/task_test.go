package task

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// The 30 tasks as the design notes list them.
var wantTasks = []struct {
	id, name, output string
	segmented        bool
}{
	{"I-01", "Global Max", OutInt, false}, {"I-02", "Word Frequency", OutInt, false},
	{"I-03", "Distributed Vote", OutString, false}, {"I-04", "Any Match", OutBool, false},
	{"I-05", "Range Count", OutInt, false}, {"I-06", "Checksum", OutInt, false},
	{"I-07", "Average Value", OutFloat, false}, {"I-08", "Set Union Size", OutInt, false},
	{"I-09", "Top-K Select", OutList, false}, {"I-10", "Standard Deviation", OutFloat, false},
	{"II-11", "Prefix Sum", OutList, true}, {"II-12", "Moving Average", OutList, false},
	{"II-13", "Longest Palindrome", OutInt, false}, {"II-14", "1D Life Game", OutList, true},
	{"II-15", "Pattern Search", OutInt, false}, {"II-16", "Trapping Rain", OutInt, false},
	{"II-17", "Diff Array", OutList, false}, {"II-18", "List Ranking", OutDict, false},
	{"II-19", "Merge Neighbors", OutList, false}, {"II-20", "Pipeline Hash", OutList, true},
	{"III-21", "Distributed Sort", OutList, true}, {"III-22", "Median", OutInt, false},
	{"III-23", "Graph Components", OutInt, false}, {"III-24", "BFS Distance", OutDict, false},
	{"III-25", "K-Means Iteration", OutMatrix, false}, {"III-26", "Global Distinct", OutInt, false},
	{"III-27", "Collaborative Filtering", OutMatrix, false}, {"III-28", "PageRank Step", OutDict, false},
	{"III-29", "Load Balance", OutDict, false}, {"III-30", "Matrix Multiply", OutMatrix, false},
}

func TestRegistry(t *testing.T) {
	all := All()
	if len(all) != len(wantTasks) {
		t.Fatalf("%d tasks", len(all))
	}
	for i, w := range wantTasks {
		task := all[i]
		level := strings.Count(strings.Split(w.id, "-")[0], "I")
		paradigm := "Paradigm " + strings.Split(w.id, "-")[0]
		if task.ID != w.id || task.Name != w.name || task.Output != w.output || task.Segmented != w.segmented ||
			task.Level != level || task.Paradigm != paradigm {
			t.Errorf("task %d: %+v, want %+v (level %d)", i, task, w, level)
		}
		if task.LeetCodeURL == "" || task.Topology == "" || task.MessageCount == "" || task.HintText == "" || task.Complexity == "" {
			t.Errorf("%s: missing metadata", task.ID)
		}
		got, err := Lookup(strings.ToLower(w.id))
		if err != nil || got != task {
			t.Errorf("Lookup(%q) = %v, %v", strings.ToLower(w.id), got, err)
		}
	}
	if _, err := Lookup("IV-31"); err == nil {
		t.Error("Lookup(IV-31) succeeded")
	}
	all[0] = nil
	if All()[0] == nil {
		t.Error("All exposes the registry")
	}
}

func TestModeErrors(t *testing.T) {
	if _, err := Official("I-01", 3); err == nil {
		t.Error("Official n=3 succeeded")
	}
	if _, err := Official("X", 2); err == nil {
		t.Error("Official X succeeded")
	}
	if _, err := Seeded("I-01", 0, 1); err == nil {
		t.Error("Seeded n=0 succeeded")
	}
	if _, err := Seeded("III-30", 201, 1); err == nil {
		t.Error("Seeded III-30 n=201 succeeded")
	}
	if _, err := Seeded("I-01", 1001, 1); err == nil {
		t.Error("Seeded n=1001 succeeded")
	}
}

func TestSeededStreams(t *testing.T) {
	a, _ := Seeded("I-01", 5, 7)
	b, _ := Seeded("I-01", 5, 7)
	c, _ := Seeded("I-01", 5, 8)
	d, _ := Seeded("I-01", 6, 7)
	if !bytes.Equal(joinRaw(a.Shards), joinRaw(b.Shards)) {
		t.Error("same (task, n, seed) gave different shards")
	}
	if bytes.Equal(joinRaw(a.Shards), joinRaw(c.Shards)) || bytes.Equal(joinRaw(a.Shards)[:50], joinRaw(d.Shards)[:50]) {
		t.Error("different seeds or team sizes share a stream")
	}
	if a.Mode != ModeSeeded || a.Seed != 7 {
		t.Errorf("mode %s seed %d", a.Mode, a.Seed)
	}
	o, _ := Official("I-01", 5)
	if o.Mode != ModeOfficial {
		t.Errorf("official mode %s", o.Mode)
	}
	// Each agent's workload does not depend on N.
	for _, n := range []int{1, 4, 40} {
		in, _ := Seeded("I-07", n, 1)
		for i := range in.Shards {
			if c := bytes.Count(in.Shards[i], []byte(",")) + 1; c != 25 {
				t.Errorf("I-07 n=%d agent %d holds %d values", n, i, c)
			}
		}
	}
}

// TestOfficialCacheIsolation: modifying a returned instance leaves the cache intact.
func TestOfficialCacheIsolation(t *testing.T) {
	a, _ := Official("II-11", 2)
	keep := string(a.Shards[0])
	a.Shards[0] = []byte("[]")
	a.Deps[0] = nil
	b, _ := Official("II-11", 2)
	if string(b.Shards[0]) != keep || b.Deps[0] == nil {
		t.Error("Official shares mutable slices with its cache")
	}
}

var roleWords = regexp.MustCompile(`(?i)\b(leader|coordinator|master|worker|aggregator|manager|role|first,|then you|step \d)\b`)

func TestPrompts(t *testing.T) {
	for _, task := range All() {
		for _, n := range []int{1, 2, 5} {
			in, err := Seeded(task.ID, n, 3)
			if err != nil {
				t.Fatal(err)
			}
			phs := []string{PhAgentID, PhInputShard, PhMaxID, PhNumAgents}
			if n == 1 { // one agent: no team size, no ids of others
				phs = phs[:2]
			}
			for _, ph := range phs {
				if !strings.Contains(in.Template, ph) {
					t.Errorf("%s: template lacks %s", task.ID, ph)
				}
			}
			if m := roleWords.FindString(in.Template); m != "" {
				t.Errorf("%s: template uses %q (no roles, no prescribed steps)", task.ID, m)
			}
			if n == 1 && (in.Hint != "" || strings.Contains(in.Template, hintPrefix)) {
				t.Errorf("%s N=1: a topology hint for a single agent", task.ID)
			}
			if n > 1 && (strings.Count(in.Template, in.Hint) != 1 || !strings.HasPrefix(in.Hint, hintPrefix)) {
				t.Errorf("%s: hint line not found exactly once", task.ID)
			}
			for i := 0; i < n; i++ {
				with, without := in.Prompt(i, true), in.Prompt(i, false)
				for _, ph := range []string{PhAgentID, PhInputShard, PhMaxID, PhNumAgents} {
					if strings.Contains(with, ph) {
						t.Errorf("%s agent %d: prompt still has %s", task.ID, i, ph)
					}
				}
				if !strings.Contains(with, in.ShardText(i)) || !strings.Contains(with, "You are agent "+strconv.Itoa(i)+" ") {
					t.Errorf("%s agent %d: prompt lacks the agent's id or data", task.ID, i)
				}
				if strings.Contains(without, hintPrefix) || strings.Replace(with, in.Hint, "", 1) != without {
					t.Errorf("%s agent %d: the hint toggle must remove exactly the hint line", task.ID, i)
				}
			}
			if in.Prompt(-1, true) != "" || in.Prompt(n, true) != "" || in.ShardText(n) != "" {
				t.Errorf("%s: out-of-range agent gives text", task.ID)
			}
		}
	}
	// Shards are shown as Python's str(): strings unquoted, tuples, int keys.
	in, _ := Official("II-13", 2)
	if in.ShardText(0) != strings.Trim(string(in.Shards[0]), `"`) {
		t.Error("II-13: a string shard must be shown without quotes")
	}
	in, _ = Official("III-23", 2)
	if !strings.HasPrefix(in.ShardText(0), "[(") {
		t.Errorf("III-23: edges must be tuples: %.20s", in.ShardText(0))
	}
	in, _ = Official("III-27", 2)
	if !strings.HasPrefix(in.ShardText(0), "{'users': {") || strings.Contains(in.ShardText(0), `'users': {'`) {
		t.Errorf("III-27: ids must be int keys: %.40s", in.ShardText(0))
	}
}

// TestAsInts: the accessors read back what the constructors build.
func TestAsInts(t *testing.T) {
	if !slices.Equal(asInts(pyvalue.Ints([]int{1, 2})), []int{1, 2}) {
		t.Error("asInts(pyvalue.Ints)")
	}
}

// TestConcurrentUse: instances and the official cache are safe to read
// from several goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for _, task := range All()[g*5 : g*5+10] {
				in, err := Official(task.ID, 5)
				if err == nil {
					_ = in.Prompt(g, g%2 == 0)
					_, err = in.Solve()
				}
				if err != nil {
					t.Error(err)
				}
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

// byID is Lookup for ids a test knows to exist.
func byID(id string) *Task {
	t, err := Lookup(id)
	if err != nil {
		panic(err)
	}
	return t
}
