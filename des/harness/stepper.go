package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/telemetry"
)

// Stepper plays one episode whose decisions its caller answers, one call
// per decision step, on the caller's goroutine: Run with the loop turned
// inside out, for a caller that gets its answers from elsewhere (an
// environment server's learner). Start runs the episode to its first
// decision; Answer or AnswerList commit the answers to the pending one
// (audited, illegal and missing answers falling back, exactly as under
// Run) and run to the next; each returns whether a decision is pending.
// Once none is, Finish returns the Result. The Episode's Controller names
// the run and is asked, after each answer, for its Source and (an
// coord.Annotator) its notes; its Act is not called. A Stepper is reused
// by calling Start again; it is not safe for concurrent use.
type Stepper struct {
	ep     Episode
	sc     *Scratch
	tr     episodeTracer
	tw     *TraceWriter
	eng    *factory.Engine
	in     *coord.Interpreter
	out    handOn
	guard  stepGuard
	failed *Result // Start could not begin the episode

	dec, tim  *json.Encoder
	sources   keyCounts[coord.Source]
	calls     int
	hits      int
	prompt    int64
	compl     int64
	stopErr   error // what cut the episode short
	writes    writeErrors
	annotator coord.Annotator
	annotates bool
	byRole    *roleTally // model-backed controllers: their answers and calls by role

	d    *coord.Decision // the pending decision; nil once the episode has ended
	actx context.Context // the context its answers are given under (its telemetry step)
	step *telemetry.Step
}

// Start begins episode ep and runs it to its first decision: it reports
// whether one is pending (false: the episode has already ended, or could
// not begin; Finish says which).
func (s *Stepper) Start(ctx context.Context, ep Episode) bool {
	*s = Stepper{ep: ep}
	ctx, s.tr = startEpisode(ctx, &s.ep)
	s.actx = ctx
	sc := ep.Scratch
	if sc == nil {
		sc = &Scratch{}
	}
	s.sc = sc
	if ep.Trace != nil {
		s.tw = &sc.tw
		s.tw.reset(ep.Trace, ep.Plant)
	}
	if sc.eng == nil {
		sc.eng = factory.NewEngine(ep.Plant, ep.Seed)
	} else {
		sc.eng.Reset(ep.Plant, ep.Seed)
	}
	s.eng = sc.eng
	var sel coord.ModeSelector = ep.Mode
	if ep.Selector != nil {
		sel = ep.Selector
	}
	if sc.in == nil {
		in, err := coord.NewInterpreter(s.eng, sel)
		if err != nil {
			s.failed = &Result{Err: err}
			return false
		}
		sc.in = in
	} else if err := sc.in.Reset(s.eng, sel); err != nil {
		s.failed = &Result{Err: err}
		return false
	}
	s.in = sc.in
	sc.tally.Reset(PlantHeader(ep.Plant))
	s.out = handOn{tw: s.tw, obs: ep.Observer, in: s.in, tally: &sc.tally}
	if ep.Decisions != nil {
		s.dec = json.NewEncoder(ep.Decisions)
	}
	if ep.Timing != nil {
		s.tim = json.NewEncoder(ep.Timing)
	}
	s.sources = sc.sources[:0]
	s.guard = newStepGuard(s.eng, ep.Plant.Inst.Limits)
	s.annotator, s.annotates = ep.Controller.(coord.Annotator) // asked once: the controller is the episode's
	if _, ok := ep.Controller.(ModelController); ok {
		s.byRole = &roleTally{}
	}
	return s.advance()
}

// Decision is the pending decision (nil once the episode has ended). It
// and its views belong to the episode: the next answer reuses them.
func (s *Stepper) Decision() *coord.Decision { return s.d }

// Views lists the pending decision's active views in activation order,
// the order AnswerList's actions follow.
func (s *Stepper) Views() []*coord.View { return s.in.ActiveViews() }

// Context is the context the pending decision's answers are given under:
// Start's, with the decision step's telemetry spans when it is traced.
func (s *Stepper) Context() context.Context { return s.actx }

// Answer commits actions (by agent id; an agent missing falls back) to
// the pending decision, cerr being the answerer's error (all its answers
// fall back; one wrapping coord.ErrAbort ends the episode once the step
// is audited), and runs to the next decision: it reports whether one is
// pending.
func (s *Stepper) Answer(actions map[string]int, cerr error) bool {
	audits, err := s.in.ApplyNotes(s.d, actions, s.ep.Controller.Source(), cerr, notesOf(s.annotator, s.annotates))
	return s.after(audits, err, cerr)
}

// AnswerList is Answer with the actions by position: actions[i] answers
// Views()[i], coord.NoAnswer for none (the agent falls back).
func (s *Stepper) AnswerList(actions []int, cerr error) bool {
	audits, err := s.in.ApplyList(actions, s.ep.Controller.Source(), cerr, notesOf(s.annotator, s.annotates))
	return s.after(audits, err, cerr)
}

// actionList is a reused list of n actions for AnswerList.
func (s *Stepper) actionList(n int) []int {
	s.sc.actions = slices.Grow(s.sc.actions[:0], n)[:n]
	return s.sc.actions
}

