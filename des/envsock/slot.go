package envsock

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/harness"
)

// ControllerName is the controller name in the metrics of the episodes
// this transport hosts.
const ControllerName = "socket"

// NoAction is the action that says "none" in a step request (the agent
// falls back, as one missing from an HTTP actions body).
const NoAction = -1 << 31

// terminal are the metrics statuses of an end the agents caused: a
// termination; any other end is a truncation (python/coordbench_env's
// TERMINAL_STATUSES).
var terminal = map[string]bool{"done": true, "deadlock": true, "no_progress": true}

// slot is one episode place of a session. Its episode is a
// harness.Stepper driven on the session's goroutine: start runs it to the
// first decision the client must answer and publishes it into the reply,
// act commits the client's actions and runs to the next (no goroutine,
// no coroutine: handing a decision over is a return). A slot is used by
// one goroutine at a time (the session hands each step's slots to
// workers, each slot to one).
type slot struct {
	s *session
	i int

	st      harness.Stepper
	running bool // an episode is under way: a decision waits for the client's actions

	seed uint64
	acts []int32 // the actions for the pending decision, by agent (session.agents)
	list []int   // the same by view, for Stepper.AnswerList

	others  coord.Controller // answers the agents the client does not play (session.played)
	src     coord.Source     // how the last decision's answers are audited, with others
	ask     *coord.Decision  // with others: the part of the pending decision published to the client,
	theirs  *coord.Decision  // the part others answered,
	builtin map[string]int   // and its answers

	sc       harness.Scratch
	tally    *envcore.Tally
	prev     envcore.Progress
	fresh    bool // no decision published yet in this episode
	vec      []float64
	problems []problemNote
	notes    map[string]coord.AgentNote // of the agents without an action (Notes)
	end      *endNote
	payload  json.RawMessage
	err      string
}

type problemNote struct {
	Env     int    `json:"env"`
	Agent   string `json:"agent"`
	Problem string `json:"problem"`
}

type endNote struct {
	Env     int             `json:"env"`
	Status  string          `json:"status"`
	Metrics json.RawMessage `json:"metrics"`
	Error   string          `json:"error,omitempty"`
}

func newSlot(s *session, i int) *slot {
	return &slot{s: s, i: i, tally: envcore.NewTally(), acts: make([]int32, len(s.agents)), vec: make([]float64, s.maxLen)}
}

// clearNotes forgets what the last step said about the slot.
func (sl *slot) clearNotes() {
	sl.problems, sl.end, sl.payload, sl.err = sl.problems[:0], nil, nil, ""
}

// start begins an episode with seed (abandoning the slot's current one) and
// runs it to its first decision for the client, or its end.
func (sl *slot) start(seed uint64) {
	sl.abandon()
	sl.seed, sl.fresh = seed, true
	sl.clearNotes()
	sl.tally.Reset()
	sl.prev = envcore.Progress{}
	if s := sl.s; s.played != nil { // seeded with the episode, as over HTTP
		var err error
		if sl.others, err = s.cfg.Builtins.New(s.others, seed); err != nil {
			sl.err = "others: " + err.Error()
			sl.idle()
			return
		}
	}
	sl.guard(func() {
		s := sl.s
		sl.running = sl.st.Start(context.Background(), harness.Episode{Plant: s.plant, Seed: seed, Mode: s.mode,
			Controller: slotController{sl}, Observer: sl.tally, Scratch: &sl.sc})
		sl.settle()
	})
}

// act answers the pending decision with sl.acts and runs the episode to
// its next decision for the client, or its end.
func (sl *slot) act() {
	sl.clearNotes()
	sl.guard(func() {
		if sl.s.played != nil {
			sl.running = sl.st.Answer(sl.answerSome(), nil)
		} else {
			sl.running = sl.st.AnswerList(sl.answerList(), nil)
		}
		sl.settle()
	})
}

