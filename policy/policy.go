package policy

import (
	"fmt"
	"sort"

	"github.com/coordbench/coordbench/coord"
	"github.com/coordbench/coordbench/sim"
)

// Names lists the built-in controllers.
var Names = []string{"rule", "greedy", "random"}

// New returns the built-in controller called name; seed drives the random one.
func New(name string, seed uint64) (coord.Controller, error) {
	switch name {
	case "rule", "":
		return Rule{}, nil
	case "greedy":
		return Greedy{}, nil
	case "random":
		return &Random{s: sim.NewStream(seed, "controller/random")}, nil
	}
	return nil, fmt.Errorf("unknown controller %q (built-in: %v)", name, Names)
}

// each applies choose to every active agent's view.
func each(d *coord.Decision, choose func(*coord.View) int) map[string]int {
	out := make(map[string]int, len(d.ActiveAgents))
	for id, v := range d.ActiveAgents {
		out[id] = choose(v)
	}
	return out
}

// argmin returns the legal option index with the least score.
func argmin(v *coord.View, score func(o coord.Option) (float64, bool)) int {
	best, bestS := -1, 0.0
	for _, i := range v.LegalActions {
		s, ok := score(v.Options[i])
		if ok && (best < 0 || s < bestS) {
			best, bestS = i, s
		}
	}
	if best < 0 && len(v.LegalActions) > 0 {
		best = v.LegalActions[0]
	}
	return best
}

// earliestDue picks the release option with the earliest due date, or
// defer when the plant is over its power cap and deferring is legal.
func earliestDue(v *coord.View, deferOverCap bool) int {
	if deferOverCap && v.Observation.HeadroomKW < 0 {
		for _, i := range v.LegalActions {
			if v.Options[i].Action == "defer" {
				return i
			}
		}
	}
	return argmin(v, func(o coord.Option) (float64, bool) {
		if o.Job == nil {
			return 0, false
		}
		return o.Job.Due, true
	})
}

// Rule is the default built-in controller.
type Rule struct{}

// Name implements coord.Controller.
func (Rule) Name() string { return "rule" }

// Source implements coord.Controller.
func (Rule) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller.
func (Rule) Act(d *coord.Decision) (map[string]int, error) {
	return each(d, func(v *coord.View) int {
		switch v.Kind {
		case coord.KindRelease:
			return earliestDue(v, true)
		case coord.KindSelectCell:
			headroom := v.Observation.HeadroomKW
			return argmin(v, func(o coord.Option) (float64, bool) {
				c := o.Cell
				if c == nil {
					return 0, false
				}
				s := c.TransportTime + c.Backlog/float64(max(c.Machines, 1)) + c.ProcTime
				if c.FreeSlots <= 0 {
					s += 10 * c.ProcTime // it would block and hold a machine
				}
				if over := c.BusyKW - max(headroom, 0); over > 0 {
					s += over * c.ProcTime // the overshoot it would add (kW × time), one kW weighing one time unit
				}
				return s, true
			})
		}
		return coord.SafeAction(v)
	}), nil
}

// Greedy routes to the fastest cell whatever its load or power.
type Greedy struct{}

// Name implements coord.Controller.
func (Greedy) Name() string { return "greedy" }

// Source implements coord.Controller.
func (Greedy) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller.
func (Greedy) Act(d *coord.Decision) (map[string]int, error) {
	return each(d, func(v *coord.View) int {
		switch v.Kind {
		case coord.KindRelease:
			return earliestDue(v, false)
		case coord.KindSelectCell:
			return argmin(v, func(o coord.Option) (float64, bool) {
				if o.Cell == nil {
					return 0, false
				}
				return o.Cell.ProcTime, true
			})
		}
		return coord.SafeAction(v)
	}), nil
}

// Random picks a uniformly random legal action for every agent.
type Random struct{ s sim.Stream }

// Name implements coord.Controller.
func (*Random) Name() string { return "random" }

// Source implements coord.Controller.
func (*Random) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller. Agents draw in id order, so the result
// depends only on the seed and the payloads.
func (r *Random) Act(d *coord.Decision) (map[string]int, error) {
	ids := make([]string, 0, len(d.ActiveAgents))
	for id := range d.ActiveAgents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make(map[string]int, len(ids))
	for _, id := range ids {
		v := d.ActiveAgents[id]
		if len(v.LegalActions) == 0 {
			continue
		}
		out[id] = v.LegalActions[r.s.Intn(len(v.LegalActions))]
	}
	return out, nil
}
