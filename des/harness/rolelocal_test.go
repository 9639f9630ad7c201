package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// TestBuiltinsTellParadigmsApart: the built-in rule and greedy controllers
// act on role-local information (a cell on its own state, an area on its
// own cells, the plant on area summaries or bids), so the same controller
// decides differently under each paradigm. On every reported instance and
// test seed the four built-in paradigms give pairwise different traces.
// Before, greedy gave one trace for all four and rule the same trace for
// hierarchical and holonic_hybrid: the paradigm table showed fixed
// per-item message counts, not coordination.
func TestBuiltinsTellParadigmsApart(t *testing.T) {
	if testing.Short() {
		t.Skip("320 episodes")
	}
	for _, ctrl := range []coord.Controller{policy.Rule{}, policy.Greedy{}} {
		for _, ref := range factory.BuiltinNames() {
			p := plantOf(t, ref)
			for _, s := range p.Inst.Seeds.Test {
				sums := map[[32]byte]string{}
				for _, m := range coord.Builtins() {
					var buf bytes.Buffer
					r := Run(context.Background(), Episode{Plant: p, Seed: s, Mode: m, Controller: ctrl, Trace: &buf})
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					h := sha256.Sum256(buf.Bytes())
					if other, dup := sums[h]; dup {
						t.Errorf("%s %s seed %d: %s and %s give the same trace", ctrl.Name(), ref, s, other, m.ID)
						continue
					}
					sums[h] = m.ID
				}
			}
		}
	}
}
