package extctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
)

// Config says how to run an external runner for one episode.
type Config struct {
	// Command is the runner's command line, run by the shell (sh -c on
	// Unix) in its own process group.
	Command string
	// Dir is the runner's working directory ("": the current one). Env
	// is added to the inherited environment.
	Dir string
	Env []string
	// Timeout bounds each answer: the ready message after hello, and the
	// reply to each decision (writing the decision included). Default
	// DefaultTimeout.
	Timeout time.Duration
	// Grace is how long the runner has to exit after episode_end, and
	// again after SIGTERM before SIGKILL. Default DefaultGrace.
	Grace time.Duration
	// Stderr receives the runner's stderr, the stdout lines that are not
	// protocol messages, and coordbench's own notes on the runner
	// (prefixed "[coordbench]"). Nil discards them.
	Stderr io.Writer
	// Episode is sent in hello.
	Episode Episode
	// Proxy, when set (and started), is the model-call proxy of the
	// runner: its address goes into the runner's environment, the upstream
	// key's variable is kept out of it, and the calls made while the
	// runner works on a decision are attributed to that decision
	// (docs/external.md, "Model-call audit").
	Proxy *Proxy
}

// Severities of a violation: an error is a broken protocol rule; a
// warning is tolerated behaviour worth fixing (print debugging on stdout,
// slow answers).
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Violation codes.
const (
	VStart        = "start_failed"   // the runner could not be started
	VReady        = "no_ready"       // no valid ready message after hello
	VProtocol     = "protocol"       // ready named another protocol version
	VExited       = "exited"         // the runner exited (or closed stdout) during the episode
	VTimeout      = "timeout"        // no answer within the timeout
	VWrite        = "write_failed"   // a message could not be written to the runner
	VInvalidJSON  = "invalid_json"   // a protocol line is not valid JSON
	VBadReply     = "bad_reply"      // valid JSON, but not a reply (no actions, wrong type or step)
	VUnknownAgent = "unknown_agent"  // a reply names an agent that is not active
	VMissingAgent = "missing_agent"  // a reply leaves an active agent out
	VNotInt       = "not_an_integer" // an action is not an integer
	VIllegal      = "illegal_action" // an index out of range or masked
	VStale        = "stale_reply"    // a reply to an earlier step (skipped)
	VUnsolicited  = "unsolicited"    // a protocol line nobody asked for (skipped)
	VLongLine     = "line_too_long"  // a stdout line over MaxLine
	VBadNotes     = "bad_notes"      // reply notes malformed or naming inactive agents (ignored)
	VNoise        = "stdout_noise"   // a stdout line that is not a protocol message (skipped)
	VExitStatus   = "exit_status"    // non-zero exit after episode_end
	VNoExit       = "no_exit"        // still running Grace after episode_end
	VEndNotSent   = "end_not_sent"   // episode_end could not be delivered
	VSlow         = "slow"           // an answer slower than the checker's threshold
)

const (
	maxViolations = 1000 // violations kept in full; counts go on
	maxRaw        = 4096 // bytes of a reply kept in an audit
	drainTime     = 250 * time.Millisecond
)

// Violation steps that are not decision steps.
const (
	StepHello   = -1 // before the first decision: hello and ready
	StepEpisode = -2 // the episode as a whole (slow answers)
	StepEnd     = -3 // after the last decision: episode_end and exit
)

// Violation is one protocol violation of a runner.
type Violation struct {
	// Step is the decision step, or StepHello, StepEpisode, StepEnd.
	Step     int    `json:"step"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`
}

func (v Violation) String() string {
	at := "step " + strconv.Itoa(v.Step)
	switch v.Step {
	case StepHello:
		at = "hello"
	case StepEpisode:
		at = "episode"
	case StepEnd:
		at = "episode_end"
	}
	return fmt.Sprintf("%s %s %s: %s", at, v.Severity, v.Code, v.Detail)
}

// protoError is a failed answer; fatal ones stop the runner.
type protoError struct {
	code  string
	msg   string
	fatal bool
}

func (e *protoError) Error() string { return e.msg }

