package policy

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/sim"
)

// names backs Names.
var names = []string{"rule", "greedy", "random", "greedy_py"}

// Names lists the built-in controllers.
func Names() []string { return slices.Clone(names) }

// New returns the built-in controller called name; seed drives the random one.
func New(name string, seed uint64) (coord.Controller, error) {
	switch name {
	case "rule", "":
		return Rule{}, nil
	case "greedy":
		return Greedy{}, nil
	case "random":
		return &Random{s: sim.NewStream(seed, "controller/random")}, nil
	case "greedy_py":
		return GreedyPy{}, nil
	}
	return nil, fmt.Errorf("unknown controller %q (built-in: %v)", name, names)
}

// each applies choose to every active agent's view. The answer is the
// decision's own reused map (coord.Decision.Answer), so that a built-in
// controller allocates nothing per decision.
func each(d *coord.Decision, choose func(*coord.View) int) map[string]int {
	out := d.Answer()
	for id, v := range d.Agents() {
		out[id] = choose(v)
	}
	return out
}

// The built-ins that answer each agent from its view alone, by their
// choice function (their Act is each(d, choose)), say so to a runner.
var (
	_ coord.ViewChooser = Rule{}
	_ coord.ViewChooser = Greedy{}
	_ coord.ViewChooser = GreedyPy{}
)

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
func (Rule) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	return each(d, ruleChoice), nil
}

// ChooseView implements coord.ViewChooser.
func (Rule) ChooseView(v *coord.View) int { return ruleChoice(v) }

// Chooser implements coord.ViewChooser.
func (r Rule) Chooser() coord.Controller { return r }

// bidWeight ranks bid classes in awards: a stronger bid counts as a
// shorter wait, in units of the item's processing time ("high" and no bid
// count 0). A switch, not a map: it is read for every cell option.
func bidWeight(bid string) float64 {
	switch bid {
	case "medium":
		return 0.25
	case "low":
		return 0.5
	}
	return 0
}

func ruleChoice(v *coord.View) int {
	headroom := v.Observation.HeadroomKW
	switch v.Kind {
	case coord.KindRelease:
		return earliestDue(v, true)
	case coord.KindSelectArea:
		return argmin(v, func(o coord.Option) (float64, bool) {
			a := o.Area
			if a == nil {
				return 0, false
			}
			s := a.TransportTime + a.Backlog/float64(max(a.Machines, 1)) + a.MinProcTime
			if a.FreeSlots <= 0 {
				s += 10 * a.MinProcTime
			}
			return s, true
		})
	case coord.KindSelectCell, coord.KindAward, coord.KindReroute, coord.KindPlantFallback:
		if escalate := option(v, coord.ActEscalate); escalate >= 0 && allFull(v) {
			return escalate // no room here: let the plant look elsewhere
		}
		return ruleCell(v, headroom)
	case coord.KindBid:
		c := v.Observation.Cell
		ct := v.Context.Contract
		if c == nil || ct == nil {
			return coord.SafeAction(v)
		}
		n := c.CountMachines() // the list, or a summary view's counts
		idle := n.Idle
		switch {
		case c.FreeSlots <= 0 && ct.Round <= 1:
			return bidOption(v, "")
		case c.FreeSlots <= 0:
			return bidOption(v, "low") // re-announced: nobody had room, offer anyway
		case idle > 0:
			return bidOption(v, "high")
		case c.Backlog/float64(max(n.Total(), 1)) < ct.ProcTime:
			return bidOption(v, "medium")
		}
		return bidOption(v, "low")
	case coord.KindCommit:
		return ruleCommit(v)
	}
	return coord.SafeAction(v)
}

// ruleCell is argmin over the cell options with the score
// cellScore(c, headroom) + bidWeight(c.Bid)*c.ProcTime, written out: the
// rule's most frequent choice (every plant or area cell selection) without
// a copy of each option and a call of the score through a closure.
func ruleCell(v *coord.View, headroom float64) int {
	best, bestS := -1, 0.0
	for _, i := range v.LegalActions {
		c := v.Options[i].Cell
		if c == nil {
			continue
		}
		s := cellScore(c, headroom) + bidWeight(c.Bid)*c.ProcTime
		if best < 0 || s < bestS {
			best, bestS = i, s
		}
	}
	if best < 0 && len(v.LegalActions) > 0 {
		best = v.LegalActions[0]
	}
	return best
}

// cellScore is the rule's expected cost of sending the item to cell c:
// transport, queue per machine and processing, plus penalties for a full
// buffer and for the power overshoot the cell would add.
func cellScore(c *coord.CellOption, headroom float64) float64 {
	s := c.TransportTime + c.Backlog/float64(max(c.Machines, 1)) + c.ProcTime
	if c.FreeSlots <= 0 {
		s += 10 * c.ProcTime // it would block and hold a machine
	}
	if over := c.BusyKW - max(headroom, 0); over > 0 {
		s += over * c.ProcTime // the overshoot it would add (kW × time), one kW weighing one time unit
	}
	return s
}

// option returns the index of the first legal option with the action, or -1.
func option(v *coord.View, action string) int {
	for _, i := range v.LegalActions {
		if v.Options[i].Action == action {
			return i
		}
	}
	return -1
}

// bidOption returns the bid option of class b, or decline when b is "".
func bidOption(v *coord.View, b string) int {
	for _, i := range v.LegalActions {
		o := v.Options[i]
		if (b == "" && o.Action == coord.ActDecline) || (b != "" && o.Action == coord.ActBid && o.Bid == b) {
			return i
		}
	}
	return coord.SafeAction(v)
}

// allFull reports whether every cell option has a full inbound buffer.
func allFull(v *coord.View) bool {
	for _, i := range v.LegalActions {
		if c := v.Options[i].Cell; c != nil && c.FreeSlots > 0 {
			return false
		}
	}
	return true
}

// Greedy routes to the fastest cell whatever its load or power.
type Greedy struct{}

// Name implements coord.Controller.
func (Greedy) Name() string { return "greedy" }

// Source implements coord.Controller.
func (Greedy) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller: each role takes the fastest option its
// own view shows (see greedyChoice).
func (Greedy) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	return each(d, greedyChoice), nil
}

// ChooseView implements coord.ViewChooser.
func (Greedy) ChooseView(v *coord.View) int { return greedyChoice(v) }

// Chooser implements coord.ViewChooser.
func (g Greedy) Chooser() coord.Controller { return g }

// Random picks a uniformly random legal action for every agent.
type Random struct{ s sim.Stream }

// Name implements coord.Controller.
func (*Random) Name() string { return "random" }

// Source implements coord.Controller.
func (*Random) Source() coord.Source { return coord.SourceBuiltin }

// Act implements coord.Controller. Agents draw in id order, so the result
// depends only on the seed and the payloads.
func (r *Random) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
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

// Set is the built-in controllers as a value: the set a suite resolves
// controller names in (harness.Builtins).
type Set struct{}

// New is New.
func (Set) New(name string, seed uint64) (coord.Controller, error) { return New(name, seed) }

// Names is Names.
func (Set) Names() []string { return Names() }

// Builtins returns the built-in controllers as a set (harness.SuiteOptions.Builtins,
// harness.CaseFromID).
func Builtins() Set { return Set{} }
