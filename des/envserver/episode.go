package envserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
)

// Episode states.
const (
	StateRunning = "running" // decisions are being played
	StateClosing = "closing" // closed: the rest falls back (a decision timeout), or the episode stops (stop)
	StateDone    = "done"    // the episode ended; metrics and artifacts are ready
)

// ControllerName is the controller name recorded in manifests and metrics.
const ControllerName = "http"

// pending is a published decision waiting for its actions.
type pending struct {
	step    int
	payload []byte // the Decision's JSON, marshalled when published
	// progress is the tally when the decision was published.
	progress Progress
	ids      []string
	masks    map[string][]bool
	start    time.Time
	reply    chan reply // buffered (1); written once by the actions handler
}

type reply struct {
	actions map[string]int
	notes   map[string]coord.AgentNote
}

// episode is one hosted episode. Its controller side (Act) runs in the
// episode's goroutine; the HTTP side reads and answers pending decisions.
type episode struct {
	id       string
	instance string
	paradigm string
	seed     uint64
	dir      string
	timeout  time.Duration // for each decision's actions
	// agents are the agent ids the paradigm may activate (Status.Agents).
	agents []string
	// played and others: the agents the client plays and the built-in
	// controller answering the rest (both empty: it plays every agent).
	played []string
	others string
	offer  []string     // the mode selector's options (Status.Offer)
	layout []AreaLayout // set before the episode is shared
	// tally is written by the run goroutine only (as a tracer); Act and
	// finish copy it out.
	tally *tally
	// showProgress: the client asked for the tally ("progress": true at
	// create); it is more than the agents' payloads show.
	showProgress bool

	closeOnce sync.Once
	closeCh   chan struct{} // closed by close(): every later decision falls back
	stopOnce  sync.Once
	stopCh    chan struct{} // closed by stop(): the run ends before its next decision (harness.Episode.Stop)
	doneCh    chan struct{} // closed when the run goroutine has finished

	mu        sync.Mutex
	state     string
	reason    string // why the episode was closed early
	pend      *pending
	changed   chan struct{} // closed and replaced on every state change
	decisions int           // decisions published
	answered  int           // decisions answered through the API
	result    *harness.Result
	final     Progress // once done
	runErr    error
	notes     map[string]coord.AgentNote // of the last decision (Annotator)
	touched   time.Time                  // the last request that named it (reclaim.go)
	timedOut  bool                       // a decision timeout closed it: its client is gone
	reclaimed bool                       // no longer held by the server
}

func newEpisode(id, instance, paradigm string, seed uint64, dir string, timeout time.Duration, agents []string) *episode {
	return &episode{id: id, instance: instance, paradigm: paradigm, seed: seed, dir: dir, timeout: timeout,
		agents: agents, tally: newTally(), closeCh: make(chan struct{}), stopCh: make(chan struct{}), doneCh: make(chan struct{}), state: StateRunning, changed: make(chan struct{})}
}

// signal wakes long-polls; e.mu must be held.
func (e *episode) signal() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// close makes the pending decision and every later one fall back.
func (e *episode) close(reason string) {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		if e.state == StateRunning {
			e.state, e.reason = StateClosing, reason
			e.signal()
		}
		e.mu.Unlock()
		close(e.closeCh)
	})
}

// stop closes the episode and ends its run before its next decision
// (status interrupted): DELETE, Close, a reclaim, and a spent artifact
// budget stop an episode rather than let it play on with fallbacks.
func (e *episode) stop(reason string) {
	e.close(reason)
	e.stopOnce.Do(func() { close(e.stopCh) })
}

// overBudget stops the episode whose artifact budget b is spent; the
// reason says so even if a decision timeout closed it before.
func (e *episode) overBudget(b *budget, name string) {
	reason := "stopped at " + name + ": " + b.message()
	e.mu.Lock()
	if e.state != StateDone {
		if e.state == StateRunning {
			e.state = StateClosing
		}
		e.reason = reason
		e.signal()
	}
	e.mu.Unlock()
	e.stop(reason)
}

// finish records the result of the run.
func (e *episode) finish(res harness.Result, err error) {
	final := e.tally.at(res.Metrics.GMk)
	e.mu.Lock()
	e.state, e.result, e.runErr, e.pend, e.final = StateDone, &res, err, nil, final
	e.signal()
	e.mu.Unlock()
	close(e.doneCh)
}

// controller is the coord.Controller of an episode: Act publishes the
// decision and blocks until the actions arrive over HTTP.
type controller struct{ e *episode }

