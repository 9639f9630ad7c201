package policy

import (
	"testing"

	"github.com/coordbench/coordbench/des/coord"
)

func view(kind string, opts ...coord.Option) *coord.View {
	v := &coord.View{AgentID: "x", Kind: kind}
	for i := range opts {
		opts[i].Index = i
		v.Options = append(v.Options, opts[i])
		v.LegalActions = append(v.LegalActions, i)
		v.ActionMask = append(v.ActionMask, true)
	}
	return v
}

func assign(proc, transport float64, free int) coord.Option {
	return coord.Option{Action: coord.ActAssign, Cell: &coord.CellOption{ProcTime: proc, TransportTime: transport, FreeSlots: free}}
}

func TestGreedyPy(t *testing.T) {
	for _, c := range []struct {
		name string
		v    *coord.View
		want int
	}{
		{"fastest cell", view(coord.KindSelectCell, assign(10, 4, 1), assign(8, 4, 1), assign(9, 4, 1)), 1},
		{"tie to the lowest index", view(coord.KindAward, assign(10, 4, 1), assign(12, 2, 1), assign(14, 0, 1)), 0},
		{"free slots first", view(coord.KindSelectCell, assign(5, 0, 0), assign(20, 4, 2)), 1},
		{"all full: fastest", view(coord.KindReroute, assign(9, 0, 0), assign(5, 0, 0), coord.Option{Action: coord.ActEscalate}), 1},
		{"escalate when no cell", view(coord.KindReroute, coord.Option{Action: coord.ActEscalate}), 0},
		{"release earliest due", view(coord.KindRelease,
			coord.Option{Action: coord.ActRelease, Job: &coord.JobOption{Due: 500}},
			coord.Option{Action: coord.ActRelease, Job: &coord.JobOption{Due: 300}},
			coord.Option{Action: coord.ActRelease, Job: &coord.JobOption{Due: 300}},
			coord.Option{Action: coord.ActDefer}), 1},
		{"area", view(coord.KindSelectArea,
			coord.Option{Action: coord.ActAllocate, Area: &coord.AreaOption{MinProcTime: 5, TransportTime: 1, FreeSlots: 0}},
			coord.Option{Action: coord.ActAllocate, Area: &coord.AreaOption{MinProcTime: 9, TransportTime: 1, FreeSlots: 1}}), 1},
		{"commit accepts", view(coord.KindCommit, coord.Option{Action: coord.ActReject}, coord.Option{Action: coord.ActAccept}), 1},
		{"unknown kind", view("negotiate", coord.Option{Action: "x"}), 0},
	} {
		if got := greedyPyChoice(c.v); got != c.want {
			t.Errorf("%s: chose %d, want %d", c.name, got, c.want)
		}
	}
	bids := func(free int) *coord.View {
		v := view(coord.KindBid, coord.Option{Action: coord.ActBid, Bid: "high"}, coord.Option{Action: coord.ActBid, Bid: "medium"},
			coord.Option{Action: coord.ActBid, Bid: "low"}, coord.Option{Action: coord.ActDecline})
		v.Observation.Cell = &coord.CellObservation{FreeSlots: free}
		return v
	}
	if greedyPyChoice(bids(1)) != 0 || greedyPyChoice(bids(0)) != 3 {
		t.Error("bid: want high with room, decline without")
	}
	// Masked options are never chosen.
	v := view(coord.KindSelectCell, assign(1, 0, 1), assign(9, 0, 1))
	v.LegalActions, v.ActionMask = []int{1}, []bool{false, true}
	if got := greedyPyChoice(v); got != 1 {
		t.Errorf("chose masked option %d", got)
	}
	if c, err := New("greedy_py", 1); err != nil || c.Name() != "greedy_py" {
		t.Errorf("New: %v %v", c, err)
	}
}