// settle publishes the pending decision, or with others answers the
// decisions without a played agent until one with is pending; it writes
// the end of an episode that has ended.
func (sl *slot) settle() {
	for sl.running {
		if sl.s.played == nil {
			sl.publish(sl.st.Decision())
			break
		}
		if sl.settleSome() {
			break
		}
	}
	if !sl.running {
		sl.writeEnd(sl.st.Finish())
		return
	}
	if sl.err != "" { // its decision cannot be shown: end the episode
		sl.abandon()
	}
}

// guard runs f, a panic (a bug of this package) becoming the slot's error
// and the end of its episode, never a crash of the server.
func (sl *slot) guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			sl.err = fmt.Sprintf("internal error: %v", r)
			sl.running = false
		}
	}()
	f()
}

// abandon drops a running episode without a reply (the next start
// begins afresh).
func (sl *slot) abandon() {
	sl.running = false
	sl.ask, sl.theirs, sl.builtin = nil, nil, nil
}

// slotController is the coord.Controller of a slot's episode as the
// harness sees it: its name, the source of its answers and its notes
// (the answers themselves come from the client, through the Stepper; Act
// is never called).
type slotController struct{ sl *slot }

// Name implements coord.Controller: "socket", or "socket+<others>" for a
// client that plays some agents.
func (c slotController) Name() string {
	if s := c.sl.s; s.played != nil {
		return ControllerName + "+" + s.others
	}
	return ControllerName
}

// Source implements coord.Controller: external, or for a client that
// plays some agents, builtin for a decision it did not see (the Stepper
// asks when the step is answered).
func (c slotController) Source() coord.Source {
	if c.sl.s.played != nil {
		return c.sl.src
	}
	return coord.SourceExternal
}

// Notes implements coord.Annotator: an agent left without an action is
// noted as the HTTP transport notes it, so that its feedback in the next
// payload reads the same.
func (c slotController) Notes() map[string]coord.AgentNote {
	if len(c.sl.notes) == 0 {
		return nil
	}
	return c.sl.notes
}

// Act implements coord.Controller; the Stepper never calls it.
func (c slotController) Act(context.Context, *coord.Decision) (map[string]int, error) {
	return nil, fmt.Errorf("%w: the socket's episodes are answered through their slot", coord.ErrAbort)
}

// answerList turns the slot's actions into answers by view (the
// Stepper's AnswerList), noting the agents that fall back and why.
func (sl *slot) answerList() []int {
	views := sl.st.Views()
	if cap(sl.list) < len(views) {
		sl.list = make([]int, len(views))
	}
	list := sl.list[:len(views)]
	clear(sl.notes)
	sl.problems = sl.problems[:0]
	bad := false
	for i, v := range views {
		a := int(sl.acts[sl.s.index[v.AgentID]])
		if a == NoAction {
			list[i], bad = coord.NoAnswer, true
			continue
		}
		list[i] = a
		if a < 0 || a >= len(v.ActionMask) || !v.ActionMask[a] {
			bad = true
		}
	}
	if bad { // the problems and notes, in agent order
		sl.answer(sl.st.Decision(), sl.acts)
	}
	return list
}

// answer turns the slot's actions into the answer map, noting the agents
// that fall back and why, in the words of the HTTP transport.
func (sl *slot) answer(d *coord.Decision, acts []int32) map[string]int {
	ans := d.Answer()
	sl.problems = sl.problems[:0]
	clear(sl.notes)
	for ai, id := range sl.s.agents {
		v := d.ActiveAgents[id]
		if v == nil {
			continue
		}
		a := int(acts[ai])
		if a == NoAction {
			const missing = "no action for this agent"
			sl.problems = append(sl.problems, problemNote{sl.i, id, missing + "; it falls back"})
			if sl.notes == nil {
				sl.notes = map[string]coord.AgentNote{}
			}
			sl.notes[id] = coord.AgentNote{Error: missing}
			continue
		}
		ans[id] = a
		if a < 0 || a >= len(v.ActionMask) || !v.ActionMask[a] {
			sl.problems = append(sl.problems, problemNote{sl.i, id, fmt.Sprintf("action %d is not legal; it falls back", a)})
		}
	}
	return ans
}