func (c controller) Name() string         { return ControllerName }
func (c controller) Source() coord.Source { return coord.SourceExternal }

// Notes implements coord.Annotator.
func (c controller) Notes() map[string]coord.AgentNote {
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	n := c.e.notes
	c.e.notes = nil
	return n
}

// Act implements coord.Controller. A closed episode, a decision timeout or
// a done ctx (which closes the episode) is an error: the interpreter falls
// back for every agent and audits why.
func (c controller) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	actions, notes, err := c.e.ask(ctx, d)
	c.e.setNotes(notes)
	return actions, err
}

// setNotes keeps the notes of the decision being answered (Notes).
func (e *episode) setNotes(notes map[string]coord.AgentNote) {
	e.mu.Lock()
	e.notes = notes
	e.mu.Unlock()
}

// ask publishes d to the client and waits for its actions. A closed
// episode, a decision timeout or a done ctx (which closes the episode) is
// an error.
func (e *episode) ask(ctx context.Context, d *coord.Decision) (map[string]int, map[string]coord.AgentNote, error) {
	ids := make([]string, 0, len(d.ActiveAgents))
	masks := make(map[string][]bool, len(d.ActiveAgents))
	for id, v := range d.ActiveAgents {
		ids = append(ids, id)
		masks[id] = slices.Clone(v.ActionMask)
	}
	slices.Sort(ids)
	// The interpreter reuses d after Apply: marshal it now.
	b, err := json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot encode the payload: %w", err)
	}
	p := &pending{step: d.Step, payload: b, progress: e.tally.at(d.Time), ids: ids, masks: masks, start: time.Now(), reply: make(chan reply, 1)}
	e.mu.Lock()
	e.notes = nil
	if e.state != StateRunning {
		reason := e.reason
		e.mu.Unlock()
		return nil, nil, errors.New("episode closed: " + reason)
	}
	e.pend = p
	e.decisions++
	e.signal()
	e.mu.Unlock()

	timer := time.NewTimer(e.timeout)
	defer timer.Stop()
	select {
	case r := <-p.reply:
		e.mu.Lock()
		e.answered++
		e.mu.Unlock()
		return r.actions, r.notes, nil
	case <-e.closeCh:
	case <-timer.C:
		e.close(fmt.Sprintf("no actions for step %d within %s", d.Step, e.timeout))
		e.mu.Lock()
		e.timedOut = true
		e.mu.Unlock()
	case <-ctx.Done():
		e.close("stopped: " + ctx.Err().Error())
	}
	e.mu.Lock()
	if e.pend == p {
		e.pend = nil
	}
	reason := e.reason
	e.mu.Unlock()
	// An answer may have raced the close; it is dropped like a late reply.
	return nil, nil, errors.New("episode closed: " + reason)
}

// ActionsRequest is the body of POST /v1/episodes/{id}/actions.
type ActionsRequest struct {
	Step    *int                        `json:"step"`
	Actions map[string]json.RawMessage  `json:"actions"`
	Notes   map[string]extctl.ReplyNote `json:"notes,omitempty"`
}

// ActionsResponse answers an accepted actions body.
type ActionsResponse struct {
	Step int `json:"step"`
	// Problems lists, per agent, why its action will fall back (missing,
	// not an integer, out of range or masked). Empty when all are usable.
	Problems map[string]string `json:"problems,omitempty"`
	// Warnings lists, per agent, what of its answer was ignored without a
	// fallback: notes with impossible counts (negative, or over 2^40).
	Warnings map[string]string `json:"warnings,omitempty"`
}

// apiError is an HTTP error with a message.
type apiError struct {
	code int
	msg  string
	// consumed: the decision took the answer (its agents fall back).
	consumed bool
}

func (e *apiError) Error() string { return e.msg }

// submit delivers an actions body to the pending decision. Errors that
// leave the decision pending (malformed JSON, wrong step, nothing
// pending) have consumed=false; a body naming an agent that is not active
// is consumed as a whole, and every agent falls back, as in the process
// protocol.
func (e *episode) submit(body []byte) (*ActionsResponse, *apiError) {
	var req ActionsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &apiError{code: 400, msg: "invalid JSON: " + err.Error()}
	}
	return e.deliver(&req, body)
}

