package envsock

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
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
	ask, theirs := envcore.SplitDecision(d, s.played)
	if ask == nil { // the client never sees this decision (no notes: answer clears them otherwise)
		clear(sl.notes)
		sl.src = coord.SourceBuiltin
		return sl.others.Act(ctx, d)
	}
	sl.src = coord.SourceExternal
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
