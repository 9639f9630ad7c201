package envsock

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
)

// actSome is Act for a client that plays some agents, as the HTTP
// transport's: a decision without a played agent is answered by the
// others' controller and never published; one with played agents is
// published with those only, the others' controller answering the rest
// first (the views are the interpreter's until the step is applied), with
// notes that say so.
func (c slotController) actSome(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	sl := c.sl
	s := sl.s
	mine := 0
	for id := range d.ActiveAgents {
		if s.played[id] {
			mine++
		}
	}
	clear(sl.notes)
	if mine == 0 { // the client never sees this decision
		sl.src = coord.SourceBuiltin
		return sl.others.Act(ctx, d)
	}
	sl.src = coord.SourceExternal
	ask := &coord.Decision{Version: d.Version, Step: d.Step, Time: d.Time, ActiveAgents: make(map[string]*coord.View, mine)}
	var theirs *coord.Decision
	if mine < len(d.ActiveAgents) {
		theirs = &coord.Decision{Version: d.Version, Step: d.Step, Time: d.Time, ActiveAgents: make(map[string]*coord.View, len(d.ActiveAgents)-mine)}
	}
	for id, v := range d.ActiveAgents {
		if s.played[id] {
			ask.ActiveAgents[id] = v
		} else {
			theirs.ActiveAgents[id] = v
		}
	}
	var builtin map[string]int
	if theirs != nil {
		var err error
		if builtin, err = sl.others.Act(ctx, theirs); err != nil {
			return nil, fmt.Errorf("built-in controller %s: %w", sl.others.Name(), err)
		}
	}
	sl.publish(ask)
	if !sl.yield(struct{}{}) {
		return nil, errAbandoned
	}
	ans := sl.answer(ask, sl.acts)
	if theirs != nil {
		if sl.notes == nil {
			sl.notes = make(map[string]coord.AgentNote, len(theirs.ActiveAgents))
		}
		for id := range theirs.ActiveAgents {
			if a, ok := builtin[id]; ok {
				ans[id] = a
			}
			sl.notes[id] = coord.AgentNote{Model: "builtin:" + sl.others.Name(), DecidedBy: coord.SourceBuiltin}
		}
	}
	return ans, nil
}
