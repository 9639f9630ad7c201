package check

import (
	"slices"
	"strconv"
	"strings"
)

// The attribution check: a decision is the controller's (source builtin,
// llm or external) or the harness's (source fallback), and G_fb counts the
// harness's. The interpreter replaces an answer only for the reasons it
// writes itself, records the index it refused in `requested`, and commits
// its contract-safe action instead. So:
//   - a fallback gives one of the harness's reasons ("controller error: …",
//     "unusable reply: …", "no action for this agent", "illegal action
//     index N" with requested N, which is not a legal action (on an
//     area's answer naming escalate where it is withheld, followed by
//     why: the first offered cell that can take the item), or, on a
//     plant_fallback, "the plant declined the fallback placement" with
//     requested naming a decline, or the step-limit reason with any legal
//     requested index), and commits the contract-safe action,
//     recomputed here from its payload by the checker's own rule;
//   - a controller's decision has no reason, no requested index and no
//     reply_error (a reply the controller itself found unusable is always
//     replaced), and commits a legal action.
// A fallback relabelled as the controller's keeps one of these marks,
// unless it is rewritten whole, into a legal answer the controller could
// have given: that is a different, well-formed run.

// Reasons the harness writes (coord's interpreter).
const (
	reasonCtrlError = "controller error: "
	reasonUnusable  = "unusable reply: "
	reasonNoAction  = "no action for this agent"
	reasonIllegal   = "illegal action index "
	reasonDeclined  = "the plant declined the fallback placement"
	reasonStepLimit = "the protocol's step limit sent the item to the plant before local recovery was exhausted"
)

func checkAttribution(line int, a *auditLine, add func(check, format string, args ...any)) {
	v := a.Payload
	act := *a.Action
	if a.Source != "fallback" {
		switch {
		case a.Reason != "" || a.Requested != nil:
			add(ckDecisions, "decisions.jsonl:%d: a %s decision with the fallback's reason %q or requested index: the harness decided it", line, a.Source, a.Reason)
		case a.ReplyError != "":
			add(ckDecisions, "decisions.jsonl:%d: a %s decision whose reply was unusable (%q): the fallback decided it", line, a.Source, a.ReplyError)
		case !slices.Contains(v.LegalActions, act):
			add(ckDecisions, "decisions.jsonl:%d: a %s decision committed action %d, which is not legal", line, a.Source, act)
		}
		return
	}
	req := -1
	if a.Requested != nil {
		req = *a.Requested
	}
	ok := false
	switch r := a.Reason; {
	case strings.HasPrefix(r, reasonCtrlError), strings.HasPrefix(r, reasonUnusable), r == reasonNoAction:
		ok = a.Requested == nil
	case strings.HasPrefix(r, reasonIllegal):
		num, why, noted := strings.Cut(strings.TrimPrefix(r, reasonIllegal), ": ")
		n, err := strconv.Atoi(num)
		ok = err == nil && n == req && !slices.Contains(v.LegalActions, req) && (!noted || withheldEscalation(a, n, why))
	case r == reasonDeclined:
		ok = a.Kind == "plant_fallback" && req >= 0 && req < len(v.Options) && v.Options[req].Action == "decline"
	case r == reasonStepLimit:
		ok = a.Kind == "plant_fallback" && slices.Contains(v.LegalActions, req)
	}
	if !ok {
		add(ckDecisions, "decisions.jsonl:%d: a fallback with reason %q and requested index %d, which the harness does not write", line, a.Reason, req)
	}
	if want := safeAction(v); act != want {
		add(ckDecisions, "decisions.jsonl:%d: a fallback committed action %d, the contract-safe rule gives %d", line, act, want)
	}
}

// withheldEscalation reports whether why, the addition to an illegal
// index's reason, is the one the interpreter writes for an area's answer
// n naming escalate where its view withholds it: n is the index after the
// options, and the cell it names is one of them, able to take the item
// (a free slot and a machine up).
func withheldEscalation(a *auditLine, n int, why string) bool {
	v := a.Payload
	if a.Role != "area" || a.Kind != "select_cell" && a.Kind != "reroute" || n != len(v.Options) {
		return false
	}
	for _, o := range v.Options {
		if o.Action == "escalate" {
			return false
		}
		if c := o.Cell; c != nil && c.FreeSlots > 0 && c.Down < c.Machines {
			return strings.HasPrefix(why, "escalate is not offered while local recovery is possible (cell "+c.Cell+" ")
		}
	}
	return false
}

// safeAction is the contract-safe action of a payload (docs/payload.md,
// "fallback"), a weak default that reads no figure of quality, taken in
// passes over the legal options in payload order (the first option a pass
// accepts wins; the last pass accepts any): release defers while the plant
// is over its cap, else releases the first job; select_area takes the
// first area with free slots, then the first area; a cell choice the
// first cell with a free slot whose busy power fits the headroom, then
// the first with a free slot, then the first cell; a bid is "low" with a
// free slot, else a decline; a commit accepts.
func safeAction(v *auditView) int {
	headroom := max(v.Observation.HeadroomKW, 0)
	var passes []func(o *auditOption) bool
	switch v.Kind {
	case "release":
		passes = append(passes,
			func(o *auditOption) bool { return o.Action == "defer" && v.Observation.HeadroomKW < 0 },
			func(o *auditOption) bool { return o.Action == "release" })
	case "select_area":
		passes = append(passes,
			func(o *auditOption) bool { return o.Area != nil && o.Area.FreeSlots > 0 },
			func(o *auditOption) bool { return o.Area != nil })
	case "select_cell", "award", "reroute", "plant_fallback":
		passes = append(passes,
			func(o *auditOption) bool { return o.Cell != nil && o.Cell.FreeSlots > 0 && o.Cell.BusyKW <= headroom },
			func(o *auditOption) bool { return o.Cell != nil && o.Cell.FreeSlots > 0 },
			func(o *auditOption) bool { return o.Cell != nil })
	case "bid":
		free := v.Observation.Cell != nil && v.Observation.Cell.FreeSlots > 0
		passes = append(passes, func(o *auditOption) bool {
			if free {
				return o.Action == "bid" && o.Bid == "low"
			}
			return o.Action == "decline"
		})
	case "commit":
		passes = append(passes, func(o *auditOption) bool { return o.Action == "accept" })
	}
	passes = append(passes, func(*auditOption) bool { return true })
	for _, take := range passes {
		for _, i := range v.LegalActions {
			if i >= 0 && i < len(v.Options) && take(&v.Options[i]) {
				return i
			}
		}
	}
	return -1
}