// deliver is submit once the body is parsed; raw is the body as the
// audits record it.
func (e *episode) deliver(req *ActionsRequest, raw []byte) (*ActionsResponse, *apiError) {
	if req.Actions == nil {
		return nil, &apiError{code: 400, msg: `no "actions" object in the body`}
	}
	e.mu.Lock()
	p := e.pend
	state := e.state
	if p == nil {
		e.mu.Unlock()
		if state != StateRunning {
			return nil, &apiError{code: 409, msg: "the episode is " + state + ": no decision pending"}
		}
		return nil, &apiError{code: 409, msg: "no decision pending (poll GET .../decision?wait=1)"}
	}
	if req.Step == nil {
		e.mu.Unlock()
		return nil, &apiError{code: 400, msg: fmt.Sprintf(`no "step" in the body (the pending step is %d)`, p.step)}
	}
	if *req.Step != p.step {
		e.mu.Unlock()
		return nil, &apiError{code: 409, msg: fmt.Sprintf("actions for step %d, but the pending step is %d", *req.Step, p.step)}
	}
	e.pend = nil // taken: a second body for this step gets 409
	e.mu.Unlock()

	lat := float64(time.Since(p.start).Microseconds()) / 1000
	base := coord.AgentNote{LatencyMS: lat} // what every agent's note starts from
	base.SetRaw(string(raw))
	var unknown []string
	for id := range req.Actions {
		if _, ok := p.masks[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		msg := "unknown agents " + strings.Join(unknown, ", ") + " (not active at this step); every agent of the step falls back"
		notes := make(map[string]coord.AgentNote, len(p.ids))
		for _, id := range p.ids {
			note := base
			note.Error = msg
			notes[id] = note
		}
		p.reply <- reply{notes: notes}
		return nil, &apiError{code: 422, msg: msg, consumed: true}
	}
	resp := &ActionsResponse{Step: p.step}
	actions := make(map[string]int, len(p.ids))
	notes := make(map[string]coord.AgentNote, len(p.ids))
	problem := func(id, msg string) {
		if resp.Problems == nil {
			resp.Problems = map[string]string{}
		}
		resp.Problems[id] = msg
	}
	for _, id := range p.ids {
		rn := req.Notes[id]
		if err := rn.Check(); err != nil { // a client's counts are untrusted
			if resp.Warnings == nil {
				resp.Warnings = map[string]string{}
			}
			resp.Warnings[id] = "notes ignored: " + err.Error()
			rn = extctl.ReplyNote{}
		}
		note := base
		note.Model, note.PromptTokens, note.CompletionTokens, note.Calls, note.Cached =
			rn.Model, rn.PromptTokens, rn.CompletionTokens, rn.Calls, rn.Cached
		note.PromptCachedTokens = rn.PromptCached()
		v, ok := req.Actions[id]
		if !ok {
			note.Error = "no action for this agent"
			problem(id, note.Error+"; it falls back")
		} else {
			var i int
			if json.Unmarshal(v, &i) != nil {
				note.Error = "action is not an integer: " + envcore.Trunc(string(v), 40)
				problem(id, note.Error+"; it falls back")
			} else {
				actions[id] = i
				if m := p.masks[id]; i < 0 || i >= len(m) || !m[i] {
					problem(id, fmt.Sprintf("action %d is not legal; it falls back", i))
				}
			}
		}
		notes[id] = note
	}
	p.reply <- reply{actions: actions, notes: notes}
	return resp, nil
}

// next is what an episode offers a client: its pending decision, its end,
// or nothing yet.
type next struct {
	payload  []byte    // the pending Decision, if any
	progress *Progress // only for an episode created with "progress": true
	done     bool
	status   string // metrics.json "status", once done
	metrics  *harness.Metrics
}

// next waits until a decision later than step after is pending or the
// episode has ended, at most until deadline (the zero time: no wait) or
// ctx's end; ok is false when neither happened.
func (e *episode) next(ctx context.Context, after int, deadline time.Time) (n next, ok bool) {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	for {
		e.mu.Lock()
		p, state, ch := e.pend, e.state, e.changed
		switch {
		case p != nil && p.step > after:
			n = next{payload: p.payload, progress: e.shown(p.progress)}
			e.mu.Unlock()
			return n, true
		case state == StateDone:
			n = next{done: true, progress: e.shown(e.final)}
			if e.result != nil {
				m := e.result.Metrics
				n.status, n.metrics = m.Status, &m
			}
			e.mu.Unlock()
			return n, true
		}
		e.mu.Unlock()
		if timer == nil {
			return next{}, false
		}
		select {
		case <-ch:
		case <-timer:
			return next{}, false
		case <-ctx.Done():
			return next{}, false
		}
	}
}

// shown is p for a client that asked for progress, else nil.
func (e *episode) shown(p Progress) *Progress {
	if !e.showProgress {
		return nil
	}
	return &p
}
