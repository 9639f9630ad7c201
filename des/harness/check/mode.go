package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// The mode-rule check: under an adaptive paradigm every work item's
// routing starts with a mode_selected record. The replay recomputes the
// state it records from the physical trace alone (modeSelected); once the
// messages and the manifest are read, the rejections, the rule the mode
// follows from and the decisions the mode governed are checked
// (checkModes). The rules are evaluated here by code of the checker's own.

// ckMode is the check id.
const ckMode = "mode-rule"

// modeFeatures are the keys of a mode_selected state, as docs/paradigms.md
// defines them.
var modeFeatures = []string{"power_headroom", "wip", "wip_load", "backlog", "down_machines", "blocked_jobs",
	"capable_cells", "capable_cells_down", "capable_free_slots", "slack", "reroute", "recent_rejections"}

// modeRec is a mode_selected record.
type modeRec struct {
	line    int
	t       float64
	job, op int
	step    int
	mode    string
	rule    int
	state   map[string]float64
}

// ruleOfAgent is the rule of a mode the mode_selector agent chose.
const ruleOfAgent = -2

// paradigmRules is the manifest's adaptive paradigm.
type paradigmRules struct {
	RejectionWindow float64  `json:"rejection_window"`
	Selector        string   `json:"selector"`
	Offer           []string `json:"offer"`
	Modes           []struct {
		ID       string `json:"mode_id"`
		Routing  string `json:"routing_authority_mode"`
		Contract string `json:"cell_contract_actions"`
		Bids     bool   `json:"mediated_bid_round_enabled"`
		Invite   int    `json:"bid_invitations"`
	} `json:"modes"`
	Rules []struct {
		Mode string    `json:"mode"`
		When condition `json:"when"`
	} `json:"rules"`
}

// condition is a rule's condition (docs/paradigms.md).
type condition struct {
	All     []condition `json:"all"`
	Any     []condition `json:"any"`
	Not     *condition  `json:"not"`
	Feature string      `json:"feature"`
	Lt      *float64    `json:"lt"`
	Le      *float64    `json:"le"`
	Gt      *float64    `json:"gt"`
	Ge      *float64    `json:"ge"`
	Eq      *float64    `json:"eq"`
	Ne      *float64    `json:"ne"`
}

// holds evaluates the condition on a state.
func (c *condition) holds(s map[string]float64) bool {
	if len(c.All) > 0 {
		for i := range c.All {
			if !c.All[i].holds(s) {
				return false
			}
		}
		return true
	}
	if len(c.Any) > 0 {
		for i := range c.Any {
			if c.Any[i].holds(s) {
				return true
			}
		}
		return false
	}
	if c.Not != nil {
		return !c.Not.holds(s)
	}
	v, ok := s[c.Feature]
	if !ok {
		return false
	}
	cmp := func(b *float64, ok func(v, b float64) bool) bool { return b == nil || ok(v, *b) }
	return cmp(c.Lt, func(v, b float64) bool { return v < b }) && cmp(c.Le, func(v, b float64) bool { return v <= b }) &&
		cmp(c.Gt, func(v, b float64) bool { return v > b }) && cmp(c.Ge, func(v, b float64) bool { return v >= b }) &&
		cmp(c.Eq, func(v, b float64) bool { return v == b }) && cmp(c.Ne, func(v, b float64) bool { return v != b })
}

// builtinRouting is what the checker needs of the built-in paradigms: the
// routing authority and whether cells bid.
var builtinRouting = map[string]struct {
	routing string
	bids    bool
}{
	"centralized":       {"centralized", false},
	"hierarchical":      {"hierarchical", false},
	"heterarchical_cnp": {"heterarchical_cnp", true},
	"holonic_hybrid":    {"holonic_hybrid", false},
}

