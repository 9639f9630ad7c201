package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// Episode is one run: instance × paradigm × controller × seed.
type Episode struct {
	Plant *factory.Plant
	Seed  uint64
	Mode  coord.AuthorityMode
	// Selector, if set, chooses the mode per work item (a dynamic
	// paradigm); Mode then only names the run in metrics and manifests.
	Selector   coord.ModeSelector
	Controller coord.Controller
	// Trace receives trace.jsonl; Decisions receives decisions.jsonl;
	// Messages receives messages.jsonl; Timing receives timing.jsonl. Any
	// may be nil.
	Trace, Decisions, Messages, Timing io.Writer
	// Stop, if set, interrupts the episode once closed: it ends before its
	// next decision with status interrupted, and Result.Err is
	// ErrInterrupted. (A cancelled ctx only cuts the controller's calls
	// short: its answers fall back, the episode goes on.)
	Stop <-chan struct{}
	// Observer, if set, receives every engine record as well, after the
	// trace writer and before the interpreter, as Run hands them on (an
	// environment server tallies per-step progress with it): every record
	// of the engine's steps up to a decision before the controller is
	// asked for it, and the last ones before Run returns. It must not
	// keep the record.
	Observer factory.Tracer
	// Scratch, if set, lends the episode the engine, interpreter and
	// trace writer of the previous episode run with it, reset: a caller
	// that plays episodes one after the other allocates them once. Nil:
	// the episode allocates its own.
	Scratch *Scratch
	// Wrap, if set, wraps each artifact file RunToDir streams while the
	// episode runs (trace.jsonl, decisions.jsonl, messages.jsonl,
	// timing.jsonl), given its name: an environment server bounds their
	// bytes with it. Run itself ignores it.
	Wrap func(name string, f io.Writer) io.Writer
}

// Scratch is the storage of one episode at a time (engine, interpreter,
// trace writer), kept for the next episode run with it (Episode.Scratch).
// The zero value is ready to use. It is not safe for concurrent use: give
// each goroutine its own. What Run's Result holds is the caller's; the
// rest of an episode (its engine, messages, decisions and views) is
// overwritten by the next episode run with the same Scratch.
type Scratch struct {
	eng     *factory.Engine
	in      *coord.Interpreter
	tw      TraceWriter
	tally   Tally
	sources keyCounts[coord.Source]
	actions []int // the answers of a coord.ViewChooser, reused
}

// keyCounts counts occurrences of a handful of distinct keys (audits by
// source, messages by type): a short list updated at each occurrence costs
// less than a map; the metrics get the map at the end (counts).
type keyCounts[K ~string] []keyCount[K]

type keyCount[K ~string] struct {
	key K
	n   int
}

// add counts one occurrence of key.
func (s keyCounts[K]) add(key K) keyCounts[K] {
	for i := range s {
		if s[i].key == key {
			s[i].n++
			return s
		}
	}
	return append(s, keyCount[K]{key, 1})
}

// counts returns the counts by key.
func (s keyCounts[K]) counts() map[string]int {
	m := make(map[string]int, len(s))
	for _, c := range s {
		m[string(c.key)] = c.n
	}
	return m
}

// ErrInterrupted is the error of an episode that Episode.Stop ended.
var ErrInterrupted = errors.New("interrupted")

// TimingLine is one line of timing.jsonl: the wall-clock side of one
// audited answer that carried a controller note (model and external
// controllers). Step and AgentID locate the audit in decisions.jsonl.
type TimingLine struct {
	Step      int     `json:"step"`
	AgentID   string  `json:"agent_id"`
	LatencyMS float64 `json:"latency_ms"`
	Cached    bool    `json:"cached"`
	Retries   int     `json:"retries,omitempty"` // attempts beyond the first of the answer's calls
}

