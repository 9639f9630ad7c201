package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// refuser answers every activation with a refusal when it has one
// (escalate, reject, decline), else with the first legal action: the
// controller that must not be rewarded for refusing to decide.
type refuser struct{}

func (refuser) Name() string         { return "refuser" }
func (refuser) Source() coord.Source { return coord.SourceBuiltin }
func (refuser) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	out := make(map[string]int, len(d.ActiveAgents))
	for id, v := range d.ActiveAgents {
		out[id] = v.LegalActions[0]
		for _, i := range v.LegalActions {
			if a := v.Options[i].Action; a == coord.ActEscalate || a == coord.ActReject || a == coord.ActDecline {
				out[id] = i
				break
			}
		}
	}
	return out, nil
}

// TestRefusingIsAttributed: no work is placed without a decision step, and
// what the harness places for a controller that refuses everything is
// audited as a fallback with its reason: G_fb is at least the number of
// harness placements under every paradigm on every reported instance, and
// under every paradigm that lets agents refuse whatever the plant's state
// (contract net, holonic: cells reject), refusing shows.
func TestRefusingIsAttributed(t *testing.T) {
	for _, ref := range factory.BuiltinNames() {
		p := plantOf(t, ref)
		seed := p.Inst.Seeds.Test[0]
		for _, m := range coord.Builtins() {
			t.Run(fmt.Sprintf("%s/%s", ref, m.ID), func(t *testing.T) {
				var dec bytes.Buffer
				r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: m, Controller: refuser{}, Decisions: &dec})
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				placed, activations := 0, 0
				for line := range bytes.Lines(dec.Bytes()) {
					var a coord.Audit
					if err := json.Unmarshal(line, &a); err != nil {
						t.Fatal(err)
					}
					if a.Kind != coord.KindPlantFallback {
						continue
					}
					activations++
					if a.Source == coord.SourceFallback {
						placed++
						if a.Reason != "the plant declined the fallback placement" || a.Requested == nil {
							t.Fatalf("step %d: harness placement without its reason: %+v", a.Step, a)
						}
					}
				}
				mt := r.Metrics
				if mt.GFb < placed || activations != mt.Secondary.ForcedAssignments {
					t.Fatalf("G_fb %d, harness placements %d, plant fallbacks %d (secondary %d)", mt.GFb, placed, activations, mt.Secondary.ForcedAssignments)
				}
				// Under centralized nothing can be refused; under hierarchical
				// (accept-only cells) an area may escalate only when none of
				// its cells can take the item, so the refuser must place
				// locally, and its own placements are poor, not the harness's.
				refusable := m.ID != coord.Centralized().ID && m.ID != coord.Hierarchical().ID
				if refusable && mt.GFb == 0 && mt.GTr == 0 {
					t.Fatalf("a controller that refuses everything ran clean: %+v", mt)
				}
				t.Logf("G_fb %d of G_ds %d, harness placements %d, completed %d, truncated %d", mt.GFb, mt.GDs, placed, mt.GCj, mt.GTr)
			})
		}
	}
}