// modeSelected checks a mode_selected record against the replayed state
// and keeps it for checkModes.
func (c *checker) modeSelected(r *rec) {
	ml := r.raw // validate saw every key
	var state map[string]float64
	if err := json.Unmarshal(*ml.State, &state); err != nil {
		c.add(r.line, ckFormat, "mode_selected: state is not an object of numbers: %v", err)
		return
	}
	for k, v := range state {
		if !finite(v) {
			c.add(r.line, ckFormat, "mode_selected: state %s is not a finite number", k)
			return
		}
	}
	complete := len(state) == len(modeFeatures)
	for _, k := range modeFeatures {
		_, has := state[k]
		complete = complete && has
	}
	if !complete {
		c.add(r.line, ckFormat, "mode_selected: state keys %v, want %v", slices.Sorted(maps.Keys(state)), modeFeatures)
		return
	}
	if *ml.Step < 0 || *ml.Step > math.MaxInt32 || *ml.Rule < ruleOfAgent || *ml.Rule > math.MaxInt32 {
		c.add(r.line, ckFormat, "mode_selected: step %d or rule %d out of range", *ml.Step, *ml.Rule)
		return
	}
	j := c.jobs[r.job]
	if j == nil || j.st != jRouting || r.op != j.fin {
		st := "unknown"
		if j != nil {
			st = fmt.Sprintf("%s at op %d", j.st, j.fin)
		}
		c.add(r.line, ckMode, "mode_selected of job %d op %d, which is not awaiting routing (%s)", r.job, r.op, st)
		return
	}
	if j.modeLine != 0 {
		c.add(r.line, ckMode, "a second mode_selected for job %d op %d (the first at line %d)", r.job, r.op, j.modeLine)
	}
	j.modeLine = r.line
	m := modeRec{line: r.line, t: r.t, job: r.job, op: r.op, step: int(*ml.Step), mode: *ml.Mode, rule: int(*ml.Rule),
		state: state}
	replayed := c.replayedState(j)
	for _, k := range modeFeatures {
		got, ok := replayed[k]
		if !ok {
			continue
		}
		if d := math.Abs(got - m.state[k]); !(d <= 1e-9*math.Max(1, math.Abs(got))) {
			c.add(r.line, ckMode, "mode_selected of job %d op %d records %s %v; the trace gives %v", r.job, r.op, k, m.state[k], got)
		}
	}
	c.modes = append(c.modes, m)
}

// replayedState is the ModeState of job j's routing as the replay sees it
// now, recent_rejections aside (the messages give it).
func (c *checker) replayedState(j *jobSt) map[string]float64 {
	s := map[string]float64{"power_headroom": 1}
	if c.hdr.capKW > 0 {
		s["power_headroom"] = 1 - float64(c.power())/1000/c.hdr.capKW // the draw now: the instant's power_change may follow
	}
	wip := c.tot.released - c.tot.completed
	s["wip"] = float64(wip)
	s["wip_load"] = 0
	if c.hdr.wipCap > 0 {
		s["wip_load"] = float64(wip) / float64(c.hdr.wipCap)
	}
	s["backlog"] = float64(c.nArrived - c.tot.released)
	op, _ := j.product.opType(j.fin)
	var down, blocked, capable, capableDown, free int
	for ci, cell := range c.plant.cells {
		cellDown := 0
		for k := range c.machines[ci] {
			if c.machines[ci][k].state == mDown {
				cellDown++
			}
		}
		down += cellDown
		blocked += len(c.blockedQ[ci])
		if cell.caps[op.Op] > 0 {
			capable++
			free += cell.buffer - c.occ[ci]
			if cellDown > 0 {
				capableDown++
			}
		}
	}
	s["down_machines"], s["blocked_jobs"] = float64(down), float64(blocked)
	s["capable_cells"], s["capable_cells_down"], s["capable_free_slots"] = float64(capable), float64(capableDown), float64(free)
	work := 0.0
	for _, o := range j.product.route[min(j.fin, len(j.product.route)):] {
		work += o.Time
	}
	s["slack"] = math.Round((j.due-c.t-work)*100) / 100
	s["reroute"] = 0
	if j.relFrom >= 0 {
		s["reroute"] = 1
	}
	return s
}

// msgRec is the part of a messages.jsonl line the mode check reads.
type msgRec struct {
	step int
	t    float64
	typ  string
}