// Result is what an episode produced.
type Result struct {
	Metrics Metrics
	// CacheHits counts the audited answers whose model calls all came
	// from the response cache (timing.jsonl "cached"); it describes how
	// the run was executed, so it is not a metric.
	CacheHits int
	// RoleTiming is the wall-clock side of the answers by role
	// (episode_timing.json by_role); nil when no answer carried a note.
	RoleTiming map[string]RoleTiming
	// Err is set when the episode could not run to a regular end (an
	// engine commit failure, a controller's abort (coord.ErrAbort, status
	// aborted), an artifact write failure); Metrics then still describe
	// the state reached.
	Err error
}

// Run plays one episode to its end. It never panics on a misbehaving
// controller: errors and panics become audited fallbacks, except an error
// wrapping coord.ErrAbort, which ends the episode (status aborted,
// Result.Err) once its step is audited. ctx goes to the
// controller's every Act; a cancelled ctx does not cut the episode short,
// the controller's answers fall back instead (see the package comment).
// Run is a Stepper whose decisions the episode's controller answers.
func Run(ctx context.Context, ep Episode) Result {
	var st Stepper
	pending := st.Start(ctx, ep)
	chooser, perView := coord.IsViewChooser(ep.Controller) // answers each view alone (rule, greedy, greedy_py)
	for pending {
		if perView { // answers by position: no answer map to clear, fill and read back
			views := st.Views()
			actions := st.actionList(len(views))
			pending = st.AnswerList(actions, chooseEach(chooser, views, actions))
		} else {
			actions, cerr := act(st.Context(), ep.Controller, st.Decision())
			pending = st.Answer(actions, cerr)
		}
	}
	return st.Finish()
}

// stepGuard ends an episode that has stopped progressing or decided too
// often (the instance's limits): the engine is truncated with status
// no_progress after NoProgressSteps decision steps in a row without
// physical progress, and with status decision_limit at MaxDecisions steps.
type stepGuard struct {
	limits factory.LimitSpec
	last   uint64 // the engine's progress after the last step that made some
	idle   int    // steps since
}

func newStepGuard(eng *factory.Engine, limits factory.LimitSpec) stepGuard {
	return stepGuard{limits: limits, last: eng.Progress()}
}

// after checks the limits once a step is committed; steps is the number
// of steps so far.
func (g *stepGuard) after(eng *factory.Engine, steps int) {
	if p := eng.Progress(); p != g.last {
		g.last, g.idle = p, 0
	} else if g.idle++; g.idle >= g.limits.NoProgressSteps {
		eng.Truncate(factory.NoProgress)
	}
	if steps >= g.limits.MaxDecisions {
		eng.Truncate(factory.DecisionLimit)
	}
}

// writeErrors keeps the first failure to write an artifact. A failed
// write does not stop the episode, nor the writing of the other
// artifacts: Run reports it at the end, unless a failure that stopped
// the episode takes precedence.
type writeErrors struct{ first error }

// keep records err (if any) as a failure to write the named artifact,
// unless one was recorded before.
func (w *writeErrors) keep(artifact string, err error) {
	if err != nil && w.first == nil {
		w.first = artifactError{fmt.Errorf("write %s: %w", artifact, err)}
	}
}

// stopped reports whether stop is closed (never, if nil: checked first,
// as the receive costs a runtime call at every decision even on a nil
// channel).
func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// act calls the controller, turning a panic into an error.
func act(ctx context.Context, c coord.Controller, d *coord.Decision) (actions map[string]int, err error) {
	defer func() {
		if r := recover(); r != nil {
			actions, err = nil, fmt.Errorf("controller %s panicked: %v", c.Name(), r)
		}
	}()
	return c.Act(ctx, d)
}

// chooseEach is act for a controller that answers each view alone
// (coord.ViewChooser): actions[i] is its choice for views[i], the same
// as its Act's map would hold. A panic becomes an error, as in act.
func chooseEach(c coord.ViewChooser, views []*coord.View, actions []int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("controller %s panicked: %v", c.Name(), r)
		}
	}()
	for i, v := range views {
		actions[i] = c.ChooseView(v)
	}
	return nil
}

