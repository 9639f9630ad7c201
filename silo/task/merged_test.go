package task

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// peerWords are phrases that assume other agents; no single-agent text may
// use them.
var peerWords = regexp.MustCompile(`(?i)\b(agents|teams?|peers?|the others|other agents?|another agent|each agent|every agent|agent i|agent order|ordering|neighbours in)\b|⟦|‖|⟧`)

// soloTexts are the single-agent instances of a task: seeded N = 1 and the
// merged baselines of official N = 2 and N = 5 and of a seeded N = 3.
func soloTexts(t *testing.T, id string) []*Instance {
	t.Helper()
	one, err := Seeded(id, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := []*Instance{one}
	for _, src := range []func() (*Instance, error){
		func() (*Instance, error) { return Official(id, 2) },
		func() (*Instance, error) { return Official(id, 5) },
		func() (*Instance, error) { return Seeded(id, 3, 1) },
	} {
		in, err := src()
		if err != nil {
			t.Fatal(err)
		}
		m, err := Merged(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestSoloPrompts: no single-agent prompt mentions other agents, a team,
// an agent ordering or a topology (III-29 said "the others share the short
// ones"), and no wording mark survives in any template.
func TestSoloPrompts(t *testing.T) {
	for _, task := range All() {
		for _, in := range soloTexts(t, task.ID) {
			for _, hint := range []bool{true, false} {
				p := in.Prompt(0, hint)
				if m := peerWords.FindString(p); m != "" {
					t.Errorf("%s N=1 (merged from %d): prompt says %q:\n%s", task.ID, in.MergedFrom, m, p)
				}
				if strings.Contains(p, hintPrefix) || !strings.Contains(p, "You are agent 0 and work alone") ||
					!strings.Contains(p, in.ShardText(0)) {
					t.Errorf("%s N=1 (merged from %d): hint, identity or data wrong:\n%s", task.ID, in.MergedFrom, p)
				}
			}
		}
		team, _ := Seeded(task.ID, 4, 1)
		if strings.ContainsAny(team.Template, "⟦‖⟧") {
			t.Errorf("%s: wording marks left in a team template", task.ID)
		}
	}
}

// TestMerged: a merged baseline holds every item of the N = k instance in
// one shard, and its gold is the k-agent gold (global tasks) or all the
// segments in agent order (segmented tasks), which is also what SolveScaled
// gives on the merged data at k; Solve at N = 1 agrees except on the five
// tasks whose problem size is the team size (their text states k).
func TestMerged(t *testing.T) {
	for _, task := range All() {
		for _, k := range []int{2, 5, 20} {
			in, err := Official(task.ID, k)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Merged(in)
			if err != nil {
				t.Fatalf("%s k=%d: %v", task.ID, k, err)
			}
			if m.N != 1 || m.MergedFrom != k || m.Mode != ModeOfficial || len(m.Shards) != 1 || len(m.Expected) != 1 {
				t.Fatalf("%s k=%d: merged instance %+v", task.ID, k, m)
			}
			if !task.Segmented && !bytes.Equal(m.Expected[0], in.Expected[0]) {
				t.Errorf("%s k=%d: merged gold %s, want the k-agent gold %s", task.ID, k, m.Expected[0], in.Expected[0])
			}
			if task.Segmented {
				var cat []byte
				for i, g := range in.Expected {
					if i > 0 {
						cat = append(cat, ',')
					}
					cat = append(cat, bytes.Trim(g, "[]")...)
				}
				if want := "[" + string(cat) + "]"; string(m.Expected[0]) != want {
					t.Errorf("%s k=%d: merged gold %.80s…, want the segments in order %.80s…", task.ID, k, m.Expected[0], want)
				}
			}
			got, err := m.Solve() // SolveScaled at k
			if err != nil || len(got) != 1 || !bytes.Equal(got[0], m.Expected[0]) {
				t.Errorf("%s k=%d: Solve on the merged shard gives %q, %v; gold %.80s", task.ID, k, got, err, m.Expected[0])
			}
			// Solve at N = 1 agrees too, except where the task takes a
			// problem size from the team size.
			plain, err := Solve(task, m.Shards, m.Params)
			scaled := slices.Contains([]string{"III-23", "III-24", "III-28", "III-29", "III-30"}, task.ID)
			if ok := err == nil && bytes.Equal(plain[0], m.Expected[0]); ok == scaled {
				t.Errorf("%s k=%d: Solve at N = 1 gives %q, %v; gold %.80s", task.ID, k, plain, err, m.Expected[0])
			}
			if task.ID == "III-29" && !strings.Contains(m.Prompt(0, true), " machines are numbered 0 to "+strconv.Itoa(k-1)+".") {
				t.Errorf("III-29 k=%d: the merged text must schedule on %d machines:\n%s", k, k, m.Prompt(0, true))
			}
			// Every item of every agent is in the merged shard's text.
			for i := range in.N {
				if !strings.Contains(m.ShardText(0), strings.Trim(in.ShardText(i), "[]")) && task.ID != "III-27" && task.ID != "III-30" {
					t.Errorf("%s k=%d: agent %d's data missing from the merged shard", task.ID, k, i)
				}
			}
		}
	}
	if _, err := Merged(nil); err == nil {
		t.Error("Merged(nil) gave no error")
	}
	one, _ := Seeded("I-01", 1, 1)
	if _, err := Merged(one); err == nil {
		t.Error("Merged of a single-agent instance gave no error")
	}
}