type lineMsg struct {
	data []byte
	err  *protoError
}

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
	llmStep   bool // the last decision made model calls through the proxy
}

// Start starts the runner, sends hello and waits for ready; once ctx is
// done, the runner is stopped (its process group terminated), whatever
// the controller is doing. Only a configuration error is returned: a runner that cannot start, exits or
// does not answer yields a controller that has already failed (Failed),
// whose decisions all fall back, so that the episode still runs and is
// audited.
func Start(ctx context.Context, cfg Config) (*Controller, error) {
	if strings.TrimSpace(cfg.Command) == "" {
		return nil, errors.New("extctl: empty runner command")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if ctx == nil {
		ctx = context.Background()
	}
	w := cfg.Stderr
	if w == nil {
		w = io.Discard
	}
	c := &Controller{cfg: cfg, log: &lockedWriter{w: w}, counts: map[string]int{}, step: StepHello,
		lines: make(chan lineMsg, 16), exited: make(chan struct{}), done: make(chan struct{})}
	if err := c.start(); err != nil {
		close(c.exited)
		c.fail(StepHello, &protoError{code: VStart, msg: "cannot start runner: " + err.Error(), fatal: true})
		return c, nil
	}
	c.stopCtx = context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.stopped = ctx.Err()
		c.mu.Unlock()
		c.logf("context done (%v): stopping the runner", ctx.Err())
		c.terminate()
	})
	c.hello(ctx)
	return c, nil
}

func (c *Controller) start() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	cmd := shellCommand(c.cfg.Command)
	cmd.Dir = c.cfg.Dir
	env := os.Environ()
	if c.cfg.Proxy != nil {
		env = c.cfg.Proxy.runnerEnv(env)
	}
	cmd.Env = append(env, c.cfg.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, c.log
	cmd.WaitDelay = c.cfg.Grace
	setProcessGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	c.cmd, c.stdin = cmd, inW
	c.logf("started runner (pid %d): %s", cmd.Process.Pid, c.cfg.Command)
	go c.readStdout(outR, c.lines)
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// hello sends hello and reads ready.
func (c *Controller) hello(ctx context.Context) {
	deadline := time.Now().Add(c.cfg.Timeout)
	h := Hello{Type: MsgHello, Protocol: Protocol, PayloadVersion: coord.PayloadVersion,
		TimeoutMS: c.cfg.Timeout.Milliseconds(), Episode: c.cfg.Episode}
	b, _ := json.Marshal(h) // plain data
	if err := c.write(append(b, '\n'), deadline); err != nil {
		c.fail(StepHello, err)
		return
	}
	line, err := c.next(ctx, deadline)
	if err != nil {
		if err.fatal {
			err.msg += " (waiting for ready)"
		} else {
			err = &protoError{code: VReady, msg: "no ready message: " + err.msg, fatal: true}
		}
		c.fail(StepHello, err)
		return
	}
	var r Ready
	if jerr := json.Unmarshal(line, &r); jerr != nil || r.Type != MsgReady {
		c.fail(StepHello, &protoError{code: VReady, fatal: true,
			msg: "expected a ready message after hello, got " + quote(line, 200)})
		return
	}
	if r.Protocol != "" && r.Protocol != Protocol {
		c.fail(StepHello, &protoError{code: VProtocol, fatal: true,
			msg: fmt.Sprintf("runner speaks protocol %q, not %q", r.Protocol, Protocol)})
		return
	}
	c.ready = r
	c.logf("runner ready: %s", strings.TrimSpace(string(line)))
}

// Name implements coord.Controller.
func (c *Controller) Name() string { return Name }

// Source implements coord.Controller: external decisions, or llm ones
// when the last decision made at least one model call through the proxy
// (the interpreter asks right after Act).
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
// timed out, could not start, or never said ready), or nil.
func (c *Controller) Failed() error {
	if c.failure == nil {
		return nil
	}
	if c.failStep == StepHello {
		return fmt.Errorf("external runner failed before the first decision: %s", c.failure.msg)
	}
	return fmt.Errorf("external runner failed at step %d: %s", c.failStep, c.failure.msg)
}

// Act implements coord.Controller. It never returns an error: every
// problem is reported per agent in Notes, and the interpreter falls back
// for the agents without a usable action. With a proxy, the model calls
// completed between sending the decision and reading its reply go into
// the notes of the step's agents. Once ctx is done, Act stops waiting for
// the reply and the runner, as after a timeout.
func (c *Controller) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	c.llmStep = false
	p := c.cfg.Proxy
	if p == nil {
		return c.act(ctx, d)
	}
	p.unattributed(len(p.Take())) // calls made between decisions
	sent := c.sent
	actions, err := c.act(ctx, d)
	calls := p.Take()
	if c.sent == sent {
		p.unattributed(len(calls))
		return actions, err
	}
	attribute(c.notes, slices.Sorted(maps.Keys(d.ActiveAgents)), calls)
	c.llmStep = len(calls) > 0
	return actions, err
}

