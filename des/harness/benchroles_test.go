package harness

import (
	"context"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

func ruleMaker(uint64) coord.Controller { return policy.Rule{} }

// largestArea is the number of cells of p's largest area: the most an
// area agent's view may read.
func largestArea(p *factory.Plant) int {
	n := 0
	for _, a := range p.Areas {
		n = max(n, len(a.Cells))
	}
	return n
}

// TestLocalStepCostIndependentOfPlantSize: the decision steps in which
// only area and cell agents are active cost what their views show, at
// every plant size. Counted, not timed: per local view the cells read
// (coord.Interpreter.CellReads) stay within the largest area's cells, and
// the heap allocations stay near zero (a block of memory lines now and
// then), on A5C12-1 and on a generated plant 5.3 times its size, while
// the plant's steps read more cells on the larger plant (they show every
// area, by design). docs/performance.md ("Plant size") has the
// instruction counts up to gen:A64C256.
func TestLocalStepCostIndependentOfPlantSize(t *testing.T) {
	refs := []string{"A5C12-1", "gen:A16C64"}
	for _, m := range []coord.AuthorityMode{coord.Hierarchical(), coord.HeterarchicalCNP(), coord.HolonicHybrid()} {
		plantReads := make([]float64, len(refs))
		for i, ref := range refs {
			p := plantOf(t, ref)
			rc, err := MeasureRoles(context.Background(), p, m, ruleMaker, 1, RoleOptions{Allocs: true})
			if err != nil {
				t.Fatal(err)
			}
			// The count is the process's: goroutines other tests left
			// behind can only add to it. The fewest of three runs of the
			// same episode is the episode's own.
			for range 2 {
				again, err := MeasureRoles(context.Background(), p, m, ruleMaker, 1, RoleOptions{Allocs: true})
				if err != nil {
					t.Fatal(err)
				}
				rc.Local.Allocs = min(rc.Local.Allocs, again.Local.Allocs)
			}
			l := rc.Local
			if l.Decisions == 0 || l.Views < l.Decisions || rc.Plant.Decisions == 0 {
				t.Fatalf("%s %s: %d local steps with %d views, %d plant steps", ref, m.ID, l.Decisions, l.Views, rc.Plant.Decisions)
			}
			views := float64(l.Views)
			if reads, bound := float64(l.CellReads)/views, float64(largestArea(p)); reads > bound {
				t.Errorf("%s %s: %.2f cells read per local view, more than the largest area's %.0f", ref, m.ID, reads, bound)
			}
			if a := float64(l.Allocs) / views; a > 0.05 {
				t.Errorf("%s %s: %.3f allocations per local view (%d in %d views)", ref, m.ID, a, l.Allocs, l.Views)
			}
			plantReads[i] = float64(rc.Plant.CellReads) / float64(rc.Plant.Decisions)
		}
		if !(plantReads[1] > 2*plantReads[0]) {
			t.Errorf("%s: plant steps read %.1f cells on %s and %.1f on %s: the count does not see plant-wide views", m.ID, plantReads[0], refs[0], plantReads[1], refs[1])
		}
	}
}

// TestMeasureRolesPlaysRun: MeasureRoles's loop is Run's. Its steps, plant
// and local, are the episode's decision steps (G_ds), and a centralized
// episode has no local step.
func TestMeasureRolesPlaysRun(t *testing.T) {
	p := plantOf(t, "A3C9-1")
	for _, m := range coord.Builtins() {
		for _, seed := range []uint64{1, 2} {
			r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: m, Controller: policy.Rule{}})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			// Episodes 1..seed: the last one is this seed's.
			prev, err := MeasureRoles(context.Background(), p, m, ruleMaker, int(seed)-1, RoleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := MeasureRoles(context.Background(), p, m, ruleMaker, int(seed), RoleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			steps := rc.Plant.Decisions + rc.Local.Decisions - prev.Plant.Decisions - prev.Local.Decisions
			if steps != r.Metrics.GDs {
				t.Errorf("%s seed %d: %d steps measured, G_ds %d", m.ID, seed, steps, r.Metrics.GDs)
			}
			if m.ID == coord.Centralized().ID && rc.Local.Decisions != 0 {
				t.Errorf("centralized: %d local steps", rc.Local.Decisions)
			}
			if rc.Local.Allocs != 0 || rc.Plant.Allocs != 0 {
				t.Errorf("%s: allocations counted without RoleOptions.Allocs", m.ID)
			}
		}
	}
}

// BenchmarkRoles splits the rule controller's decision steps by role
// level on the plants of the scaling table: wall time per plant step and
// per local step, and cells read per local view. Instructions per step:
// `coordbench des bench --by-role` under callgrind (docs/performance.md).
//
//	go test ./des/harness -run XXX -bench Roles -benchtime 3x
func BenchmarkRoles(b *testing.B) {
	for _, ref := range episodeRefs {
		for _, m := range []coord.AuthorityMode{coord.Hierarchical(), coord.HolonicHybrid()} {
			b.Run(ref+"/"+m.ID, func(b *testing.B) {
				p := plantOf(b, ref)
				var plant, local LevelCost
				for b.Loop() {
					rc, err := MeasureRoles(context.Background(), p, m, ruleMaker, 1, RoleOptions{})
					if err != nil {
						b.Fatal(err)
					}
					plant, local = addLevel(plant, rc.Plant), addLevel(local, rc.Local)
				}
				b.ReportMetric(plant.NsPerDecision(), "ns/plant-step")
				b.ReportMetric(local.NsPerDecision(), "ns/local-step")
				b.ReportMetric(float64(local.CellReads)/float64(max(local.Views, 1)), "cells/local-view")
			})
		}
	}
}

func addLevel(a, b LevelCost) LevelCost {
	return LevelCost{Decisions: a.Decisions + b.Decisions, Views: a.Views + b.Views, CellReads: a.CellReads + b.CellReads,
		ObserveSeconds: a.ObserveSeconds + b.ObserveSeconds, ActSeconds: a.ActSeconds + b.ActSeconds, Allocs: a.Allocs + b.Allocs}
}
