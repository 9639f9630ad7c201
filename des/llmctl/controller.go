package llmctl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/telemetry"
)

// Completer is one chat-completion endpoint and model (an *llm.Client).
type Completer interface {
	Complete(ctx context.Context, msgs []llm.Message) (*llm.Response, error)
}

// frameworks backs Frameworks.
var frameworks = []string{"graph", "relay"}

// Frameworks returns the orchestration styles.
func Frameworks() []string { return slices.Clone(frameworks) }

// Bounds of controller-side memory.
const (
	sharedSize  = 8 // graph: recent decisions in the shared state
	historySize = 4 // relay: an agent's own recent decisions
)

// Model is one model behind a role (or all roles).
type Model struct {
	Name   string // shown in audits and summaries
	Client Completer
}

// DefaultMaxModelFailures is Controller.MaxModelFailures when unset (the
// same as the information-silo agents').
const DefaultMaxModelFailures = 3

// Controller asks a model for every active agent's action.
//
// A model call that fails (after the client's retries: endpoint
// unreachable, key rejected, quota, server errors, ...) leaves its agent
// without an action, like an unusable reply; but MaxModelFailures failed
// calls in a row of one role, or a single replay-cache miss, make Act
// return an error wrapping coord.ErrAbort, which ends the episode (status
// aborted). A call cut short because ctx ended is not counted: the agent
// falls back, as the harness's contract for a cancelled episode wants.
type Controller struct {
	// MaxModelFailures: failed model calls in a row of one role (plant,
	// area, cell, ...), counted over the episode in audit order (step,
	// then agent id), after which Act aborts the episode; a call of that
	// role that returns a reply, usable or not, resets its count. The
	// count is per role, not per run: one role's model down while the
	// others answer is an outage too. 0 means DefaultMaxModelFailures.
	MaxModelFailures int
	// AbortOnModelError makes the first failed model call abort the
	// episode (MaxModelFailures 1). Suites set it, as the information-silo
	// suites do: a case is never scored after an endpoint failure; it
	// fails and reruns on resume, replaying its good calls from the cache.
	AbortOnModelError bool
	// Label, if set, names the controller's models in manifests, metrics
	// and summaries instead of ModelNames' list (an experiment's model
	// entry named apart from its model, say two entries of one model at
	// two endpoints).
	Label string

	framework string
	models    map[string]Model // by role; "" is the default
	parsing   string           // reply-parsing rule (parse.go); "" is published

	notes   map[string]coord.AgentNote
	shared  []string            // graph: compact summaries across activations
	history map[string][]string // relay: per-agent observation history
	handoff []string            // relay: the previous step's decisions, handed to the next agents
	prev    map[string]bool     // relay: agents of the previous step

	failures map[string]int // failed model calls in a row, by role
}

// New makes an LLM controller. models maps a role ("plant", "area",
// "cell") or "" (every other role) to its model.
func New(framework string, models map[string]Model) (*Controller, error) {
	if !slices.Contains(frameworks, framework) {
		return nil, fmt.Errorf("unknown framework %q (want graph or relay)", framework)
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("llm controller: no model")
	}
	for role, m := range models {
		if m.Client == nil {
			return nil, fmt.Errorf("llm controller: no client for role %q", role)
		}
	}
	return &Controller{framework: framework, models: models, history: map[string][]string{}}, nil
}

// Name implements coord.Controller.
func (c *Controller) Name() string { return "llm" }

// Source implements coord.Controller.
func (c *Controller) Source() coord.Source { return coord.SourceLLM }

// Framework is the orchestration style.
func (c *Controller) Framework() string { return c.framework }

// ModelNames lists the models by role, as "role=name" (or just the name
// when one model serves every role).
func (c *Controller) ModelNames() string {
	if c.Label != "" {
		return c.Label
	}
	if len(c.models) == 1 {
		for _, m := range c.models {
			return m.Name
		}
	}
	s := ""
	for _, role := range slices.Sorted(maps.Keys(c.models)) {
		if s != "" {
			s += ","
		}
		r := role
		if r == "" {
			r = "default"
		}
		s += r + "=" + c.models[role].Name
	}
	return s
}

func (c *Controller) model(role string) Model {
	if m, ok := c.models[role]; ok {
		return m
	}
	return c.models[""]
}

// Notes implements coord.Annotator: what each agent's call returned.
func (c *Controller) Notes() map[string]coord.AgentNote { return c.notes }

type answer struct {
	action int
	ok     bool
	note   coord.AgentNote
	called bool   // the model call was made
	role   string // the agent's role (failures are counted by role)
	err    error  // the model call failed (nil: it returned a reply)
}