func (c *Controller) act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	c.notes = make(map[string]coord.AgentNote, len(ids))
	c.steps++
	c.mu.Lock()
	c.step = d.Step
	c.mu.Unlock()
	if c.failure != nil {
		c.allFail(ids, "", c.deadReason())
		return nil, nil
	}
	c.discardUnsolicited(d.Step)
	c.buf = append(c.buf[:0], `{"type":"decision","payload":`...)
	b, err := json.Marshal(d)
	if err != nil { // a payload is plain data
		c.allFail(ids, "", "cannot encode the payload: "+err.Error())
		return nil, nil
	}
	c.buf = append(append(c.buf, b...), "}\n"...)
	start := time.Now()
	deadline := start.Add(c.cfg.Timeout)
	c.sent++
	if perr := c.write(c.buf, deadline); perr != nil {
		c.fail(d.Step, perr)
		c.allFail(ids, "", perr.msg)
		return nil, nil
	}
	for {
		line, perr := c.next(ctx, deadline)
		if perr != nil {
			if perr.fatal {
				c.fail(d.Step, perr)
			} else {
				c.violate(d.Step, perr.code, SevError, perr.msg)
			}
			c.allFail(ids, "", perr.msg)
			return nil, nil
		}
		lat := time.Since(start)
		actions, stale := c.parse(d, ids, line, lat)
		if stale {
			continue
		}
		c.latencies = append(c.latencies, lat)
		c.answered++
		return actions, nil
	}
}

