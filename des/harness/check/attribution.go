package check

import (
	"math"
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
//     index N" with requested N, which is not a legal action, or, on a
//     plant_fallback, "the plant declined the fallback placement" with
//     requested naming a decline), and commits the contract-safe action,
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
		n, err := strconv.Atoi(strings.TrimPrefix(r, reasonIllegal))
		ok = err == nil && n == req && !slices.Contains(v.LegalActions, req)
	case r == reasonDeclined:
		ok = a.Kind == "plant_fallback" && req >= 0 && req < len(v.Options) && v.Options[req].Action == "decline"
	}
	if !ok {
		add(ckDecisions, "decisions.jsonl:%d: a fallback with reason %q and requested index %d, which the harness does not write", line, a.Reason, req)
	}
	if want := safeAction(v); act != want {
		add(ckDecisions, "decisions.jsonl:%d: a fallback committed action %d, the contract-safe rule gives %d", line, act, want)
	}
}

// safeAction is the contract-safe action of a payload (docs/payload.md,
// "fallback"): the release of the earliest due date; the area with free
// slots, then the least backlog per machine plus shortest processing time;
// the cell with free slots, then the least backlog plus processing time;
// a medium bid if the cell has a free slot, else a decline; accept; else
// the first legal action. Ties go to the first legal option.
func safeAction(v *auditView) int {
	var score func(o *auditOption) (float64, bool)
	switch v.Kind {
	case "release":
		score = func(o *auditOption) (float64, bool) {
			if o.Job == nil {
				return 0, false
			}
			return o.Job.Due, true
		}
	case "select_area":
		score = func(o *auditOption) (float64, bool) {
			if o.Area == nil {
				return 0, false
			}
			s := o.Area.Backlog/float64(max(o.Area.Machines, 1)) + o.Area.MinProcTime
			if o.Area.FreeSlots <= 0 {
				s += 1e9
			}
			return s, true
		}
	case "select_cell", "award", "reroute", "plant_fallback":
		score = func(o *auditOption) (float64, bool) {
			if o.Cell == nil {
				return 0, false
			}
			s := o.Cell.Backlog + o.Cell.ProcTime
			if o.Cell.FreeSlots <= 0 {
				s += 1e9
			}
			return s, true
		}
	case "bid":
		want := "decline"
		if c := v.Observation.Cell; c != nil && c.FreeSlots > 0 {
			want = "bid"
		}
		score = func(o *auditOption) (float64, bool) {
			return 0, o.Action == want && (o.Action != "bid" || o.Bid == "medium")
		}
	case "commit":
		score = func(o *auditOption) (float64, bool) { return 0, o.Action == "accept" }
	}
	best, bestS := -1, math.Inf(1)
	for _, i := range v.LegalActions {
		if i < 0 || i >= len(v.Options) || score == nil {
			continue
		}
		if s, ok := score(&v.Options[i]); ok && (best < 0 || s < bestS) {
			best, bestS = i, s
		}
	}
	if best < 0 && len(v.LegalActions) > 0 {
		best = v.LegalActions[0]
	}
	return best
}
