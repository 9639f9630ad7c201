package extctl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/telemetry"
)

// Controller is an external runner behind coord.Controller, for one
// episode. Start it, pass it to harness.Run, then call End with the
// metrics (or Close). It is not safe for concurrent use, except that the
// contexts given to Start and Act may be cancelled at any time.
type Controller struct {
	cfg   Config
	cmd   *exec.Cmd
	stdin *os.File
	lines chan lineMsg
	// exited is closed once the runner's process has been waited for;
	// waitErr is then its exit status.
	exited  chan struct{}
	waitErr error
	done    chan struct{} // closed when the controller lets go of the runner
	log     *lockedWriter
	token   string // the runner's proxy token (Proxy.Issue), revoked by End

	mu         sync.Mutex // guards the fields below (the stdout reader adds noise)
	violations []Violation
	counts     map[string]int
	step       int
	stopped    error // why Start's context stopped the runner

	ready     Ready
	failure   *protoError
	failStep  int
	notes     map[string]coord.AgentNote
	latencies []time.Duration
	steps     int // decisions asked (Act calls)
	sent      int // decisions sent to the runner
	answered  int // decisions answered with a protocol line
	ended     bool
	stopOnce  sync.Once
	doneOnce  sync.Once
	buf       []byte
	stopCtx   func() bool
	llmStep   bool // the last decision got a model reply through the proxy
	// proxyFails counts the failed calls in a row through the proxy
	// (proxyOutage).
	proxyFails int
}

// Name implements coord.Controller.
func (c *Controller) Name() string { return Name }

// Source implements coord.Controller: external decisions, or llm ones
// when the last decision got at least one model reply through the proxy
// (the interpreter asks right after Act). A decision whose proxied calls
// all failed is the runner's own: external.
func (c *Controller) Source() coord.Source {
	if c.llmStep {
		return coord.SourceLLM
	}
	return coord.SourceExternal
}

// ModelNames reports the model the runner declared in ready ("" if none),
// for metrics and manifests (harness.ModelController).
func (c *Controller) ModelNames() string { return c.ready.Model }

// Framework reports the framework the runner declared in ready.
func (c *Controller) Framework() string { return c.ready.Framework }

// Runner is the runner's ready message (zero until it answered hello).
func (c *Controller) Runner() Ready { return c.ready }

// Notes implements coord.Annotator: for each agent of the last decision,
// the raw reply, the round-trip latency, the runner's own notes, and why
// the reply was unusable if it was.
func (c *Controller) Notes() map[string]coord.AgentNote { return c.notes }

// Failed reports why the runner was stopped during the episode (it exited,
// timed out, could not start, never said ready, or the context given to
// Start ended), or nil.
func (c *Controller) Failed() error {
	if c.failure == nil {
		return nil
	}
	if c.failStep == StepHello {
		return fmt.Errorf("external runner failed before the first decision: %s", c.failure.msg)
	}
	return fmt.Errorf("external runner failed at step %d: %s", c.failStep, c.failure.msg)
}

// Act implements coord.Controller. A bad reply is reported per agent in
// Notes, and the interpreter falls back for the agents without a usable
// action. Act returns an error wrapping coord.ErrAbort, which ends the
// episode (status aborted), when the runner has failed (it exited, timed
// out, could not start, never said ready: Failed), unless the context
// given to Start stopped it; and, with a proxy, when ProxyConfig.MaxFailures
// calls in a row through it have failed (the upstream is down) or one
// missed the replay cache. With a proxy, the model calls completed
// between sending the decision and reading its reply go into the notes
// of the step's agents. Once ctx is done, Act stops waiting for the reply
// and the runner, as after a timeout.
func (c *Controller) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	c.llmStep = false
	p := c.cfg.Proxy
	if p == nil {
		actions := c.act(ctx, d)
		return actions, c.abort()
	}
	between := p.Take() // calls made between decisions
	p.unattributed(len(between))
	outage := c.proxyOutage(between)
	sent := c.sent
	p.follow(ctx)
	actions := c.act(ctx, d)
	p.follow(telemetry.WithStep(ctx, nil)) // calls until the next step: the episode's
	calls := p.Take()
	if outage == nil {
		outage = c.proxyOutage(calls)
	}
	if c.sent == sent {
		p.unattributed(len(calls))
	} else {
		attribute(c.notes, slices.Sorted(maps.Keys(d.ActiveAgents)), calls)
		c.llmStep = slices.ContainsFunc(calls, func(call ProxyCall) bool { return !call.Failed })
	}
	if err := c.abort(); err != nil {
		return actions, err
	}
	return actions, outage
}