// parse turns a reply line into actions and notes. stale reports a reply
// to an earlier step, which the caller skips.
func (c *Controller) parse(d *coord.Decision, ids []string, line []byte, lat time.Duration) (actions map[string]int, stale bool) {
	raw := string(line)
	if len(raw) > maxRaw {
		raw = raw[:maxRaw] + "…"
	}
	ms := float64(lat.Microseconds()) / 1000
	bad := func(code, msg string) (map[string]int, bool) {
		c.violate(d.Step, code, SevError, msg)
		c.allFail(ids, raw, msg)
		for _, id := range ids {
			n := c.notes[id]
			n.LatencyMS = ms
			c.notes[id] = n
		}
		return nil, false
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		return bad(VInvalidJSON, "invalid JSON: "+err.Error())
	}
	if t, ok := top["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || s != MsgActions {
			return bad(VBadReply, fmt.Sprintf("unexpected message type %s (want a reply with \"actions\")", t))
		}
	}
	if s, ok := top["step"]; ok && string(s) != "null" {
		var step int
		if json.Unmarshal(s, &step) != nil {
			return bad(VBadReply, fmt.Sprintf("\"step\" is not an integer: %s", s))
		}
		if step < d.Step {
			c.violate(d.Step, VStale, SevError, fmt.Sprintf("skipped a reply to step %d: %s", step, quote(line, 120)))
			return nil, true
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
		msg := "unknown agent " + unknown[0]
		if len(unknown) > 1 {
			msg = "unknown agents " + strings.Join(unknown, ", ")
		}
		return bad(VUnknownAgent, msg+" (not active at this step)")
	}
	var rnotes map[string]ReplyNote
	if n, ok := top["notes"]; ok && string(n) != "null" {
		if err := json.Unmarshal(n, &rnotes); err != nil {
			c.violate(d.Step, VBadNotes, SevWarning, "notes ignored: "+err.Error())
			rnotes = nil
		}
		for id := range rnotes {
			if _, ok := d.ActiveAgents[id]; !ok {
				c.violate(d.Step, VBadNotes, SevWarning, "notes for an inactive agent "+id+" ignored")
			}
		}
	}
	actions = make(map[string]int, len(ids))
	for _, id := range ids {
		rn := rnotes[id]
		note := coord.AgentNote{Raw: raw, LatencyMS: ms, Model: rn.Model, PromptTokens: rn.PromptTokens,
			CompletionTokens: rn.CompletionTokens, Calls: rn.Calls, Cached: rn.Cached}
		v, ok := acts[id]
		switch {
		case !ok:
			note.Error = "no action for this agent in the reply"
			c.violate(d.Step, VMissingAgent, SevError, "no action for "+id)
		default:
			var i int
			if json.Unmarshal(v, &i) != nil {
				note.Error = "action is not an integer: " + quote(v, 40)
				c.violate(d.Step, VNotInt, SevError, id+": action is not an integer: "+quote(v, 40))
				break
			}
			actions[id] = i
			if view := d.ActiveAgents[id]; i < 0 || i >= len(view.ActionMask) || !view.ActionMask[i] {
				c.violate(d.Step, VIllegal, SevError, fmt.Sprintf("%s (%s) answered %d; legal: %v", id, view.Kind, i, view.LegalActions))
			}
		}
		c.notes[id] = note
	}
	return actions, false
}

// allFail notes the same error for every agent of the step.
func (c *Controller) allFail(ids []string, raw, msg string) {
	for _, id := range ids {
		c.notes[id] = coord.AgentNote{Raw: raw, Error: msg}
	}
}

func (c *Controller) deadReason() string {
	if c.failStep == StepHello {
		return "runner failed before the first decision: " + c.failure.msg
	}
	return fmt.Sprintf("runner failed at step %d: %s", c.failStep, c.failure.msg)
}

// discardUnsolicited skips protocol lines that arrived before the
// decision was sent: nobody asked for them.
func (c *Controller) discardUnsolicited(step int) {
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.lines = nil // closed: the runner's stdout is gone; next() reports why
				return
			}
			if l.err == nil {
				c.violate(step, VUnsolicited, SevError, "skipped a line sent before the decision: "+quote(l.data, 120))
			}
		default:
			return
		}
	}
}

// write sends one message, within deadline.
func (c *Controller) write(b []byte, deadline time.Time) *protoError {
	if err := c.stdin.SetWriteDeadline(deadline); err != nil {
		return &protoError{code: VWrite, msg: "cannot write to the runner: " + err.Error(), fatal: true}
	}
	if _, err := c.stdin.Write(b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &protoError{code: VTimeout, msg: "timeout after " + c.cfg.Timeout.String() + " (the runner is not reading its stdin)", fatal: true}
		}
		select {
		case <-c.exited:
			return c.exitError()
		case <-time.After(drainTime):
		}
		return &protoError{code: VWrite, msg: "cannot write to the runner: " + err.Error(), fatal: true}
	}
	return nil
}

// next returns the runner's next protocol line, within deadline and
// while ctx lasts.
func (c *Controller) next(ctx context.Context, deadline time.Time) ([]byte, *protoError) {
	if c.lines == nil {
		return nil, c.exitError()
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	exited := c.exited
	draining := false
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.lines = nil
				return nil, c.exitError()
			}
			if l.err != nil {
				return nil, l.err
			}
			return l.data, nil
		case <-exited:
			// The process is gone; give its last lines a moment to arrive.
			exited, draining = nil, true
			timer.Reset(min(time.Until(deadline), drainTime))
		case <-timer.C:
			if draining {
				return nil, c.exitError()
			}
			return nil, &protoError{code: VTimeout, msg: "timeout after " + c.cfg.Timeout.String(), fatal: true}
		case <-ctx.Done():
			return nil, stoppedError(ctx.Err())
		}
	}
}

