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
// built-in paradigms, which offer no release beyond the cap.) The
// engine's accounting is that of des-metrics/1 (scored to the episode's
// end, time units of the instance's clock); the current rules give
// every finished episode the same metrics, and a truncated one the same
// but for its obligation to the horizon (currentFromV1).
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
					v1 := r.Metrics
					V1Scorer().Score(&sc.tally, Coordination{}, &v1)
					engineAgrees(t, name, sc.eng, v1)
					currentFromV1(t, name, vin.Horizon, v1, r.Metrics)
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

// currentFromV1 checks the current rules' metrics cur against the
// des-metrics/1 metrics v1 of the same episode (of an instance in
// seconds): equal for a finished episode; for a truncated one G_mk is
// the horizon, G_ut is at least v1's, and G_td adds it to the completed
// jobs' tardiness.
func currentFromV1(t *testing.T, name string, horizon float64, v1, cur Metrics) {
	t.Helper()
	want := v1
	if cur.GTr == 1 {
		want.GMk, want.GUt, want.GTd = horizon, cur.GUt, v1.GTd+cur.GUt
		if cur.GUt < v1.GUt {
			t.Errorf("%s: G_ut %v under the full obligation, %v to the end", name, cur.GUt, v1.GUt)
		}
	}
	if cur.GMk != want.GMk || cur.GTd != want.GTd || cur.GUt != want.GUt || cur.GVc != want.GVc || cur.Violations != want.Violations ||
		cur.GCj != want.GCj || cur.GDj != want.GDj || cur.GDo != want.GDo || cur.GEo != want.GEo || cur.GEd != want.GEd || cur.GEn != want.GEn {
		t.Errorf("%s: current rules %+v, want %+v", name, cur, want)
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

// TestOvershootSecondsInMinutes: an over-cap spell [123 s, 125 s) traced
// in minutes (123/60 × 60 is 122.99999999999999 in floating point) meets
// two seconds, as it does traced in seconds.
func TestOvershootSecondsInMinutes(t *testing.T) {
	for _, unit := range []float64{1, 60} {
		var ta Tally
		ta.Reset(TallyHeader{TimeUnitS: unit, CapKW: 1, WIPCap: 1, Horizon: 1000 / unit})
		for _, r := range []factory.Record{
			{Ev: factory.EvEpisodeStart, Job: 0},
			{T: 0, Ev: factory.EvPowerChange, KW: 0.5},
			{T: 123 / unit, Ev: factory.EvPowerChange, KW: 2},
			{T: 125 / unit, Ev: factory.EvPowerChange, KW: 0.5},
			{T: 130 / unit, Ev: factory.EvEpisodeEnd, Status: factory.Done},
		} {
			ta.Record(&r)
		}
		var m Metrics
		CurrentScorer().Score(&ta, Coordination{}, &m)
		if m.GVc != 2 || m.Violations.PowerOvershootUnits != 2 {
			t.Errorf("time unit %v s: G_vc %d, power_overshoot_units %d, want 2 seconds", unit, m.GVc, m.Violations.PowerOvershootUnits)
		}
	}
}
