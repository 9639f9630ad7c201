package factory

import (
	"strings"
	"testing"
)

// twoDrills: jobs are cut on C1 (two machines, so both finish together)
// and then drilled on C2 or C3, whose buffers hold one job each: the
// second job to be routed to C2 finds it full while C3 has room.
const twoDrills = `
format: coordbench-instance/v1
name: two-drills
time_unit_s: 1
horizon: 1000
processing_noise: 0
power: {cap_kw: 50, carbon_kg_per_kwh: 0.5, transport_kw: 1}
wip_cap: 2
setup: {initial: 2, change: 3}
transport: {intra_area: 1, inter_area: 4, dock: 2}
cell_defaults:
  machines: 1
  buffer: 1
  power_kw: {idle: 0.5, setup: 1, busy: 2, blocked: 1, down: 0}
areas:
  - id: A1
    cells:
      - {id: C1, machines: 2, buffer: 2, capabilities: {cut: 1.0}}
  - id: A2
    cells:
      - {id: C2, capabilities: {drill: 1.0}}
      - {id: C3, capabilities: {drill: 1.0}}
products:
  - {id: P, family: F, route: [{op: cut, time: 10}, {op: drill, time: 50}]}
arrivals:
  orders:
    - {product: P, arrival: 0}
    - {product: P, arrival: 0}
due_slack: 2
seeds:
  test: [1]
`

func twoDrillsEngine(t *testing.T) *Engine {
	t.Helper()
	in, err := Parse("two-drills", []byte(twoDrills))
	if err != nil {
		t.Fatal(err)
	}
	return NewEngine(Compile(in), 1)
}

// TestBlockedItemIsOfferedAgain: a job committed to a full cell while a
// capable cell has room goes back to routing at once (blocking_release,
// stage_release_ready), names the cell it left, and can go elsewhere.
func TestBlockedItemIsOfferedAgain(t *testing.T) {
	e := twoDrillsEngine(t)
	script(t, e,
		"release 0", "assign 0 C1", "release 1", "assign 1 C1",
		"assign 0 C2", // t=14: both cut; job 0 takes C2's only slot
		"assign 1 C2", // job 1 blocks on C2 while C3 has room ...
		"assign 1 C3", // ... is offered again at once, and moves to C3
	)
	if e.Acc.BlockingIncidents != 1 || e.Acc.Reroutes != 1 || e.Status() != Done {
		t.Fatalf("incidents %d, reroutes %d, status %s", e.Acc.BlockingIncidents, e.Acc.Reroutes, e.Status())
	}
	trace := string(traceText(e))
	want := `"ev":"blocked","job":1,"op":1,"cell":"C2"`
	i := strings.Index(trace, want)
	if i < 0 {
		t.Fatalf("no %s in\n%s", want, trace)
	}
	rest := trace[i:]
	for _, w := range []string{`"ev":"blocking_release","job":1,"op":1,"cell":"C2"`, `"ev":"stage_release_ready","job":1,"op":1`,
		`"ev":"route_assigned","job":1,"op":1,"cell":"C3"`, `"ev":"admission","job":1,"op":1,"cell":"C3"`} {
		k := strings.Index(rest, w)
		if k < 0 {
			t.Fatalf("after the blocking, want %s in order; trace:\n%s", w, trace)
		}
		rest = rest[k:]
	}
}

// TestRerouteOfferIsBounded: a controller that keeps the job on its full
// cell is not asked again until some capable cell gains room; the job
// then waits its turn on C2 and the episode completes.
func TestRerouteOfferIsBounded(t *testing.T) {
	e := twoDrillsEngine(t)
	var whys []string
	steps := []string{"release 0", "assign 0 C1", "release 1", "assign 1 C1", "assign 0 C2", "assign 1 C2"}
	for _, s := range steps {
		scriptStep(t, e, s)
	}
	// Job 1 is offered again (C3 has room) ...
	if !e.Advance() || len(e.RouteQueue()) != 1 || e.RouteQueue()[0] != 1 {
		t.Fatalf("job 1 not offered again: routeQ %v", e.RouteQueue())
	}
	why, from, ok := e.Reroute(1)
	if !ok || why != RerouteRoom || e.P.Cells[from].ID != "C2" {
		t.Fatalf("Reroute(1) = %q, %d, %v", why, from, ok)
	}
	whys = append(whys, why)
	// ... keeps C2 (no new incident), and is not asked again: the episode
	// runs to its end.
	if err := e.Assign(1, from); err != nil {
		t.Fatal(err)
	}
	if e.Advance() {
		t.Fatalf("a decision is pending at t=%g (routeQ %v): the kept job was offered again", e.Now(), e.RouteQueue())
	}
	if e.Status() != Done || e.Acc.BlockingIncidents != 1 || e.Acc.Reroutes != 1 {
		t.Fatalf("status %s, incidents %d, reroutes %d (%v)", e.Status(), e.Acc.BlockingIncidents, e.Acc.Reroutes, whys)
	}
}