// abort is the error that ends the episode of a failed runner: nil while
// it runs, or when a context stopped it (a cancelled episode falls back,
// as the harness's contract wants).
func (c *Controller) abort() error {
	if c.failure == nil || c.failure.stopped {
		return nil
	}
	return fmt.Errorf("%w: %w", coord.ErrAbort, c.Failed())
}

// proxyOutage counts the failed calls in a row through the proxy, in the
// order they completed, and returns the error that ends the episode once
// there are ProxyConfig.MaxFailures of them, or at a replay-cache miss. A
// call that got a reply resets the count; a call cut short by its
// context (the runner went away) is not counted.
func (c *Controller) proxyOutage(calls []ProxyCall) error {
	p := c.cfg.Proxy
	limit := cmp.Or(p.cfg.MaxFailures, DefaultMaxProxyFailures)
	for _, call := range calls {
		switch {
		case !call.Failed:
			c.proxyFails = 0
		case call.Class == llm.ClassCanceled:
		case call.Class == llm.ClassCacheMiss:
			return fmt.Errorf("%w: a model call through the proxy missed the replay cache: %s", coord.ErrAbort, call.Error)
		default:
			if c.proxyFails++; c.proxyFails >= limit {
				return fmt.Errorf("%w: model calls through the proxy failed %d times in a row (%s): the upstream is down; last: %s",
					coord.ErrAbort, c.proxyFails, cmp.Or(call.Class, "error"), call.Error)
			}
		}
	}
	return nil
}

func (c *Controller) act(ctx context.Context, d *coord.Decision) map[string]int {
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	c.notes = make(map[string]coord.AgentNote, len(ids))
	c.steps++
	c.mu.Lock()
	c.step = d.Step
	c.mu.Unlock()
	if c.failure != nil {
		c.allFail(ids, c.deadReason())
		return nil
	}
	c.discardUnsolicited(d.Step)
	c.buf = append(c.buf[:0], `{"type":"decision","payload":`...)
	b, err := json.Marshal(d)
	if err != nil { // a payload is plain data
		c.allFail(ids, "cannot encode the payload: "+err.Error())
		return nil
	}
	c.buf = append(append(c.buf, b...), "}\n"...)
	start := time.Now()
	deadline := start.Add(c.cfg.Timeout)
	c.sent++
	if perr := c.write(c.buf, deadline); perr != nil {
		c.fail(d.Step, perr)
		c.allFail(ids, perr.msg)
		return nil
	}
	for {
		line, perr := c.next(ctx, deadline)
		if perr != nil {
			if perr.fatal {
				c.fail(d.Step, perr)
			} else {
				c.violate(d.Step, perr.code, SevError, perr.msg)
			}
			c.allFail(ids, perr.msg)
			return nil
		}
		lat := time.Since(start)
		r := parseReply(d, line, lat)
		for _, v := range r.violations {
			c.violate(v.Step, v.Code, v.Severity, v.Detail)
		}
		if r.stale {
			continue
		}
		c.notes = r.notes
		c.latencies = append(c.latencies, lat)
		c.answered++
		return r.actions
	}
}

// allFail notes the same error for every agent of the step.
func (c *Controller) allFail(ids []string, msg string) {
	for _, id := range ids {
		c.notes[id] = coord.AgentNote{Error: msg}
	}
}

func (c *Controller) deadReason() string {
	if c.failStep == StepHello {
		return "runner failed before the first decision: " + c.failure.msg
	}
	return fmt.Sprintf("runner failed at step %d: %s", c.failStep, c.failure.msg)
}

// Latencies returns the round-trip time of every answered decision.
func (c *Controller) Latencies() []time.Duration { return slices.Clone(c.latencies) }
