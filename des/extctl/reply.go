package extctl

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/coordbench/coordbench/des/coord"
)

// maxEcho bounds each piece of a reply (a value, an agent id) that a
// message about it repeats, and maxEchoIDs the unknown agents it names:
// the messages go into every agent's note of the step and into the
// violations, and a reply line may be up to MaxLine long.
const (
	maxEcho    = 120
	maxEchoIDs = 10
)

// clip is b as it is, or its first n bytes and "…" if it is longer.
func clip[T ~string | ~[]byte](b T, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// reply is what one reply line means for the decision it answers.
type reply struct {
	// stale: the line answers an earlier step; the caller skips it and
	// waits on. Only violations is set then.
	stale bool
	// actions holds the indices the reply gives, legal or not (the
	// interpreter falls back for the illegal ones); nil when the reply
	// as a whole is unusable.
	actions map[string]int
	// notes has one note per active agent: the raw reply, the latency,
	// the runner's own notes, and why the agent's answer is unusable.
	notes map[string]coord.AgentNote
	// violations are the protocol rules the line broke, in order.
	violations []Violation
}

// parseReply reads line as the runner's reply to decision d, read lat
// after the decision was sent. It has no side effects: the caller
// records the violations and keeps the notes.
func parseReply(d *coord.Decision, line []byte, lat time.Duration) reply {
	var r reply
	violate := func(code, sev, detail string) {
		r.violations = append(r.violations, Violation{Step: d.Step, Code: code, Severity: sev, Detail: detail})
	}
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	ms := float64(lat.Microseconds()) / 1000
	base := coord.AgentNote{LatencyMS: ms} // what every agent's note starts from
	base.SetRaw(string(line))
	bad := func(code, msg string) reply {
		violate(code, SevError, msg)
		r.notes = make(map[string]coord.AgentNote, len(ids))
		for _, id := range ids {
			note := base
			note.Error = msg
			r.notes[id] = note
		}
		return r
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		return bad(VInvalidJSON, "invalid JSON: "+err.Error())
	}
	if t, ok := top["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || s != MsgActions {
			return bad(VBadReply, fmt.Sprintf("unexpected message type %s (want a reply with \"actions\")", clip(t, maxEcho)))
		}
	}
	if s, ok := top["step"]; ok && string(s) != "null" {
		var step int
		if json.Unmarshal(s, &step) != nil {
			return bad(VBadReply, fmt.Sprintf("\"step\" is not an integer: %s", clip(s, maxEcho)))
		}
		if step < d.Step {
			violate(VStale, SevError, fmt.Sprintf("skipped a reply to step %d: %s", step, quote(line, 120)))
			r.stale = true
			return r
		}
		if step > d.Step {
			return bad(VBadReply, fmt.Sprintf("reply for step %d, expected step %d", step, d.Step))
		}
	}
	a, ok := top["actions"]
	if !ok || string(a) == "null" {
		return bad(VBadReply, `no "actions" in reply`)
	}
	var acts map[string]json.RawMessage
	if json.Unmarshal(a, &acts) != nil {
		return bad(VBadReply, `"actions" is not an object`)
	}
	var unknown []string
	for id := range acts {
		if _, ok := d.ActiveAgents[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		msg := "unknown agent " + clip(unknown[0], maxEcho)
		if len(unknown) > 1 {
			shown := unknown[:min(len(unknown), maxEchoIDs)]
			for i, id := range shown {
				shown[i] = clip(id, maxEcho)
			}
			msg = "unknown agents " + strings.Join(shown, ", ")
			if n := len(unknown) - len(shown); n > 0 {
				msg += fmt.Sprintf(" and %d more", n)
			}
		}
		return bad(VUnknownAgent, msg+" (not active at this step)")
	}
	var rnotes map[string]ReplyNote
	if n, ok := top["notes"]; ok && string(n) != "null" {
		if err := json.Unmarshal(n, &rnotes); err != nil {
			violate(VBadNotes, SevWarning, "notes ignored: "+err.Error())
			rnotes = nil
		}
		for id := range rnotes {
			if _, ok := d.ActiveAgents[id]; !ok {
				violate(VBadNotes, SevWarning, "notes for an inactive agent "+clip(id, maxEcho)+" ignored")
			}
		}
		for _, id := range ids {
			if err := rnotes[id].Check(); err != nil {
				violate(VBadNotes, SevWarning, "notes for "+id+" ignored: "+err.Error())
				delete(rnotes, id)
			}
		}
	}
	r.actions = make(map[string]int, len(ids))
	r.notes = make(map[string]coord.AgentNote, len(ids))
	for _, id := range ids {
		rn := rnotes[id]
		note := base
		note.Model, note.PromptTokens, note.CompletionTokens, note.Calls, note.Cached =
			rn.Model, rn.PromptTokens, rn.CompletionTokens, rn.Calls, rn.Cached
		note.PromptCachedTokens = rn.PromptCached()
		v, ok := acts[id]
		switch {
		case !ok:
			note.Error = "no action for this agent in the reply"
			violate(VMissingAgent, SevError, "no action for "+id)
		default:
			var i int
			if json.Unmarshal(v, &i) != nil {
				note.Error = "action is not an integer: " + quote(v, 40)
				violate(VNotInt, SevError, id+": action is not an integer: "+quote(v, 40))
				break
			}
			r.actions[id] = i
			if view := d.ActiveAgents[id]; i < 0 || i >= len(view.ActionMask) || !view.ActionMask[i] {
				violate(VIllegal, SevError, fmt.Sprintf("%s (%s) answered %d; legal: %v", id, view.Kind, i, view.LegalActions))
			}
		}
		r.notes[id] = note
	}
	return r
}