// checkModes checks the mode_selected records against the paradigm of
// the manifest, the messages and the decisions.
func checkModes(c *checker, rules *paradigmRules, own ownMode, msgs []msgRec, audits []auditLine, add func(check, format string, args ...any)) {
	if rules == nil {
		if len(c.modes) > 0 {
			add(ckMode, "trace.jsonl:%d: mode_selected under paradigm %q, which has no adaptive rules", c.modes[0].line, own.id)
		}
		return
	}
	window := rules.RejectionWindow
	if window <= 0 {
		window = 300 // coord.DefaultRejectionWindow, as docs/paradigms.md gives it
	}
	routing := map[string]struct {
		routing string
		bids    bool
	}{own.id: {own.routing, own.bids}}
	for _, m := range rules.Modes {
		routing[m.ID] = struct {
			routing string
			bids    bool
		}{m.Routing, m.Bids}
	}
	for id, b := range builtinRouting {
		if _, taken := routing[id]; !taken {
			routing[id] = b
		}
	}
	type key struct{ job, op int }
	spells := map[key][]*modeRec{}
	selections := map[int]*auditLine{} // the select_mode decisions by step
	for i := range audits {
		if a := &audits[i]; a.Kind == "select_mode" && a.Step != nil {
			selections[*a.Step] = a
		}
	}
	for i := range c.modes {
		m := &c.modes[i]
		n := 0
		for _, x := range msgs {
			if x.typ == "reject" && x.step < m.step && x.t > m.t-window && x.t <= m.t {
				n++
			}
		}
		if float64(n) != m.state["recent_rejections"] {
			add(ckMode, "trace.jsonl:%d: mode_selected of job %d op %d records recent_rejections %v; messages.jsonl gives %d",
				m.line, m.job, m.op, m.state["recent_rejections"], n)
		}
		if rules.Selector == "agent" {
			checkAgentChoice(m, rules.Offer, selections, add)
		} else {
			wantRule, wantMode := -1, own.id
			for k := range rules.Rules {
				if rules.Rules[k].When.holds(m.state) {
					wantRule, wantMode = k, rules.Rules[k].Mode
					break
				}
			}
			if m.rule != wantRule || m.mode != wantMode {
				add(ckMode, "trace.jsonl:%d: job %d op %d went to mode %q (rule %d); the rules give %q (rule %d) for the recorded state",
					m.line, m.job, m.op, m.mode, m.rule, wantMode, wantRule)
			}
		}
		k := key{m.job, m.op}
		spells[k] = append(spells[k], m)
	}
	for i, a := range audits {
		if a.Payload == nil || a.Payload.Context.WorkItem == nil || a.Step == nil {
			continue
		}
		w := a.Payload.Context.WorkItem
		var m *modeRec
		for _, s := range spells[key{w.Job, w.Op}] {
			if s.step <= *a.Step {
				m = s
			}
		}
		au := a.Payload.Context.Authority
		switch {
		case m == nil:
			add(ckMode, "decisions.jsonl:%d: a decision on job %d op %d with no mode_selected before it", i+1, w.Job, w.Op)
			continue
		case a.Kind == "select_mode":
			if au != nil {
				add(ckMode, "decisions.jsonl:%d: the mode_selector's payload already names a mode", i+1)
			}
			continue
		case au == nil:
			add(ckMode, "decisions.jsonl:%d: the payload of job %d op %d does not say which mode governs it", i+1, w.Job, w.Op)
			continue
		case au.Mode != m.mode || au.Rule != m.rule || au.Paradigm != own.id:
			add(ckMode, "decisions.jsonl:%d: the payload says paradigm %q mode %q (rule %d); trace.jsonl:%d chose %q (rule %d)",
				i+1, au.Paradigm, au.Mode, au.Rule, m.line, m.mode, m.rule)
			continue
		}
		r := routing[m.mode]
		if au.Routing != r.routing {
			add(ckMode, "decisions.jsonl:%d: the payload gives routing %q for mode %q, whose routing is %q", i+1, au.Routing, m.mode, r.routing)
		}
		hasArea := r.routing == "hierarchical" || r.routing == "holonic_hybrid"
		if role := a.Payload.Role; role == "area" && !hasArea || a.Payload.Kind == "bid" && !r.bids {
			add(ckMode, "decisions.jsonl:%d: a %s %s decision on job %d op %d, which mode %q (routing %s) does not have",
				i+1, role, a.Payload.Kind, w.Job, w.Op, m.mode, r.routing)
		}
	}
}

// ownMode is what the checker reads of the manifest's paradigm.
type ownMode struct {
	id, routing string
	bids        bool
}

// checkAgentChoice checks a mode the mode_selector agent chose: rule −2, an
// offered mode, and the one its select_mode decision at the record's step
// committed, for this job and op.
func checkAgentChoice(m *modeRec, offer []string, selections map[int]*auditLine, add func(check, format string, args ...any)) {
	if m.rule != ruleOfAgent {
		add(ckMode, "trace.jsonl:%d: job %d op %d: rule %d, but the mode_selector agent chooses (rule %d)", m.line, m.job, m.op, m.rule, ruleOfAgent)
		return
	}
	a := selections[m.step]
	if a == nil || a.Payload == nil || a.Action == nil || a.Payload.Context.WorkItem == nil {
		add(ckMode, "trace.jsonl:%d: job %d op %d: no select_mode decision at step %d", m.line, m.job, m.op, m.step)
		return
	}
	w := a.Payload.Context.WorkItem
	opts := a.Payload.Options
	if w.Job != m.job || w.Op != m.op || *a.Action < 0 || *a.Action >= len(opts) || opts[*a.Action].Mode == nil {
		add(ckMode, "trace.jsonl:%d: the select_mode decision at step %d is not about job %d op %d, or its action names no mode", m.line, m.step, m.job, m.op)
		return
	}
	for k, o := range opts {
		if o.Mode == nil || k >= len(offer) || o.Mode.ID != offer[k] {
			add(ckMode, "trace.jsonl:%d: the select_mode options at step %d are not the paradigm's offer %v", m.line, m.step, offer)
			return
		}
	}
	if len(opts) != len(offer) {
		add(ckMode, "trace.jsonl:%d: the select_mode options at step %d are not the paradigm's offer %v", m.line, m.step, offer)
		return
	}
	if got := opts[*a.Action].Mode.ID; got != m.mode {
		add(ckMode, "trace.jsonl:%d: job %d op %d went to mode %q; the mode_selector chose %q at step %d", m.line, m.job, m.op, m.mode, got, m.step)
	}
}