// exitError says why the runner's stdout ended.
func (c *Controller) exitError() *protoError {
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		return &protoError{code: VExited, msg: "runner closed its stdout", fatal: true}
	}
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped != nil {
		return stoppedError(stopped)
	}
	return &protoError{code: VExited, msg: "runner exited: " + exitStatus(c.waitErr), fatal: true}
}

// stoppedError is the failure of a runner stopped by a context.
func stoppedError(err error) *protoError {
	return &protoError{code: VExited, msg: "runner stopped: " + err.Error(), fatal: true}
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// fail records a fatal failure and stops the runner.
func (c *Controller) fail(step int, e *protoError) {
	if c.failure != nil {
		return
	}
	c.failure, c.failStep = e, step
	c.violate(step, e.code, SevError, e.msg)
	c.logf("%s; every later decision falls back", c.deadReason())
	c.terminate()
}

// terminate stops the runner's process group: SIGTERM, then SIGKILL after
// Grace. It waits for the runner to be gone.
func (c *Controller) terminate() {
	c.stopOnce.Do(func() {
		if c.cmd == nil {
			return
		}
		select {
		case <-c.exited:
		default:
			c.logf("sending SIGTERM to the runner's process group")
			terminateGroup(c.cmd)
			select {
			case <-c.exited:
			case <-time.After(c.cfg.Grace):
				c.logf("runner still running %s after SIGTERM: sending SIGKILL", c.cfg.Grace)
				killGroup(c.cmd)
				select {
				case <-c.exited:
				case <-time.After(c.cfg.Grace):
					c.logf("runner not reaped %s after SIGKILL", c.cfg.Grace)
				}
			}
		}
		killGroup(c.cmd) // whatever the runner left behind in its group
		c.stdin.Close()
	})
}

// End sends episode_end with the episode's metrics (any JSON value; nil
// when there are none), lets the runner exit within Grace, stops what is
// left of its process group, and returns Failed. Later calls do nothing.
func (c *Controller) End(metrics any) error {
	if c.ended {
		return c.Failed()
	}
	c.ended = true
	if c.stopCtx != nil {
		c.stopCtx()
	}
	endStep := StepEnd
	c.mu.Lock()
	c.step = endStep
	c.mu.Unlock()
	if c.failure == nil && c.cmd != nil {
		c.discardUnsolicited(endStep)
		b, err := json.Marshal(EpisodeEnd{Type: MsgEpisodeEnd, Metrics: metrics})
		if err != nil {
			b, _ = json.Marshal(EpisodeEnd{Type: MsgEpisodeEnd})
		}
		if perr := c.write(append(b, '\n'), time.Now().Add(c.cfg.Grace)); perr != nil {
			c.violate(endStep, VEndNotSent, SevError, "episode_end not delivered: "+perr.msg)
		}
		c.stdin.Close()
		select {
		case <-c.exited:
			if c.waitErr != nil {
				c.violate(endStep, VExitStatus, SevError, "runner exited with "+exitStatus(c.waitErr)+" after episode_end")
			}
		case <-time.After(c.cfg.Grace):
			c.violate(endStep, VNoExit, SevError, fmt.Sprintf("runner still running %s after episode_end; terminated", c.cfg.Grace))
		}
	}
	c.terminate()
	c.drain(endStep)
	if c.cmd != nil {
		select {
		case <-c.exited:
			c.logf("runner done: %s", exitStatus(c.waitErr))
		default:
			c.logf("runner not reaped")
		}
	}
	c.doneOnce.Do(func() { close(c.done) })
	return c.Failed()
}

// Close ends the episode without metrics if End was not called.
func (c *Controller) Close() error { return c.End(nil) }

// drain reports the protocol lines left after the last decision.
func (c *Controller) drain(step int) {
	if c.lines == nil || c.failure != nil {
		return
	}
	timer := time.NewTimer(drainTime)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return
			}
			if l.err == nil {
				c.violate(step, VUnsolicited, SevError, "a line after the last decision: "+quote(l.data, 120))
			}
		case <-timer.C:
			return
		}
	}
}