// publish writes decision d into the slot's entries of the reply.
func (sl *slot) publish(d *coord.Decision) {
	defer func() {
		if r := recover(); r != nil {
			sl.err = fmt.Sprintf("internal error: %v", r)
		}
	}()
	s := sl.s
	prog := sl.tally.At(d.Time)
	r := 0.0
	if s.weights != nil && !sl.fresh {
		r = s.weights.Reward(sl.prev, prog, nil)
	}
	sl.prev, sl.fresh = prog, false
	sl.put(StatePending, d.Step, prog, r, false, false)
	found := 0
	for ai := range s.agents {
		v := d.ActiveAgents[s.agents[ai]]
		if v != nil {
			found++
			if sh := &s.shapes[ai]; len(v.Options) > sh.Actions {
				sl.err = fmt.Sprintf("%s has %d options, more than its action space (%d)", sh.Agent, len(v.Options), sh.Actions)
			}
		}
		sl.putAgent(ai, v, d.Time)
	}
	if found != len(d.ActiveAgents) {
		for id := range d.ActiveAgents {
			if _, ok := s.index[id]; !ok {
				sl.err = fmt.Sprintf("active agent %s is not among the episode's agents", id)
			}
		}
	}
	if s.payloads {
		b, err := json.Marshal(d)
		if err != nil {
			sl.err = "cannot encode the payload: " + err.Error()
		}
		sl.payload = b
	}
}

// writeEnd writes the end of the episode into the slot's entries.
func (sl *slot) writeEnd(res harness.Result) {
	s := sl.s
	m := &res.Metrics
	final := sl.tally.At(m.GMk)
	r := 0.0
	if s.weights != nil {
		r = s.weights.Reward(sl.prev, final, m)
	}
	sl.prev = final
	term := terminal[m.Status]
	sl.put(StateEnded, 0, final, r, term, !term)
	for ai := range s.agents {
		sl.putAgent(ai, nil, 0)
	}
	mb, err := json.Marshal(m)
	if err != nil {
		sl.err = "cannot encode the metrics: " + err.Error()
	}
	sl.end = &endNote{Env: sl.i, Status: m.Status, Metrics: mb}
	if res.Err != nil {
		sl.end.Error = res.Err.Error()
	}
}

// put writes the slot's scalar entries.
func (sl *slot) put(state, step int, p envcore.Progress, reward float64, term, trunc bool) {
	s, i := sl.s, sl.i
	l, b := &s.lay, s.reply
	putF64(b, l.time+8*i, p.Time)
	putF64(b, l.reward+8*i, reward)
	putF64(b, l.tardiness+8*i, p.Tardiness)
	putU64(b, l.seed+8*i, sl.seed)
	putI32(b, l.step+4*i, step)
	putI32(b, l.completed+4*i, p.Completed)
	putI32(b, l.released+4*i, p.Released)
	b[l.state+i], b[l.terminated+i], b[l.truncated+i] = byte(state), flag(term), flag(trunc)
}

// putAgent writes agent ai's active flag, mask and vector (zeros for an
// inactive one).
func (sl *slot) putAgent(ai int, v *coord.View, now float64) {
	s, i := sl.s, sl.i
	l, b := &s.lay, s.reply
	sh := &s.shapes[ai]
	b[l.active+i*l.a+ai] = flag(v != nil)
	mask := b[l.mask+i*l.m+s.maskOff[ai]:][:sh.Actions]
	clear(mask)
	if v != nil {
		for _, k := range v.LegalActions {
			if k >= 0 && k < len(mask) {
				mask[k] = 1
			}
		}
	}
	off := l.obs + 8*(i*l.lv+s.obsOff[ai])
	if dst := f64s(b, off, sh.Length); dst != nil { // encoded in place
		sh.Encode(dst, v, now)
		return
	}
	vec := sl.vec[:sh.Length]
	sh.Encode(vec, v, now)
	for k, x := range vec {
		putF64(b, off+8*k, x)
	}
}

// idle writes a slot that did nothing this step: state idle, zeros.
func (sl *slot) idle() {
	sl.put(StateIdle, 0, envcore.Progress{}, 0, false, false)
	for ai := range sl.s.agents {
		sl.putAgent(ai, nil, 0)
	}
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}
