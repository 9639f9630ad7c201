package envsock

import (
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
)

// settleSome handles the pending decision for a client that plays some
// agents, as the HTTP transport does: a decision without a played agent
// is answered by the others' controller and never published (false: the
// episode went on to its next decision, or ended); one with played agents
// is published with those only (true), the others' controller answering
// the rest first (the views are the interpreter's until the step is
// applied).
func (sl *slot) settleSome() bool {
	s := sl.s
	d := sl.st.Decision()
	ask, theirs := envcore.SplitDecision(d, s.played)
	if ask == nil { // the client never sees this decision (no notes: answerSome clears them otherwise)
		clear(sl.notes)
		sl.src = coord.SourceBuiltin
		ans, err := sl.othersAct(d)
		sl.running = sl.st.Answer(ans, err)
		return false
	}
	sl.src = coord.SourceExternal
	sl.ask, sl.theirs, sl.builtin = ask, theirs, nil
	if theirs != nil {
		var err error
		if sl.builtin, err = sl.othersAct(theirs); err != nil {
			sl.running = sl.st.Answer(nil, fmt.Errorf("built-in controller %s: %w", sl.others.Name(), err))
			return false
		}
	}
	sl.publish(ask)
	return true
}

// othersAct asks the others' controller, a panic becoming an error (its
// answers fall back), as harness.Run has it.
func (sl *slot) othersAct(d *coord.Decision) (ans map[string]int, err error) {
	defer func() {
		if r := recover(); r != nil {
			ans, err = nil, fmt.Errorf("controller %s panicked: %v", sl.others.Name(), r)
		}
	}()
	return sl.others.Act(sl.st.Context(), d)
}

// answerSome is the answer to the pending decision published by
// settleSome: the client's actions for the played agents, the others'
// controller's for the rest, with notes that say so.
func (sl *slot) answerSome() map[string]int {
	ans := sl.answer(sl.ask, sl.acts)
	if theirs := sl.theirs; theirs != nil {
		if sl.notes == nil {
			sl.notes = make(map[string]coord.AgentNote, len(theirs.ActiveAgents))
		}
		for id := range theirs.ActiveAgents {
			if a, ok := sl.builtin[id]; ok {
				ans[id] = a
			}
			sl.notes[id] = coord.AgentNote{Model: "builtin:" + sl.others.Name(), DecidedBy: coord.SourceBuiltin}
		}
	}
	sl.ask, sl.theirs, sl.builtin = nil, nil, nil
	return ans
}
