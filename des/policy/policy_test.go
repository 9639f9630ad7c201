package policy

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
)

func routing(headroom float64, cells ...coord.CellOption) *coord.Decision {
	v := &coord.View{AgentID: "plant", Role: coord.RolePlant, Kind: coord.KindSelectCell}
	v.Observation.HeadroomKW = headroom
	for i := range cells {
		v.Options = append(v.Options, coord.Option{Index: i, Action: "assign", Cell: &cells[i]})
		v.LegalActions = append(v.LegalActions, i)
		v.ActionMask = append(v.ActionMask, true)
	}
	return &coord.Decision{ActiveAgents: map[string]*coord.View{"plant": v}}
}

func TestRuleVersusGreedyRouting(t *testing.T) {
	fastLoaded := coord.CellOption{Cell: "fast", Machines: 2, Idle: 1, ProcTime: 10, FreeSlots: 1, Backlog: 60, BusyKW: 7}
	slowFree := coord.CellOption{Cell: "slow", Machines: 1, Idle: 1, ProcTime: 25, FreeSlots: 3, Backlog: 0, BusyKW: 2.5}
	d := routing(20, fastLoaded, slowFree)
	if a, _ := (Greedy{}).Act(context.Background(), d); a["plant"] != 0 {
		t.Errorf("greedy chose %d, want the fastest cell 0 whatever its queue", a["plant"])
	}
	if a, _ := (Rule{}).Act(context.Background(), d); a["plant"] != 1 {
		t.Errorf("rule chose %d, want the unloaded cell 1", a["plant"])
	}
	// Greedy's plant routes to the fastest cell even when it is full; an
	// area, which manages its cells' buffers, takes its fastest free one.
	fastFull := coord.CellOption{Cell: "fast", Machines: 1, ProcTime: 10, FreeSlots: 0, Backlog: 40, BusyKW: 7}
	d = routing(20, fastFull, slowFree)
	if a, _ := (Greedy{}).Act(context.Background(), d); a["plant"] != 0 {
		t.Errorf("greedy's plant chose %d, want the fastest cell 0 though full", a["plant"])
	}
	d.ActiveAgents["plant"].Role = coord.RoleArea
	if a, _ := (Greedy{}).Act(context.Background(), d); a["plant"] != 1 {
		t.Errorf("greedy's area chose %d, want its free cell 1", a["plant"])
	}
	// Without power headroom the rule avoids the power-hungry cell even
	// when it is free and fast.
	fastFree := coord.CellOption{Cell: "fast", Machines: 1, ProcTime: 10, FreeSlots: 2, BusyKW: 7}
	if a, _ := (Rule{}).Act(context.Background(), routing(1, fastFree, slowFree)); a["plant"] != 1 {
		t.Errorf("rule chose %d with 1 kW headroom, want the 2.5 kW cell", a["plant"])
	}
	if a, _ := (Rule{}).Act(context.Background(), routing(30, fastFree, slowFree)); a["plant"] != 0 {
		t.Errorf("rule chose %d with ample headroom, want the fast cell", a["plant"])
	}
}

func TestRuleRelease(t *testing.T) {
	v := &coord.View{AgentID: "plant", Kind: coord.KindRelease, LegalActions: []int{0, 1, 2}, ActionMask: []bool{true, true, true},
		Options: []coord.Option{
			{Index: 0, Action: "release", Job: &coord.JobOption{Job: 1, Due: 500}},
			{Index: 1, Action: "release", Job: &coord.JobOption{Job: 2, Due: 300}},
			{Index: 2, Action: "defer"},
		}}
	d := &coord.Decision{ActiveAgents: map[string]*coord.View{"plant": v}}
	v.Observation.HeadroomKW = 5
	if a, _ := (Rule{}).Act(context.Background(), d); a["plant"] != 1 {
		t.Errorf("rule released option %d, want earliest due (1)", a["plant"])
	}
	v.Observation.HeadroomKW = -2
	if a, _ := (Rule{}).Act(context.Background(), d); a["plant"] != 2 {
		t.Errorf("rule chose %d over the cap, want defer (2)", a["plant"])
	}
	if a, _ := (Greedy{}).Act(context.Background(), d); a["plant"] != 1 {
		t.Errorf("greedy chose %d over the cap, want to release anyway", a["plant"])
	}
}

