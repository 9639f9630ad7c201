package extctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// drainTime is how long the last lines of a runner that exited, or
// stopped being asked, are waited for.
const drainTime = 250 * time.Millisecond

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
	// (prefixed "[coordbench]"). Nil discards them. Of more than
	// MaxStderr bytes (default untrusted.MaxStderr) it gets the first and
	// the last half, with a line saying how much was cut between them, the
	// tail when the episode ends (End).
	Stderr    io.Writer
	MaxStderr int
	// Episode is sent in hello.
	Episode Episode
	// Proxy, when set (and started), is the model-call proxy of the
	// runner: its address goes into the runner's environment, the upstream
	// key's variable is kept out of it, and the calls made while the
	// runner works on a decision are attributed to that decision
	// (docs/external.md, "Model-call audit").
	Proxy *Proxy
}

// protoError is a failed answer; fatal ones stop the runner. stopped
// marks the failure of a runner stopped by a context (not the runner's
// doing: the episode falls back instead of aborting).
type protoError struct {
	code    string
	msg     string
	fatal   bool
	stopped bool
}

func (e *protoError) Error() string { return e.msg }

type lineMsg struct {
	data []byte
	err  *protoError
}

// Start starts the runner, sends hello and waits for ready; once ctx is
// done, the runner is stopped (its process group terminated), whatever
// the controller is doing. Only a configuration error is returned: a
// runner that cannot start, exits or does not answer yields a controller
// that has already failed (Failed), whose decisions all fall back, so
// that the episode still runs and is audited.
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
	if cfg.MaxStderr <= 0 {
		cfg.MaxStderr = untrusted.MaxStderr
	}
	c := &Controller{cfg: cfg, log: &lockedWriter{w: untrusted.NewHeadTail(w, cfg.MaxStderr)}, counts: map[string]int{}, step: StepHello,
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
		env, c.token = c.cfg.Proxy.runnerEnv(env)
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
	return &protoError{code: VExited, msg: "runner stopped: " + err.Error(), fatal: true, stopped: true}
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
	if c.token != "" {
		c.cfg.Proxy.Revoke(c.token)
	}
	c.log.close() // the stderr log's tail
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

func (c *Controller) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "[coordbench] "+format+"\n", args...)
}

// lockedWriter serializes the runner's stderr and coordbench's notes.
type lockedWriter struct {
	mu sync.Mutex
	w  *untrusted.HeadTail
}

// close writes the log's tail; later writes are dropped.
func (l *lockedWriter) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Close() //nolint:errcheck // as in Write
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(p) // a failing log must not stop the runner's stderr
	return len(p), nil
}
