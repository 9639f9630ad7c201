package coord

import (
	"testing"

	"github.com/coordbench/coordbench/des/factory"
)

// TestStepLimitPlacementIsTheHarness: an item that the protocol's step
// bound, not an exhausted protocol, sends to the plant-level fallback
// still activates the plant, but the plant did not earn the placement:
// its legal answer is replaced by the contract-safe rule and audited as a
// fallback (G_fb) with the step-limit reason (docs/paradigms.md,
// "Escalation").
func TestStepLimitPlacementIsTheHarness(t *testing.T) {
	inst, err := factory.LoadFile("testdata/two_areas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng := factory.NewEngine(factory.Compile(inst), 1)
	in, err := NewInterpreter(eng, HolonicHybrid())
	if err != nil {
		t.Fatal(err)
	}
	step := func(answer func(v *View) int) []Audit {
		t.Helper()
		if !eng.Advance() {
			t.Fatal("the episode ended early")
		}
		d := in.Next()
		acts := map[string]int{}
		for id, v := range d.ActiveAgents {
			acts[id] = answer(v)
		}
		audits, err := in.Apply(d, acts, SourceBuiltin, nil)
		if err != nil {
			t.Fatal(err)
		}
		return audits
	}
	first := func(*View) int { return 0 }
	step(first) // release job 0
	step(first) // the plant allocates A1
	// A1 assigns C1 as its item's last step within the bound: the
	// protocol is cut with C1's commit (and C2) still to come.
	in.item.steps = in.maxItemSteps() - 1
	step(first)
	if in.item.stage != stPlantFallback || !in.item.cut {
		t.Fatalf("stage %d cut %v: the step bound did not send the item to the plant", in.item.stage, in.item.cut)
	}
	var want int
	audits := step(func(v *View) int {
		if v.Kind != KindPlantFallback {
			t.Fatalf("%s %s, want plant_fallback", v.AgentID, v.Kind)
		}
		want = SafeAction(v)
		return len(v.Options) - 2 // the last cell, C3: legal, not the safe one
	})
	a := audits[0]
	if a.Source != SourceFallback || a.Reason != ReasonStepLimit || a.Requested == nil || *a.Requested != len(a.Payload.Options)-2 || a.Action != want || want == *a.Requested {
		t.Errorf("the step-limit placement is audited as %+v (safe action %d)", a, want)
	}
}
