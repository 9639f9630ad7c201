package policy

import (
	"context"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
)

// cellView is a cell's bid or commit view for an item of family BELT.
func cellView(kind string, c coord.CellObservation, rejected ...string) *coord.Decision {
	v := &coord.View{AgentID: "cell:" + c.Cell, Role: coord.RoleCell, Kind: kind}
	v.Observation.Cell = &c
	v.Context.WorkItem = &coord.WorkItem{Family: "BELT"}
	v.Context.Contract = &coord.Contract{From: "plant", Round: 1, ProcTime: 10, Rejected: rejected}
	acts := []coord.Option{{Action: coord.ActAccept}, {Action: coord.ActReject}}
	if kind == coord.KindBid {
		acts = []coord.Option{{Action: "bid", Bid: "high"}, {Action: "bid", Bid: "medium"}, {Action: "bid", Bid: "low"}, {Action: coord.ActDecline}}
	}
	for i, o := range acts {
		o.Index = i
		v.Options = append(v.Options, o)
		v.LegalActions = append(v.LegalActions, i)
		v.ActionMask = append(v.ActionMask, true)
	}
	return &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}}
}

func machines(states ...string) []coord.MachineState {
	var ms []coord.MachineState
	for _, s := range states {
		ms = append(ms, coord.MachineState{State: s, Family: "BELT"})
	}
	return ms
}

func answer(t *testing.T, c coord.Controller, d *coord.Decision) int {
	t.Helper()
	a, err := c.Act(context.Background(), d)
	if err != nil || len(a) != 1 {
		t.Fatalf("%s: %v %v", c.Name(), a, err)
	}
	for _, i := range a {
		return i
	}
	return -1
}

// TestCellsCommitFromOwnState: a cell refuses work its own state says it
// cannot start (every machine blocked or down) or would block on, which
// its decider cannot see; it accepts otherwise, and after two refusals.
func TestCellsCommitFromOwnState(t *testing.T) {
	for _, ctrl := range []coord.Controller{Rule{}, Greedy{}} {
		ok := coord.CellObservation{Cell: "C1", Machines: machines("busy", "idle"), FreeSlots: 2, Backlog: 5}
		stuckCell := coord.CellObservation{Cell: "C1", Machines: machines("blocked", "down"), FreeSlots: 2}
		full := coord.CellObservation{Cell: "C1", Machines: machines("busy"), FreeSlots: 0, Backlog: 5}
		if a := answer(t, ctrl, cellView(coord.KindCommit, ok)); a != 0 {
			t.Errorf("%s: a free cell answered %d, want accept", ctrl.Name(), a)
		}
		for _, c := range []coord.CellObservation{stuckCell, full} {
			if a := answer(t, ctrl, cellView(coord.KindCommit, c)); a != 1 {
				t.Errorf("%s: %+v answered %d, want reject", ctrl.Name(), c.Machines, a)
			}
			if a := answer(t, ctrl, cellView(coord.KindCommit, c, "C2", "C3")); a != 0 {
				t.Errorf("%s: after two refusals answered %d, want accept", ctrl.Name(), a)
			}
		}
	}
	// Only the rule refuses a long queue; greedy takes it.
	loaded := coord.CellObservation{Cell: "C1", Machines: machines("busy", "down"), FreeSlots: 1, Backlog: 45}
	if a := answer(t, Rule{}, cellView(coord.KindCommit, loaded)); a != 1 {
		t.Errorf("rule accepted 45 time units of backlog on one working machine")
	}
	if a := answer(t, Greedy{}, cellView(coord.KindCommit, loaded)); a != 0 {
		t.Errorf("greedy rejected a cell with room")
	}
}

// TestGreedyBidsFromSetup: a greedy cell bids high only when an idle
// machine is already set up for the item's family, which no decider sees.
func TestGreedyBidsFromSetup(t *testing.T) {
	ready := coord.CellObservation{Cell: "C1", Machines: machines("idle"), FreeSlots: 1}
	setup := coord.CellObservation{Cell: "C1", Machines: []coord.MachineState{{State: "idle", Family: "GEAR"}}, FreeSlots: 1}
	busy := coord.CellObservation{Cell: "C1", Machines: machines("busy"), FreeSlots: 1}
	full := coord.CellObservation{Cell: "C1", Machines: machines("busy"), FreeSlots: 0}
	for want, c := range []coord.CellObservation{ready, setup, busy, full} {
		if a := answer(t, Greedy{}, cellView(coord.KindBid, c)); a != want {
			t.Errorf("cell %+v bid option %d, want %d", c.Machines, a, want)
		}
	}
}

// TestFallbackNeverDeclines: rule and greedy place a plant_fallback item
// on a cell, a full one if need be.
func TestFallbackNeverDeclines(t *testing.T) {
	full := coord.CellOption{Cell: "C1", Machines: 1, ProcTime: 10, FreeSlots: 0}
	d := routing(10, full)
	v := d.ActiveAgents["plant"]
	v.Kind = coord.KindPlantFallback
	v.Options = append(v.Options, coord.Option{Index: 1, Action: coord.ActDecline})
	v.LegalActions = append(v.LegalActions, 1)
	v.ActionMask = append(v.ActionMask, true)
	for _, ctrl := range []coord.Controller{Rule{}, Greedy{}} {
		if a := answer(t, ctrl, d); a != 0 {
			t.Errorf("%s answered %d, want the cell 0", ctrl.Name(), a)
		}
	}
}
