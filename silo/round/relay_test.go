package round

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

func levelTasks(level int) []*task.Task {
	var out []*task.Task
	for _, tk := range task.All() {
		if tk.Level == level {
			out = append(out, tk)
		}
	}
	return out
}

var relayStrategies = []struct {
	name  string
	level int
	team  func(int) []Agent
}{
	{"tree", 1, NewTreeTeam},
	{"chain", 2, NewChainTeam},
}

// TestRelaySeeded: the tree team solves every Level I task and the chain
// team every Level II task under all three protocols for N in
// {1, 2, 5, 10, 20}, within the default caps.
func TestRelaySeeded(t *testing.T) {
	ns := []int{1, 2, 5, 10, 20}
	if testing.Short() {
		ns = []int{1, 5, 20}
	}
	for _, st := range relayStrategies {
		for _, tk := range levelTasks(st.level) {
			for _, n := range ns {
				if m := tk.MaxAgents(); m > 0 && n > m {
					continue
				}
				in := seeded(t, tk.ID, n, 7)
				for _, p := range protocols {
					res := mustRun(t, Config{Instance: in, Protocol: p}, st.team(n))
					checkPerfect(t, fmt.Sprintf("%s %s N=%d %s", st.name, tk.ID, n, p), res)
				}
			}
		}
	}
}

// TestRelayTable logs rounds and D of each strategy against the star
// reference at N=20 (max over the level's tasks, mean D).
func TestRelayTable(t *testing.T) {
	const n = 20
	for _, st := range relayStrategies {
		for _, p := range protocols {
			var rs, rr, cs, cr int
			var ds, dr float64
			tasks := levelTasks(st.level)
			for _, tk := range tasks {
				in := seeded(t, tk.ID, n, 7)
				star := mustRun(t, Config{Instance: in, Protocol: p}, NewReferenceTeam(n))
				rel := mustRun(t, Config{Instance: in, Protocol: p}, st.team(n))
				checkPerfect(t, fmt.Sprintf("%s %s %s", st.name, tk.ID, p), rel)
				rs, rr = max(rs, star.Rounds), max(rr, rel.Rounds)
				cs, cr = cs+star.ToolCalls, cr+rel.ToolCalls
				ds, dr = ds+star.D, dr+rel.D
			}
			k := float64(len(tasks))
			t.Logf("level %d N=%d %-9s star: rounds %2d calls %6.1f D %.3f | %-5s: rounds %2d calls %6.1f D %.3f",
				st.level, n, p, rs, float64(cs)/k, ds/k, st.name, rr, float64(cr)/k, dr/k)
		}
	}
}

// TestRelayDeterminism: the same run twice gives the same Result.
func TestRelayDeterminism(t *testing.T) {
	for _, st := range relayStrategies {
		in := seeded(t, levelTasks(st.level)[0].ID, 9, 5)
		for _, p := range protocols {
			var js [2][]byte
			for k := range 2 {
				res := mustRun(t, Config{Instance: in, Protocol: p}, st.team(9))
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				js[k] = b
			}
			if !reflect.DeepEqual(js[0], js[1]) {
				t.Errorf("%s %s: results differ:\n%s\n%s", st.name, p, js[0], js[1])
			}
		}
	}
}

// TestRelaySmallLimits: a tight call cap and content limit spread the
// relay over more rounds and messages, still correct.
func TestRelaySmallLimits(t *testing.T) {
	for _, st := range relayStrategies {
		in := seeded(t, levelTasks(st.level)[0].ID, 7, 3)
		for _, p := range protocols {
			res := mustRun(t, Config{Instance: in, Protocol: p, MaxCallsPerTurn: 2}, st.team(7))
			checkPerfect(t, fmt.Sprintf("%s cap 2 %s", st.name, p), res)
			var sz int
			for _, s := range in.Shards {
				sz = max(sz, len(s))
			}
			res = mustRun(t, Config{Instance: in, Protocol: p, Options: proto.Options{MaxContentBytes: sz + 100}}, st.team(7))
			checkPerfect(t, fmt.Sprintf("%s small content %s", st.name, p), res)
			sent := res.Messages
			if p == proto.SFS {
				sent = res.CallsByTool[proto.ToolWriteFile]
			}
			if sent <= 2*6 { // one per tree edge each way if nothing split
				t.Errorf("%s small content %s: expected payloads split, got %d messages", st.name, p, sent)
			}
		}
	}
}
