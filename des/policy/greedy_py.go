package policy

import (
	"context"
	"github.com/coordbench/coordbench/des/coord"
)

// GreedyPy is the Go twin of examples/python/greedy_runner.py, the example
// external runner (docs/external.md). It makes the same choice from the
// same payload, step for step, so that a test can hold the Python runner
// and the runner protocol to byte-identical traces. Change both or
// neither.
//
//   - release: the offered job with the earliest due date;
//   - select_area: the area with the least min_proc_time + transport_time,
//     among those with free_slots > 0 if there are any;
//   - select_cell, award, reroute: the cell with the least proc_time +
//     transport_time, among those with free_slots > 0 if there are any;
//     escalate only when no cell is offered;
//   - bid: bid high if the cell has a free inbound slot, else decline;
//   - commit: accept.
//
// Only legal options are considered, in ascending index order; a tie
// goes to the lowest index. A decision kind it does not know gets the
// first legal option.
type GreedyPy struct{}

// Name implements coord.Controller.
func (GreedyPy) Name() string { return "greedy_py" }

// Source implements coord.Controller.
func (GreedyPy) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller.
func (GreedyPy) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	return each(d, greedyPyChoice), nil
}

// ChooseView implements coord.ViewChooser.
func (GreedyPy) ChooseView(v *coord.View) int { return greedyPyChoice(v) }

// Chooser implements coord.ViewChooser.
func (g GreedyPy) Chooser() coord.Controller { return g }

func greedyPyChoice(v *coord.View) int {
	switch v.Kind {
	case coord.KindRelease:
		return lowestKey(v, func(o coord.Option) (bool, float64, bool) {
			if o.Action != coord.ActRelease || o.Job == nil {
				return false, 0, false
			}
			return false, o.Job.Due, true
		})
	case coord.KindSelectArea:
		return lowestKey(v, func(o coord.Option) (bool, float64, bool) {
			if o.Action != coord.ActAllocate || o.Area == nil {
				return false, 0, false
			}
			return o.Area.FreeSlots <= 0, o.Area.MinProcTime + o.Area.TransportTime, true
		})
	case coord.KindSelectCell, coord.KindAward, coord.KindReroute, coord.KindPlantFallback:
		return lowestKey(v, func(o coord.Option) (bool, float64, bool) {
			if o.Action != coord.ActAssign || o.Cell == nil {
				return false, 0, false
			}
			return o.Cell.FreeSlots <= 0, o.Cell.ProcTime + o.Cell.TransportTime, true
		})
	case coord.KindBid:
		if c := v.Observation.Cell; c != nil && c.FreeSlots > 0 {
			return firstLegal(v, func(o coord.Option) bool { return o.Action == coord.ActBid && o.Bid == "high" })
		}
		return firstLegal(v, func(o coord.Option) bool { return o.Action == coord.ActDecline })
	case coord.KindCommit:
		return firstLegal(v, func(o coord.Option) bool { return o.Action == coord.ActAccept })
	}
	return firstLegal(v, func(coord.Option) bool { return true })
}

// lowestKey returns the legal option with the least (full, score) key
// among those key accepts (ok), the lowest index on ties; the first legal
// option if it accepts none.
func lowestKey(v *coord.View, key func(coord.Option) (full bool, score float64, ok bool)) int {
	best, bestFull, bestScore := -1, false, 0.0
	for _, i := range v.LegalActions {
		full, score, ok := key(v.Options[i])
		if !ok {
			continue
		}
		if best < 0 || (!full && bestFull) || (full == bestFull && score < bestScore) {
			best, bestFull, bestScore = i, full, score
		}
	}
	if best < 0 {
		return firstLegal(v, func(coord.Option) bool { return true })
	}
	return best
}

// firstLegal returns the first legal option that match accepts, else the
// first legal option (-1 if there is none).
func firstLegal(v *coord.View, match func(coord.Option) bool) int {
	for _, i := range v.LegalActions {
		if match(v.Options[i]) {
			return i
		}
	}
	if len(v.LegalActions) > 0 {
		return v.LegalActions[0]
	}
	return -1
}
