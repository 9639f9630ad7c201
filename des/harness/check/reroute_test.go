package check

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// TestNoAvoidableDeadlock: random controllers on every reported instance
// under every paradigm. Blocked items are offered to routing again, the
// re-checker finds no deadlock in which a blocked item had a capable cell
// with room and was never offered the re-route, and no offer made without
// such a cell; offers happen.
func TestNoAvoidableDeadlock(t *testing.T) {
	reroutes, deadlocks, runs := 0, 0, 0
	for _, inst := range factory.BuiltinNames() {
		p := plant(t, inst)
		for _, m := range coord.Builtins() {
			for _, seed := range p.Inst.Seeds.Test[:min(3, len(p.Inst.Seeds.Test))] {
				var tr bytes.Buffer
				r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: seed, Mode: m,
					Controller: controller(t, "random", seed), Trace: &tr})
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				rep, err := Trace(&tr, p.Inst)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/seed %d", inst, m.ID, seed)
				if !rep.OK() {
					t.Errorf("%s:%s", name, problemsText(rep, 5))
				}
				runs++
				reroutes += r.Metrics.Secondary.Reroutes
				if r.Metrics.Status == string(factory.Deadlock) {
					deadlocks++
				}
			}
		}
	}
	t.Logf("%d runs: %d re-route offers, %d deadlocks", runs, reroutes, deadlocks)
	if reroutes == 0 {
		t.Fatal("no blocked item was ever offered a re-route")
	}
}
