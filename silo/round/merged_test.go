package round

import (
	"fmt"
	"testing"

	"github.com/coordbench/coordbench/silo/task"
)

// TestMergedBaseline: every scripted team of one agent solves the merged
// baseline of every task (official N = 5 and seeded N = 3), under every
// protocol: the single agent answers the N = k question (k nodes'
// worth of graph, k machines, a k×k matrix) from the merged data.
func TestMergedBaseline(t *testing.T) {
	for _, tk := range task.All() {
		srcs := []*task.Instance{seeded(t, tk.ID, 3, 1)}
		if in, err := task.Official(tk.ID, 5); err == nil {
			srcs = append(srcs, in)
		}
		for _, src := range srcs {
			m, err := task.Merged(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range protocols {
				for _, team := range teamNames {
					agents, _ := NewTeamByName(team, 1)
					res := mustRun(t, Config{Instance: m, Protocol: p}, agents)
					label := fmt.Sprintf("%s merged from %s N=%d, %s, %s", tk.ID, src.Mode, src.N, p, team)
					checkPerfect(t, label, res)
					if res.MergedFrom != src.N || res.N != 1 {
						t.Errorf("%s: result N %d merged_from %d", label, res.N, res.MergedFrom)
					}
				}
			}
		}
	}
}
