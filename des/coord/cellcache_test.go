package coord

import (
	"math/rand/v2"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
)

// TestCellSummariesFollowTheEngine: the interpreter keeps cell summaries
// (and the plant view's area summaries, by area version)
// from one decision to the next while a cell's version (and, for a cell
// at work, the clock) stays the same. At every decision of episodes under
// every paradigm, with random legal answers (so that jobs block, reroute
// and queue), each cell's summary as the interpreter serves it must be
// the engine's summary of the moment. The episodes must include decisions
// at the same instant as the previous one after a cell changed (the case
// a cache keyed by the clock alone gets wrong), and summaries actually
// served from the cache.
func TestCellSummariesFollowTheEngine(t *testing.T) {
	sameInstantChanges, kept, areasChecked, areasKept := 0, 0, 0, 0
	for _, ref := range []string{"A5C12-1", "A3C9-1", "gen:A4C8J7"} {
		for _, m := range Builtins() {
			for seed := uint64(1); seed <= 3; seed++ {
				e := engine(t, ref, seed)
				in, err := NewInterpreter(e, m)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(seed, 7))
				var prev []factory.CellInfo
				prevT := -1.0
				for steps := 0; e.Advance() && steps < 5000; steps++ {
					d := in.Next()
					if d == nil {
						t.Fatalf("%s %s seed %d: no decision: %v", ref, m.ID, seed, in.Err())
					}
					for c := range e.P.Cells {
						wasKept := in.cells[c].kept && in.cells[c].gen != in.gen
						verBefore := in.cells[c].ver
						got, want := *in.cellInfo(c), e.Cell(c)
						if got != want {
							t.Fatalf("%s %s seed %d step %d t=%g cell %d: interpreter serves %+v, engine has %+v",
								ref, m.ID, seed, d.Step, e.Now(), c, got, want)
						}
						if wasKept && in.cells[c].ver == verBefore && in.cells[c].at != e.Now() {
							kept++ // served from an earlier decision's summary
						}
						if d.Time == prevT && prev[c] != want {
							sameInstantChanges++
						}
					}
					if v := d.ActiveAgents[RolePlant]; v != nil && v.Observation.Plant != nil {
						checkAreaSummaries(t, e, in, v.Observation.Plant.Areas)
						areasChecked++
						for a := range in.areas {
							if in.areas[a].at != e.Now() {
								areasKept++ // served from an earlier decision's summary
							}
						}
					}
					prev, prevT = prev[:0], d.Time
					for c := range e.P.Cells {
						prev = append(prev, e.Cell(c))
					}
					actions := map[string]int{}
					for id, v := range d.ActiveAgents {
						actions[id] = v.LegalActions[r.IntN(len(v.LegalActions))]
					}
					if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	if areasChecked == 0 || areasKept == 0 {
		t.Fatalf("the area summaries went untested: %d plant views, %d summaries kept", areasChecked, areasKept)
	}
	if sameInstantChanges == 0 || kept == 0 {
		t.Fatalf("the episodes did not exercise the cache: %d same-instant changes, %d summaries kept", sameInstantChanges, kept)
	}
	t.Logf("%d same-instant cell changes, %d summaries served from an earlier decision; %d plant views, %d area summaries kept",
		sameInstantChanges, kept, areasChecked, areasKept)
}

// checkAreaSummaries compares the plant view's area summaries with sums
// of the engine's cell summaries of the moment, in the areas' cell order.
func checkAreaSummaries(t *testing.T, e *factory.Engine, in *Interpreter, got []AreaSummary) {
	t.Helper()
	p := e.P
	if len(got) != len(p.Areas) {
		t.Fatalf("t=%g: %d area summaries for %d areas", e.Now(), len(got), len(p.Areas))
	}
	for a, area := range p.Areas {
		want := AreaSummary{Area: area.ID, Cells: len(area.Cells)}
		var w int64
		for _, c := range area.Cells {
			ci := e.Cell(c)
			want.Machines += p.Cells[c].Machines
			want.Busy += ci.Busy + ci.Setup
			want.Down += ci.Down
			want.Blocked += ci.Blocked
			want.FreeSlots += ci.FreeSlots
			want.Backlog += ci.Backlog
			w += ci.PowerW
		}
		want.Backlog = round2(want.Backlog)
		want.PowerKW = float64(w) / 1000
		if got[a] != want {
			t.Fatalf("t=%g area %s: the plant view shows %+v, the engine has %+v", e.Now(), area.ID, got[a], want)
		}
	}
}
