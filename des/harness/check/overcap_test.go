package check

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// overcapRun plays the overcap test instance (one machine whose busy draw
// alone is above the cap) with the given operation time and order book
// under every paradigm, checks each run directory, and returns the
// metrics, which are the same under every paradigm (one cell, one route).
func overcapRun(t *testing.T, opTime float64, orders ...factory.Order) harness.Metrics {
	t.Helper()
	in, err := factory.LoadFile(filepath.Join("..", "..", "factory", "testdata", "overcap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in.Products[0].Route[0].Time = opTime
	if len(orders) > 0 {
		in.Arrivals.Orders = orders
	}
	p := factory.Compile(in)
	var first *harness.Metrics
	for _, mode := range coord.Builtins() {
		dir := t.TempDir()
		res, err := harness.RunToDir(context.Background(), harness.Episode{Plant: p, Seed: 1, Mode: mode,
			Controller: controller(t, "rule", 1)}, dir)
		if err != nil {
			t.Fatalf("op time %v, %s: %v", opTime, mode.ID, err)
		}
		rep, err := Dir(dir)
		if err != nil {
			t.Fatalf("op time %v, %s: check: %v", opTime, mode.ID, err)
		}
		if !rep.OK() {
			t.Fatalf("op time %v, %s: the re-checker disagrees:%s", opTime, mode.ID, problemsText(rep, 10))
		}
		m := res.Metrics
		if m.Status != "done" {
			t.Fatalf("op time %v, %s: status %s", opTime, mode.ID, m.Status)
		}
		if first == nil {
			first = &m
		} else if m.GVc != first.GVc || m.Violations != first.Violations {
			t.Fatalf("op time %v: %s gives G_vc %d %+v, %s %d %+v", opTime, mode.ID, m.GVc, m.Violations,
				coord.Builtins()[0].ID, first.GVc, first.Violations)
		}
	}
	return *first
}

// TestGVcGrowsWithTimeOverCap: G_vc counts every time unit the plant
// spends over its cap, so a longer stay over the cap never lowers it,
// while the entries into overshoot (secondary) stay at one.
func TestGVcGrowsWithTimeOverCap(t *testing.T) {
	// The job reaches the machine at t=1.5 (dock transport) and holds it
	// over the cap for exactly the operation time.
	const start = 1.5
	prev := -1
	for _, op := range []float64{0.25, 0.5, 1, 1.25, 2, 3.5, 10, 10.5, 40} {
		m := overcapRun(t, op)
		if m.GEd != op {
			t.Fatalf("op time %v: G_ed %v, want the operation time", op, m.GEd)
		}
		units := int(math.Ceil(start+op) - math.Floor(start))
		v := m.Violations
		if v.PowerOvershootUnits != units || v.PowerOvershootEntries != 1 || v.Blocking != 0 || v.WIP != 0 {
			t.Fatalf("op time %v: violations %+v, want %d units over the cap from one entry", op, v, units)
		}
		if m.GVc != v.Total() || float64(m.GVc) < math.Ceil(m.GEd) {
			t.Fatalf("op time %v: G_vc %d, violations %+v, G_ed %v", op, m.GVc, v, m.GEd)
		}
		if m.GVc < prev {
			t.Fatalf("op time %v: G_vc %d fell below %d, the value with less time over the cap", op, m.GVc, prev)
		}
		prev = m.GVc
	}
}

// TestGVcCountsTimeNotEntries: one long stay over the cap outweighs two
// short ones, and two stays within one time unit count that unit once.
func TestGVcCountsTimeNotEntries(t *testing.T) {
	long := overcapRun(t, 10)
	short := overcapRun(t, 1, factory.Order{Product: "P", Arrival: 0}, factory.Order{Product: "P", Arrival: 20})
	if short.Violations.PowerOvershootEntries != 2 || long.Violations.PowerOvershootEntries != 1 {
		t.Fatalf("entries: short %+v, long %+v", short.Violations, long.Violations)
	}
	if long.GVc <= short.GVc {
		t.Fatalf("G_vc of 10 time units over the cap (%d) is not above that of 2 (%d)", long.GVc, short.GVc)
	}
	// Over the cap on [1.5, 1.6) and [1.8, 1.9): two entries, one unit.
	twice := overcapRun(t, 0.1, factory.Order{Product: "P", Arrival: 0}, factory.Order{Product: "P", Arrival: 0.3})
	if v := twice.Violations; v.PowerOvershootEntries != 2 || v.PowerOvershootUnits != 1 || twice.GVc != 1 {
		t.Fatalf("two stays within one unit: G_vc %d, violations %+v", twice.GVc, v)
	}
}