// readStdout splits the runner's stdout into lines: protocol lines (the
// first non-blank byte is '{') go to c.lines, blank lines are skipped, and
// any other line is copied to the log and reported as noise.
func (c *Controller) readStdout(r *os.File, lines chan<- lineMsg) {
	defer close(lines)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, long, err := readLine(br)
		var msg *lineMsg
		switch t := bytes.TrimSpace(line); {
		case long:
			msg = &lineMsg{err: &protoError{code: VLongLine, msg: fmt.Sprintf("a stdout line longer than %d bytes", MaxLine)}}
		case len(t) == 0:
		case t[0] != '{':
			c.mu.Lock()
			step := c.step
			c.mu.Unlock()
			c.violate(step, VNoise, SevWarning, "skipped a stdout line that is not a protocol message: "+quote(t, 120))
			c.logf("stdout (skipped, not a protocol message): %s", t)
		default:
			msg = &lineMsg{data: bytes.Clone(t)}
		}
		if msg != nil {
			select {
			case lines <- *msg:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its newline. A line over MaxLine is
// consumed and reported as long.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			if len(line) > MaxLine {
				line, long = nil, true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), long, err
	}
}

// violate records a violation.
func (c *Controller) violate(step int, code, sev, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[code]++
	if len(c.violations) < maxViolations {
		c.violations = append(c.violations, Violation{Step: step, Code: code, Severity: sev, Detail: detail})
	}
}

// Violations returns the violations so far (at most 1000; Summary counts
// them all).
func (c *Controller) Violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// Latencies returns the round-trip time of every answered decision.
func (c *Controller) Latencies() []time.Duration { return slices.Clone(c.latencies) }

// Summary is what a controller.json records about an external runner.
type Summary struct {
	Command   string `json:"command"`
	Protocol  string `json:"protocol"`
	Runner    Ready  `json:"runner"`
	TimeoutMS int64  `json:"timeout_ms"`
	// Steps is the number of decision steps of the episode, Sent how
	// many went to the runner (none after it failed), Answered how many
	// it answered with a protocol line (usable or not).
	Steps    int     `json:"steps"`
	Sent     int     `json:"sent"`
	Answered int     `json:"answered"`
	Latency  Latency `json:"latency_ms"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
	// Counts is the number of violations by code.
	Counts     map[string]int `json:"violation_counts"`
	Violations []Violation    `json:"violations"`
	Failure    string         `json:"failure,omitempty"`
	// Proxy sums up the model calls made through the proxy, if any.
	Proxy *ProxyTotals `json:"llm_proxy,omitempty"`
}

// Summary sums up the runner's episode so far.
func (c *Controller) Summary() Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Summary{Command: c.cfg.Command, Protocol: Protocol, Runner: c.ready, TimeoutMS: c.cfg.Timeout.Milliseconds(),
		Steps: c.steps, Sent: c.sent, Answered: c.answered, Latency: LatencyOf(c.latencies), Counts: maps.Clone(c.counts),
		Violations: slices.Clone(c.violations)}
	for _, v := range c.violations {
		if v.Severity == SevError {
			s.Errors++
		} else {
			s.Warnings++
		}
	}
	if extra := sum(c.counts) - len(c.violations); extra > 0 { // beyond maxViolations
		s.Errors += extra
	}
	if s.Violations == nil {
		s.Violations = []Violation{}
	}
	if err := c.Failed(); err != nil {
		s.Failure = err.Error()
	}
	if p := c.cfg.Proxy; p != nil {
		t := p.Totals()
		s.Proxy = &t
	}
	return s
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (c *Controller) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "[coordbench] "+format+"\n", args...)
}

// lockedWriter serializes the runner's stderr and coordbench's notes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(p) // a failing log must not stop the runner's stderr
	return len(p), nil
}

// quote shows up to n bytes of b as a Go string.
func quote(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

// WriteSummary writes s as indented JSON to path (controller.json).
func WriteSummary(path string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