func TestRandomIsLegalAndSeeded(t *testing.T) {
	cells := make([]coord.CellOption, 5)
	d := routing(10, cells...)
	d.ActiveAgents["plant"].LegalActions = []int{1, 3, 4} // only some are legal
	draw := func(seed uint64) []int {
		c, err := New("random", seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i := 0; i < 200; i++ {
			a, _ := c.Act(context.Background(), d)
			out = append(out, a["plant"])
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	counts := map[int]int{}
	same := true
	for i := range a {
		counts[a[i]]++
		if a[i] != b[i] {
			t.Fatal("same seed, different draws")
		}
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("different seeds, same draws")
	}
	for k, n := range counts {
		if k != 1 && k != 3 && k != 4 {
			t.Errorf("illegal action %d drawn", k)
		}
		if n < 40 {
			t.Errorf("action %d drawn %d/200 times: not uniform", k, n)
		}
	}
	if _, err := New("oracle", 1); err == nil {
		t.Error("unknown controller accepted")
	}
}

// TestRuleCellIsArgmin: the rule's written-out cell choice is argmin with
// the cell score, on random views (options without a cell, equal scores,
// bids, full buffers, any headroom, options left out of the legal ones).
func TestRuleCellIsArgmin(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	bids := []string{"", "high", "medium", "low"}
	for n := 0; n < 20000; n++ {
		v := &coord.View{}
		for i := 0; i < r.IntN(7); i++ {
			o := coord.Option{Action: coord.ActAssign, Index: i}
			if r.IntN(6) > 0 {
				o.Cell = &coord.CellOption{Machines: r.IntN(3), ProcTime: float64(r.IntN(4)) * 2.5, TransportTime: float64(r.IntN(3)),
					FreeSlots: r.IntN(3) - 1, Backlog: float64(r.IntN(5)) * 10, BusyKW: float64(r.IntN(8)), Bid: bids[r.IntN(len(bids))]}
			} else {
				o.Action = coord.ActEscalate
			}
			v.Options = append(v.Options, o)
			if r.IntN(5) > 0 {
				v.LegalActions = append(v.LegalActions, i)
			}
		}
		headroom := float64(r.IntN(20)) - 5
		want := argmin(v, func(o coord.Option) (float64, bool) {
			c := o.Cell
			if c == nil {
				return 0, false
			}
			return cellScore(c, headroom) + bidWeight(c.Bid)*c.ProcTime, true
		})
		if got := ruleCell(v, headroom); got != want {
			t.Fatalf("view %d: ruleCell %d, argmin %d", n, got, want)
		}
	}
}

// overriding embeds the rule controller by value and answers with its own
// Act: its promoted ChooseView is not its answer.
type overriding struct{ Rule }

func (overriding) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	out := map[string]int{}
	for id, v := range d.ActiveAgents {
		out[id] = len(v.LegalActions) - 1
	}
	return out, nil
}

// The built-ins answer view by view; a type that embeds one and overrides
// Act is not taken for a ViewChooser, so a runner asks its Act.
func TestIsViewChooser(t *testing.T) {
	for _, c := range []coord.Controller{Rule{}, Greedy{}, GreedyPy{}} {
		if _, ok := coord.IsViewChooser(c); !ok {
			t.Errorf("%s: not a ViewChooser", c.Name())
		}
	}
	if _, ok := (coord.Controller)(overriding{}).(coord.ViewChooser); !ok {
		t.Fatal("the embedding type should have the promoted methods: the test would prove nothing")
	}
	if _, ok := coord.IsViewChooser(overriding{}); ok {
		t.Error("a type that embeds the rule controller and overrides Act is taken for a ViewChooser")
	}
}