// notesOf asks an annotating controller for its notes on the decision it
// has just answered (nil for any other).
func notesOf(a coord.Annotator, annotates bool) map[string]coord.AgentNote {
	if !annotates {
		return nil
	}
	return a.Notes()
}

// handOn is where Run passes the engine's records on, each batch to
// each consumer in this order: the trace writer, the observer (each nil
// when absent), the scorer's tally, the interpreter. Each sees every
// record in the engine's order; none reads another's, so the order
// between them is free.
type handOn struct {
	tw    *TraceWriter
	obs   factory.Tracer
	tally *Tally
	in    *coord.Interpreter
}

// records passes recs (Engine.Records) on.
func (h *handOn) records(recs []factory.Record) {
	if len(recs) == 0 { // a protocol step that committed nothing to the engine
		return
	}
	if h.tw != nil {
		h.tw.WriteRecords(recs)
	}
	if h.obs != nil {
		for i := range recs {
			h.obs.Emit(&recs[i])
		}
	}
	h.tally.Records(recs)
	h.in.Observe(recs)
}

// TraceWriter writes records as JSON lines through a buffer.
type TraceWriter struct {
	w   io.Writer
	p   *factory.Plant
	enc factory.TraceEncoder
	buf []byte
	err error
}

// traceChunk is how much the writer buffers before each Write.
const traceChunk = 8 << 10

// NewTraceWriter returns a writer of trace.jsonl lines to w.
func NewTraceWriter(w io.Writer, p *factory.Plant) *TraceWriter {
	t := &TraceWriter{}
	t.reset(w, p)
	return t
}

// reset points t at a new trace, keeping its buffer.
func (t *TraceWriter) reset(w io.Writer, p *factory.Plant) {
	buf := t.buf[:0]
	if buf == nil {
		buf = make([]byte, 0, traceChunk+512)
	}
	*t = TraceWriter{w: w, p: p, buf: buf}
}

// WriteRecords writes recs (Engine.Records) as trace lines. A write
// error is kept for Close to report.
func (t *TraceWriter) WriteRecords(recs []factory.Record) {
	buf := t.buf // in a local: no store of t.buf (and its write barrier check) per record
	for i := range recs {
		buf = t.enc.AppendLine(buf, &recs[i], t.p)
		if len(buf) >= traceChunk {
			t.buf = buf
			t.flush()
			buf = t.buf
		}
	}
	t.buf = buf
}

// WriteModeChoice writes an adaptive paradigm's choice as a
// mode_selected line (docs/trace-format.md).
func (t *TraceWriter) WriteModeChoice(c *coord.ModeChoice) {
	line := modeSelected{T: c.Time, Ev: EvModeSelected, Job: c.Job, Op: c.Op, Step: c.Step, Mode: c.Mode, Rule: c.Rule, State: c.State}
	b, err := json.Marshal(&line)
	if err != nil { // a ModeState is numbers only: cannot happen
		t.err = cmp.Or(t.err, err)
		return
	}
	t.buf = append(append(t.buf, b...), '\n')
	if len(t.buf) >= traceChunk {
		t.flush()
	}
}

// EvModeSelected is the trace event of an adaptive paradigm's choice.
const EvModeSelected = "mode_selected"

// modeSelected is the mode_selected line, keys in this order.
type modeSelected struct {
	T     float64         `json:"t"`
	Ev    string          `json:"ev"`
	Job   int             `json:"job"`
	Op    int             `json:"op"`
	Step  int             `json:"step"`
	Mode  string          `json:"mode"`
	Rule  int             `json:"rule"`
	State coord.ModeState `json:"state"`
}

func (t *TraceWriter) flush() {
	if t.err == nil && len(t.buf) > 0 {
		_, t.err = t.w.Write(t.buf)
	}
	t.buf = t.buf[:0]
}

// Close flushes the buffer and reports the first write error.
func (t *TraceWriter) Close() error {
	t.flush()
	return t.err
}
