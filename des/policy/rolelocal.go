package policy

import (
	"github.com/coordbench/coordbench/des/coord"
)

// Role-local decisions. Each agent decides from its own view only: a cell
// from its machines, buffer and backlog and its contract's proc_time, an
// area from its own cells, the plant from the cells (centralized), the
// area summaries (hierarchical, holonic) or the bids (contract net). So
// the same controller decides differently under each paradigm, because
// each paradigm gives the decision to a different role.

// Every role-local rule reads a cell's machines by state only, through
// CountMachines, so a summary view (view_detail summary: counts in place
// of the list) gives the same answers. Only greedy's bid reads the list
// itself: what an idle machine is set up for, which a summary hides.

// workingMachines counts a cell's machines that are not down.
func workingMachines(c *coord.CellObservation) int {
	n := c.CountMachines()
	return n.Total() - n.Down
}

// stuck reports whether none of the cell's machines can take up work now
// or soon: each is down or blocked (holding a finished job that cannot
// leave). Only the cell sees this; its decider sees totals.
func stuck(c *coord.CellObservation) bool {
	n := c.CountMachines()
	return n.Idle+n.Busy+n.Setup == 0
}

// ruleCommit: the chosen cell accepts unless, by its own state, the item
// would block (no free slot), find no machine able to start it (all down
// or blocked), or wait more than four processing times behind the cell's
// backlog spread over the machines that are not down. The decider saw
// only the cell's totals: backlog per machine, down ones included, and
// blocked machines not at all. At most two cells refuse one item, so
// rejections cannot ping-pong.
func ruleCommit(v *coord.View) int {
	c, ct := v.Observation.Cell, v.Context.Contract
	if c != nil && ct != nil && len(ct.Rejected) < 2 {
		if c.FreeSlots <= 0 || stuck(c) || c.Backlog/float64(workingMachines(c)) > 4*ct.ProcTime {
			return option(v, coord.ActReject) // a sibling, or the plant, can place it better
		}
	}
	return option(v, coord.ActAccept)
}

// greedyChoice is the greedy controller: every role takes the fastest
// option (processing + transport) its own view shows, avoiding only what
// it can see would block or wait to start; it ignores queues and power.
//
//   - plant, select_cell (centralized): the cell with the least
//     processing time, whatever its load, buffer or power: the naive
//     router the A5C12-2 profile is built to punish;
//   - plant, plant_fallback: a last resort, so among all capable cells
//     the fastest that can start at once (an idle machine and a free
//     slot), then the fastest with a free slot, then the fastest; it never
//     declines;
//   - plant, select_area (hierarchical, holonic): the area whose option
//     shows the fastest capable cell (min_proc_time + transport_time),
//     one with free slots first. The two figures may belong to different
//     cells, and the summary shows no idle machines: the plant's area need
//     not hold the globally fastest free cell;
//   - area, select_cell and reroute: it manages its cells' buffers, so
//     its own fastest cell by the fallback's tiers (can start, free slot,
//     full); escalate when every one is full;
//   - cell, bid (contract net): high when a free slot and an idle machine
//     already set up for the item's family (no setup, which only the cell
//     can see), medium with an idle machine that needs a setup, low with
//     a free slot only; decline when full (low when re-announced);
//   - plant or area, award: the strongest bid class, then as select_cell;
//   - cell, commit (contract net, holonic): accept unless it would block
//     (no free slot) or no machine of its own can start it (all down or
//     blocked; its decider does not see blocked machines).
func greedyChoice(v *coord.View) int {
	switch v.Kind {
	case coord.KindRelease:
		return earliestDue(v, false)
	case coord.KindSelectArea:
		return argmin(v, func(o coord.Option) (float64, bool) {
			a := o.Area
			if a == nil {
				return 0, false
			}
			s := a.MinProcTime + a.TransportTime
			if a.FreeSlots <= 0 {
				s += fullPenalty
			}
			return s, true
		})
	case coord.KindSelectCell, coord.KindReroute, coord.KindAward, coord.KindPlantFallback:
		if v.Kind == coord.KindSelectCell && v.Role == coord.RolePlant {
			// The plant routing every cell itself (centralized): the
			// fastest processing, whatever the cell's load, buffer or
			// power — the naive router the A5C12-2 lure punishes.
			return argmin(v, func(o coord.Option) (float64, bool) {
				if o.Cell == nil {
					return 0, false
				}
				return o.Cell.ProcTime, true
			})
		}
		if escalate := option(v, coord.ActEscalate); escalate >= 0 && allFull(v) {
			return escalate // nothing free here: the plant may know better
		}
		return argmin(v, func(o coord.Option) (float64, bool) {
			c := o.Cell
			if c == nil {
				return 0, false
			}
			return c.ProcTime + c.TransportTime + greedyTier(c), true
		})
	case coord.KindBid:
		c, ct, w := v.Observation.Cell, v.Context.Contract, v.Context.WorkItem
		if c == nil || ct == nil || w == nil {
			return coord.SafeAction(v)
		}
		ready, idle := 0, c.CountMachines().Idle
		for _, m := range c.Machines { // a summary view has no list: no machine is known to be ready
			if m.State == "idle" && m.Family == w.Family {
				ready++ // set up for this family: no setup before it starts
			}
		}
		switch {
		case c.FreeSlots > 0 && ready > 0:
			return bidOption(v, "high")
		case c.FreeSlots > 0 && idle > 0:
			return bidOption(v, "medium")
		case c.FreeSlots > 0 || ct.Round > 1:
			return bidOption(v, "low")
		}
		return bidOption(v, "")
	case coord.KindCommit:
		c, ct := v.Observation.Cell, v.Context.Contract
		if c != nil && ct != nil && len(ct.Rejected) < 2 {
			if c.FreeSlots <= 0 || stuck(c) {
				return option(v, coord.ActReject)
			}
		}
		return option(v, coord.ActAccept)
	}
	return coord.SafeAction(v)
}

// greedyTier ranks a cell option before its speed: a stronger bid class
// first (awards), then a cell that can start at once (an idle machine and
// a free slot), then one with a free slot, then a full one.
func greedyTier(c *coord.CellOption) float64 {
	t := bidRank[c.Bid] * bidPenalty
	switch {
	case c.FreeSlots <= 0:
		t += 2 * fullPenalty
	case c.Idle == 0:
		t += fullPenalty
	}
	return t
}

// Greedy's ranking: a full cell or area comes after every free one, a
// weaker bid class after every stronger one.
const (
	fullPenalty = 1e6
	bidPenalty  = 1e8
)

var bidRank = map[string]float64{"high": 0, "medium": 1, "low": 2}