// Act implements coord.Controller: one model call per active agent, all
// in flight at once (the endpoint's limit applies), each bounded by ctx.
// An agent whose reply is unusable gets no action, and its note says why.
func (c *Controller) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	answers := make([]answer, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		v := d.ActiveAgents[id]
		p, err := newPrompt(v, c.state(id))
		if err != nil {
			answers[i].note.Error = err.Error()
			continue
		}
		wg.Add(1)
		go func(i int, v *coord.View, p prompt) {
			defer wg.Done()
			answers[i] = c.ask(ctx, v, p)
		}(i, v, p)
	}
	wg.Wait()
	actions := make(map[string]int, len(ids))
	c.notes = make(map[string]coord.AgentNote, len(ids))
	lines := make([]string, len(ids)) // what each agent chose, "" if nothing usable
	for i, id := range ids {
		a := answers[i]
		c.notes[id] = a.note
		if a.ok {
			actions[id] = a.action
			lines[i] = fmt.Sprintf("t=%.1f %s %s: %s", d.Time, id, d.ActiveAgents[id].Kind, describe(d.ActiveAgents[id].Options[a.action]))
		}
	}
	c.remember(ids, lines)
	return actions, c.modelFailures(ctx, answers)
}

// modelFailures counts the step's failed model calls by role, in agent id
// order, and returns an error wrapping coord.ErrAbort when the episode
// must end: a replay-cache miss, or MaxModelFailures failures in a row of
// one role.
func (c *Controller) modelFailures(ctx context.Context, answers []answer) error {
	limit := cmp.Or(c.MaxModelFailures, DefaultMaxModelFailures)
	if c.AbortOnModelError {
		limit = 1
	}
	for _, a := range answers {
		switch {
		case !a.called:
		case a.err == nil:
			delete(c.failures, a.role)
		case ctx.Err() != nil || llm.ErrorClass(a.err) == llm.ClassCanceled: // the episode's ctx ended: fall back
		case errors.Is(a.err, llm.ErrCacheMiss):
			return fmt.Errorf("%w: %w", coord.ErrAbort, a.err)
		default:
			if c.failures == nil {
				c.failures = map[string]int{}
			}
			if c.failures[a.role]++; c.failures[a.role] >= limit {
				return fmt.Errorf("%w: model calls failed %d times in a row (%s) for role %s, last: %w",
					coord.ErrAbort, c.failures[a.role], cmp.Or(llm.ErrorClass(a.err), "error"), a.role, a.err)
			}
		}
	}
	return nil
}

func (c *Controller) ask(ctx context.Context, v *coord.View, p prompt) answer {
	m := c.model(v.Role)
	ctx = telemetry.ForAgent(ctx, v.AgentID) // its model call is a child of the agent's span
	var a answer
	a.note.Model = m.Name
	a.note.PromptSHA256, a.note.FrameworkState = PromptSHA256(p.msgs), p.framework
	a.called, a.role = true, v.Role
	resp, err := m.Client.Complete(ctx, p.msgs)
	if err != nil {
		a.note.Error = "model call failed: " + err.Error()
		a.err = err
		if le := (*llm.Error)(nil); errors.As(err, &le) { // an unusable reply's tokens are spent all the same
			a.note.PromptTokens, a.note.CompletionTokens, a.note.PromptCachedTokens = le.Usage.PromptTokens, le.Usage.CompletionTokens, le.Usage.PromptCachedTokens
			a.note.Retries = max(0, le.Attempts-1)
		}
		return a
	}
	a.note.SetRaw(resp.Content) // the cache keeps the whole reply
	a.note.Calls = 1
	a.note.PromptTokens, a.note.CompletionTokens, a.note.PromptCachedTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.PromptCachedTokens
	a.note.LatencyMS = float64(resp.Latency.Microseconds()) / 1000
	a.note.Cached = resp.Cached
	a.note.Retries = max(0, resp.Attempts-1)
	act, how, err := ParseReplyWith(c.parsing, resp.Content, v.LegalActions)
	if err != nil {
		a.note.Error = err.Error()
		if ie := (*IllegalIndexError)(nil); errors.As(err, &ie) && ie.Integer && ie.Index >= 0 && ie.Index <= int64(len(v.Options)) {
			a.note.Error += coord.WithheldEscalation(v, int(ie.Index))
		}
		return a
	}
	a.action, a.ok, a.note.Parse = act, true, how
	return a
}

// state is the framework's controller-side memory for agent id.
func (c *Controller) state(id string) *frameworkState {
	if c.framework == "graph" {
		return &frameworkState{Name: "graph", Shared: c.shared}
	}
	fs := &frameworkState{Name: "relay", History: c.history[id]}
	if !c.prev[id] {
		fs.Handoff = c.handoff
	}
	return fs
}

// remember updates controller-side memory after a step: lines[i] is what
// agent ids[i] chose ("" if its reply was unusable).
func (c *Controller) remember(ids, lines []string) {
	var step []string
	for _, l := range lines {
		if l != "" {
			step = append(step, l)
		}
	}
	if c.framework == "graph" {
		c.shared = appendBounded(c.shared, sharedSize, step...)
		return
	}
	c.prev = map[string]bool{}
	for i, id := range ids {
		c.prev[id] = true
		if lines[i] != "" {
			c.history[id] = appendBounded(c.history[id], historySize, lines[i])
		}
	}
	c.handoff = step
}

func appendBounded(s []string, n int, add ...string) []string {
	s = append(slices.Clone(s), add...)
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// describe summarizes an option for controller-side memory.
func describe(o coord.Option) string {
	switch t := o.Target(); {
	case o.Job != nil:
		return o.Action + " job " + t
	case t != "":
		return o.Action + " " + t
	}
	return o.Action
}
