package harness

import (
	"context"
	"math"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// TestTallyAgreesWithEngine: the scorer's reading of the trace gives,
// bit for bit, the figures the engine's own accounting gives, on every
// reported instance and built-in paradigm, with the rule and the random
// controller, for finished and truncated episodes, with a tight power
// and WIP cap too: the metrics of live runs are what they were before
// the scorer read the trace. (WIP breaches never happen under the
// built-in paradigms, which offer no release beyond the cap.)
func TestTallyAgreesWithEngine(t *testing.T) {
	n := 0
	seen := map[string]int{} // episodes in which each figure is not zero: the test covers them
	for _, ref := range factory.BuiltinNames() {
		in, err := factory.Resolve(ref)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[string]func(*factory.Instance){
			"as is": func(*factory.Instance) {},
			"tight caps": func(in *factory.Instance) {
				in.Power.CapKW /= 3
				in.WIPCap = 2
			},
			"truncated": func(in *factory.Instance) { in.Limits.MaxDecisions = 40 },
		}
		for vname, vary := range variants {
			vin := *in
			vary(&vin)
			p := factory.Compile(&vin)
			for _, m := range coord.Builtins() {
				for _, ctl := range []string{"rule", "random"} {
					seed := vin.Seeds.Test[0]
					c, err := policy.New(ctl, seed)
					if err != nil {
						t.Fatal(err)
					}
					sc := &Scratch{}
					r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: m, Controller: c, Scratch: sc})
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					name := ref + " " + vname + " " + m.ID + " " + ctl
					engineAgrees(t, name, sc.eng, r.Metrics)
					n++
					v, s := r.Metrics.Violations, r.Metrics.Secondary
					for k, x := range map[string]int{"units": v.PowerOvershootUnits, "blocking": v.Blocking, "wip": v.WIP,
						"reroutes": s.Reroutes, "breakdowns": s.Breakdowns, "truncated": r.Metrics.GTr, "overdue": int(r.Metrics.GUt), "tardy": int(r.Metrics.GTd)} {
						if x != 0 {
							seen[k]++
						}
					}
				}
			}
		}
	}
	t.Logf("%d episodes; not zero in: %v", n, seen)
	for _, k := range []string{"units", "blocking", "reroutes", "breakdowns", "truncated", "overdue", "tardy"} {
		if seen[k] == 0 {
			t.Errorf("no episode has %s: the comparison does not cover it", k)
		}
	}
}

// engineAgrees compares m with the engine's accounting, exactly.
func engineAgrees(t *testing.T, name string, e *factory.Engine, m Metrics) {
	t.Helper()
	a, d := e.Acc, e.Debt()
	f := func(key string, got, want float64) {
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: %s: scorer %v, engine %v", name, key, got, want)
		}
	}
	i := func(key string, got, want int) {
		if got != want {
			t.Errorf("%s: %s: scorer %d, engine %d", name, key, got, want)
		}
	}
	if m.Status != string(e.Status()) {
		t.Errorf("%s: status: scorer %s, engine %s", name, m.Status, e.Status())
	}
	f("G_mk", m.GMk, e.Now())
	f("G_td", m.GTd, a.Tardiness)
	i("G_cj", m.GCj, a.Completed)
	f("G_eo", m.GEo, a.OvershootKWh)
	f("G_ed", m.GEd, a.OvershootTime)
	f("G_en", m.GEn, a.EnergyKWh)
	i("G_dj", m.GDj, d.Jobs)
	f("G_ut", m.GUt, d.Overdue)
	i("G_do", m.GDo, d.Ops)
	i("units", m.Violations.PowerOvershootUnits, a.PowerOvershootUnits)
	i("entries", m.Violations.PowerOvershootEntries, a.PowerOvershootEntries)
	i("blocking", m.Violations.Blocking, a.BlockingIncidents)
	i("wip", m.Violations.WIP, a.WIPViolations)
	i("G_vc", m.GVc, a.PowerOvershootUnits+a.BlockingIncidents+a.WIPViolations)
	f("carbon_kg", m.Secondary.CarbonKg, a.EnergyKWh*e.P.Inst.Power.CarbonKgPerKWh)
	i("breakdowns", m.Secondary.Breakdowns, a.Breakdowns)
	i("reroutes", m.Secondary.Reroutes, a.Reroutes)
	i("jobs", m.Secondary.Jobs, e.NumJobs())
	tr := 0
	if e.Status().Truncated() {
		tr = 1
	}
	i("G_tr", m.GTr, tr)
}