// advance runs the engine to the next decision (true), or to the end.
func (s *Stepper) advance() bool {
	s.d = nil
	eng, in := s.eng, s.in
	if !eng.Advance() {
		return false
	}
	s.out.records(eng.Records()) // what the engine did since the last turn: its events, the last commit's
	if stopped(s.ep.Stop) {
		return s.stop(ErrInterrupted, factory.Interrupted)
	}
	d := in.Next()
	if d == nil { // Advance stops only with a decision pending: the protocol failed
		err := in.Err()
		if err == nil {
			err = fmt.Errorf("engine stopped at t=%g with no decision to make", eng.Now())
		}
		return s.stop(err, factory.ControllerFail)
	}
	if mc, ok := in.ModeChoice(); ok && s.tw != nil { // an adaptive paradigm's rules chose the mode of a new work item
		s.tw.WriteModeChoice(mc)
	}
	s.d = d
	if s.tr.on() {
		s.actx, s.step = s.tr.startStep(d, in.ActiveViews())
	}
	return true
}

// stop ends the episode with err, the engine truncated with status.
func (s *Stepper) stop(err error, status factory.Status) bool {
	s.stopErr = err
	s.eng.Truncate(status)
	s.d = nil
	return false
}

// after accounts for the step's audits and runs to the next decision,
// unless the step ended the episode.
func (s *Stepper) after(audits []coord.Audit, err, cerr error) bool {
	in := s.in
	if mc, ok := in.ModeChoice(); ok && s.tw != nil { // the mode_selector agent chose the item's mode
		s.tw.WriteModeChoice(mc)
	}
	if s.tr.on() {
		s.tr.endStep(s.step, audits)
		s.actx = s.tr.ctx
	}
	for i := range audits {
		s.sources = s.sources.add(audits[i].Source)
		if s.byRole != nil {
			s.byRole.add(&audits[i])
		}
		if n := audits[i].AgentNote; n != nil {
			s.calls += n.Calls
			s.prompt += n.PromptTokens
			s.compl += n.CompletionTokens
			if n.Cached {
				s.hits++
			}
			if s.tim != nil {
				tl := TimingLine{Step: audits[i].Step, AgentID: audits[i].AgentID, LatencyMS: n.LatencyMS, Cached: n.Cached, Retries: n.Retries}
				s.writes.keep("timing", s.tim.Encode(&tl))
			}
		}
		if s.dec != nil {
			s.writes.keep("decisions", s.dec.Encode(&audits[i]))
		}
	}
	if err != nil {
		return s.stop(err, factory.ControllerFail)
	}
	if cerr != nil && errors.Is(cerr, coord.ErrAbort) { // the step is committed (fallbacks) and audited; stop here
		return s.stop(fmt.Errorf("controller %s: %w", s.ep.Controller.Name(), cerr), factory.Aborted)
	}
	if stopped(s.ep.Stop) {
		// Stopped while the answers were given: they may be fallbacks (a
		// cancelled call), so the episode is interrupted even when this
		// was its last decision.
		return s.stop(ErrInterrupted, factory.Interrupted)
	}
	s.guard.after(s.eng, in.Steps())
	return s.advance()
}

// ErrFinished is the abort of an episode finished with a decision
// pending (Stepper.Finish).
var ErrFinished = fmt.Errorf("%w: finished with a decision pending", coord.ErrAbort)

// Finish returns the ended episode's Result (its metrics, and artifacts
// flushed). An episode finished with a decision pending is aborted first:
// the decision's answers fall back, audited, and the episode ends with
// status aborted (Result.Err wraps ErrFinished).
func (s *Stepper) Finish() Result {
	if s.failed != nil {
		return *s.failed
	}
	if s.d != nil {
		s.Answer(nil, ErrFinished)
	}
	eng, in, ep, tw := s.eng, s.in, &s.ep, s.tw
	s.out.records(eng.Records()) // the end: the last events, episode_end

	var typesBuf [16]keyCount[string] // the paradigms' message types, with room to spare: no allocation
	msgTypes := keyCounts[string](typesBuf[:0])
	for i := range in.Messages {
		msgTypes = msgTypes.add(in.Messages[i].Type)
	}
	byType := msgTypes.counts()
	if ep.Messages != nil {
		enc := json.NewEncoder(ep.Messages)
		for i := range in.Messages {
			s.writes.keep("messages", enc.Encode(&in.Messages[i]))
		}
	}
	if tw != nil {
		s.writes.keep("trace", tw.Close())
	}
	s.sc.sources = s.sources
	m := metricsFrom(eng, &s.sc.tally, Coordination{Steps: in.Steps(), Forced: in.Forced, BySource: s.sources.counts(), ByType: byType})
	m.Instance, m.Paradigm, m.Controller, m.Seed = ep.Plant.Inst.Name, ep.Mode.ID, ep.Controller.Name(), ep.Seed
	if md, ok := ep.Controller.(ModelController); ok {
		m.Model, m.Framework = md.ModelNames(), md.Framework()
	}
	sec := &m.Secondary
	sec.LLMCalls, sec.PromptTokens, sec.CompletionTokens = s.calls, s.prompt, s.compl
	var roleTiming map[string]RoleTiming
	if s.byRole != nil {
		sec.ByRole, roleTiming = s.byRole.usage(), s.byRole.timing()
	}
	res := Result{Metrics: m, CacheHits: s.hits, RoleTiming: roleTiming, Err: cmp.Or(s.stopErr, s.writes.first)}
	s.tr.end(&res.Metrics, res.Err)
	return res
}
