package coord

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/internal/decfmt"
)

// Bounds of what a payload carries and of a protocol run.
const (
	MaxReleaseOptions = 8 // backlog jobs offered per release decision
	RecentEvents      = 8 // event types in context.recent_events
	MemorySize        = 6 // entries of bounded working memory per agent
	MaxBidRounds      = 3 // announcements per work item before the plant falls back
)

// Interpreter is I + Γ for one episode: it turns the engine's decision
// points into agent activations under an authority mode, runs the
// routing protocol of each work item step by step, validates and commits
// actions, and logs protocol messages. The loop that drives the engine
// hands it the engine's records (Observe) for the payload's recent events.
type Interpreter struct {
	eng *factory.Engine
	sel ModeSelector
	// static is sel when sel is an AuthorityMode (isStatic), validated by
	// Reset: a work item takes it without asking sel again.
	static   AuthorityMode
	isStatic bool
	// adaptive is the compiled rules when sel is an adaptive paradigm
	// (isStatic false); choice is the choice made for the work item that
	// the last Next started (chosen), auth its account in the payloads.
	adaptive *adaptiveSel
	choice   ModeChoice
	chosen   bool
	auth     *Authority

	step    int
	recent  [RecentEvents]string // names of the last event types, a ring (see Emit)
	nRecent int
	item    itemState // the work item whose protocol is running

	// Per-decision snapshots, taken lazily so that a decision costs what
	// its views show: an area or cell agent's payload reads only its own
	// cells, never the whole plant. A snapshot belongs to decision gen
	// when its stamp equals gen; Next starts a new gen. A cell's summary
	// is taken again from the engine only if the cell changed since it was
	// taken (factory.Engine.CellVersion) or, for a cell with a machine in
	// setup or busy, the clock moved (see cellInfo).
	gen       uint64
	cells     []cellSnapshot // by cell index
	areas     []areaSnapshot // by area index: the plant view's area summaries, kept as cells are
	plantGen  uint64         // plantObs is valid if plantGen == gen
	untried   []int          // untriedCells's result, reused
	candAreas []int          // candidateAreas's result, reused
	cellReads int            // cells summarized so far (tests check that local views stay local)
	active    []*agentSlot   // the agents activated by the current decision, in activation order
	agents    []activeAgent  // ApplyNotes's agents in id order, reused
	msgs      []int          // messages caused by each audit's agent in this step (see countMsgs)
	otherMsgs int            // messages of this step caused by agents without an audit
	remembers []byte
	lines     []byte // memory lines' storage (see line): the current block, only appended to
	audits    []Audit

	plant        *factory.Plant // the plant whose agents are named below
	cellAgents   []string       // agent id by cell index ("cell:C01")
	areaAgents   []string       // agent id by area index ("area:A1")
	areaMachines []int          // machines by area index (AreaSummary.Machines), with areaAgents
	cellTmpl     []CellOption   // by cell index: a cell option's parts that are the plant's (cellOption)
	cellIndex    map[string]int // cell index by cell id ("C01")

	// Messages is every protocol message so far (G_cm = len).
	Messages []Message
	// Forced counts work items whose protocol ran out of options and went
	// to the plant-level fallback (KindPlantFallback).
	Forced int

	err error // a protocol failure that stops the episode

	// Reused payload storage (see Next).
	decision  Decision
	views     map[string]*agentSlot
	plantSlot *agentSlot // views[RolePlant], once made
	work      WorkItem
	jobOpts   []JobOption
	cellOpts  []CellOption
	areaOpts  []AreaOption
	plantObs  PlantObservation
	plantSum  PlantObservation // a summary plant view's observation (compress.go)
}

// NewInterpreter binds an interpreter to an engine and a paradigm (an
// AuthorityMode, or any ModeSelector choosing a mode per work item).
func NewInterpreter(eng *factory.Engine, sel ModeSelector) (*Interpreter, error) {
	in := &Interpreter{}
	if err := in.Reset(eng, sel); err != nil {
		return nil, err
	}
	return in, nil
}

// Reset binds in to a new episode's engine and paradigm, as
// NewInterpreter does, reusing in's storage (messages, views, agent
// slots): a runner that plays episodes one after the other allocates the
// interpreter once. Nothing of the previous episode survives; its
// messages, decisions, views and audits are invalid from here on (its
// memory lines, strings in blocks that are never reused, stay valid). On an error in is left unusable until the next
// successful Reset.
func (in *Interpreter) Reset(eng *factory.Engine, sel ModeSelector) error {
	static, isStatic := sel.(AuthorityMode)
	var adaptive *adaptiveSel
	if isStatic {
		if err := static.Validate(); err != nil {
			in.err = err
			return err
		}
		if static.Adaptive != nil { // its rules choose each item's mode
			adaptive, isStatic = compileAdaptive(static), false
		}
	}
	p := eng.P
	nc := len(p.Cells)
	it := &in.item
	*in = Interpreter{eng: eng, sel: sel, static: static, isStatic: isStatic, adaptive: adaptive,
		item: itemState{excludedCell: it.excludedCell, excludedArea: it.excludedArea, candidates: it.candidates[:0],
			bids: it.bids[:0], bidClass: it.bidClass, rejected: it.rejected[:0], escalated: it.escalated[:0], inv: it.inv.next()},
		cells:   reuse(in.cells, nc),
		areas:   reuse(in.areas, len(p.Areas)),
		untried: in.untried[:0], candAreas: in.candAreas[:0], active: in.active[:0], agents: in.agents[:0], msgs: in.msgs[:0], remembers: in.remembers[:0],
		audits: in.audits[:0],
		plant:  in.plant, cellAgents: in.cellAgents, areaAgents: in.areaAgents, areaMachines: in.areaMachines, cellIndex: in.cellIndex,
		cellTmpl: in.cellTmpl,
		// About two messages per operation under the centralized paradigm
		// (assign, accept), more under the others: room for the first
		// saves the slice's early doublings.
		Messages: slices.Grow(in.Messages[:0], min(2*eng.NumOps(), maxMessagesHint)),
		decision: Decision{ActiveAgents: in.decision.ActiveAgents, answer: in.decision.answer, agents: in.decision.agents[:0]},
		views:    in.views, plantSlot: in.plantSlot,
		jobOpts: in.jobOpts[:0], cellOpts: in.cellOpts[:0], areaOpts: in.areaOpts[:0],
		plantObs: PlantObservation{Areas: in.plantObs.Areas[:0]},
	}
	if in.views == nil {
		in.views = map[string]*agentSlot{}
	}
	for _, s := range in.views { // keep the payload storage, forget what the agent knew
		s.memory, s.feedback = s.memory[:0], ""
	}
	if in.plant != p {
		in.plant = p
		in.cellAgents, in.areaAgents, in.cellIndex = in.cellAgents[:0], in.areaAgents[:0], map[string]int{}
		in.cellTmpl = slices.Grow(in.cellTmpl[:0], len(p.Cells))
		for c, cell := range p.Cells {
			id := RoleCell + ":" + cell.ID
			in.cellAgents = append(in.cellAgents, id)
			in.cellIndex[cell.ID] = c
			in.cellTmpl = append(in.cellTmpl, CellOption{Cell: cell.ID, Area: p.Areas[cell.Area].ID, Machines: cell.Machines,
				BusyKW: float64(cell.PowerW[factory.Busy]) / 1000, index: c})
		}
		in.areaMachines = in.areaMachines[:0]
		for _, a := range p.Areas {
			in.areaAgents = append(in.areaAgents, RoleArea+":"+a.ID)
			n := 0
			for _, c := range a.Cells {
				n += p.Cells[c].Machines
			}
			in.areaMachines = append(in.areaMachines, n)
		}
	}
	return nil
}

// reuse returns s resized to n zero elements, reusing its storage.
func reuse[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// Observe reads the engine's records (factory.Engine.Records) for the
// payload's recent events. Hand it every record, in order, before the
// Next that should see them: harness.Run passes each batch on as it
// takes it from the engine, before Next.
func (in *Interpreter) Observe(recs []factory.Record) {
	n := in.nRecent
	for i := range recs {
		ev := recs[i].Ev
		if ev == factory.EvPowerChange || ev == factory.EvEpisodeStart {
			continue
		}
		in.recent[uint(n)%RecentEvents] = ev.String() // unsigned: a mask, no bounds check
		n++
	}
	in.nRecent = n
}

// Err reports why Next returned nil while the engine waits, if it did:
// an invalid mode from a ModeSelector, or a protocol error.
func (in *Interpreter) Err() error { return in.err }

// Steps is the number of decision steps executed so far (G_ds).
func (in *Interpreter) Steps() int { return in.step }

// Next builds the decision the engine waits for, or returns nil if none
// is pending. The running work item's protocol goes first, then the next
// work item awaiting a cell (oldest first), then the release opportunity.
//
// The decision, its views and everything they point to belong to the
// interpreter and are reused by the next call to Next: a controller or
// logger that keeps any of it past Apply must copy it (encoding it to JSON,
// as the runner does, is a copy).
func (in *Interpreter) Next() *Decision {
	e := in.eng
	if in.err != nil || !in.item.active && len(e.RouteQueue()) == 0 && !e.ReleasePending() {
		return nil
	}
	in.gen++ // the engine may have moved: every snapshot is stale
	d := &in.decision
	*d = Decision{Version: PayloadVersion, Step: in.step, Time: e.Now(), ActiveAgents: d.ActiveAgents, answer: d.answer, agents: d.agents[:0]}
	if d.ActiveAgents == nil {
		d.ActiveAgents = map[string]*View{}
	}
	in.active = in.active[:0]
	if !in.item.active && len(e.RouteQueue()) > 0 {
		if err := in.startItem(e.RouteQueue()[0]); err != nil {
			in.err = err
			clear(d.ActiveAgents) // no decision: no agent active
			return nil
		}
	}
	if in.item.active {
		in.itemViews(d)
		for _, s := range in.active {
			if len(s.view.Options) == 0 { // the protocol guarantees options; never hand out an empty choice
				in.err = fmt.Errorf("protocol error: %s has no legal action for job %d (paradigm %s)", s.view.AgentID, in.item.job, in.item.mode.ID)
				clear(d.ActiveAgents)
				return nil
			}
		}
	} else {
		v := &in.view(RolePlant, RolePlant, e.ReleaseTrigger()).view
		in.releaseView(v)
		in.finishView(v)
	}
	for _, s := range in.active {
		d.agents = append(d.agents, &s.view)
	}
	in.fillActiveAgents(d)
	return d
}

// fillActiveAgents makes d.ActiveAgents map the views of in.active (d's
// list) by their ids. The map is reused from decision to decision, and
// the same agents are often active again (the plant, under the
// centralized paradigm, at every decision): when the map already holds
// exactly d's views, it is left as it is, sparing a clear and a store
// per agent (a lookup per agent checks it).
func (in *Interpreter) fillActiveAgents(d *Decision) {
	m := d.ActiveAgents
	if d.listed() {
		return
	}
	clear(m)
	for _, v := range d.agents {
		m[v.AgentID] = v
	}
}

// Apply validates the controller's actions for decision d, replaces
// missing or illegal ones by the contract-safe fallback, commits them (to
// the protocol, and to the engine when a work item is placed or a job
// released), and returns one audit per active agent, in agent-id order.
// ctrlErr, if the controller failed as a whole, is recorded as the reason
// for every fallback.
func (in *Interpreter) Apply(d *Decision, actions map[string]int, src Source, ctrlErr error) ([]Audit, error) {
	return in.ApplyNotes(d, actions, src, ctrlErr, nil)
}

// ApplyNotes is Apply with the controller's per-agent notes (raw replies,
// tokens, latency), which go into the audits; a note's Error is the reason
// recorded when that agent falls back.
//
// The audits' storage belongs to the interpreter, like the decision's
// (their payloads are its views): the next Apply reuses it, so a caller
// that keeps audits past that must copy them.
func (in *Interpreter) ApplyNotes(d *Decision, actions map[string]int, src Source, ctrlErr error, notes map[string]AgentNote) ([]Audit, error) {
	agents := in.activeAgents(d)
	for i := range agents {
		agents[i].act, agents[i].answered = actions[agents[i].id]
	}
	return in.apply(d, agents, src, ctrlErr, notes)
}

// ApplyList is ApplyNotes for the decision of the last Next with the
// actions given by position: actions[i] is the action for the i-th view
// of ActiveViews (activation order). harness.Run uses it for a controller
// that answers each view alone (a ViewChooser). The decision's
// ActiveAgents map is not read: the list is the decision's own (Next made
// the map from it). NoAnswer stands for an agent left without an answer,
// as one missing from ApplyNotes's map; the checks, fallbacks, audits and
// commit are ApplyNotes's.
func (in *Interpreter) ApplyList(actions []int, src Source, ctrlErr error, notes map[string]AgentNote) ([]Audit, error) {
	d := &in.decision
	if len(actions) != len(in.active) {
		return nil, fmt.Errorf("step %d: %d actions for %d active agents", d.Step, len(actions), len(in.active))
	}
	agents := in.listedAgents()
	for i := range agents {
		agents[i].act, agents[i].answered = actions[i], actions[i] != NoAnswer
	}
	sortByID(agents)
	return in.apply(d, agents, src, ctrlErr, notes)
}

// NoAnswer in ApplyList's actions leaves the agent without an answer.
const NoAnswer = math.MinInt

// ActiveViews lists the views of the last Next's decision in activation
// order, the views ApplyList's actions answer. The slice belongs to the
// decision and is reused by the next call to Next.
func (in *Interpreter) ActiveViews() []*View { return in.decision.agents }

// apply validates the answers of agents (in id order; act and answered
// set), replaces missing or illegal ones by the contract-safe fallback,
// audits them and commits the step.
func (in *Interpreter) apply(d *Decision, agents []activeAgent, src Source, ctrlErr error, notes map[string]AgentNote) ([]Audit, error) {
	audits := in.audits[:0]
	for _, ag := range agents {
		id, v, act, ok := ag.id, ag.view, ag.act, ag.answered
		a := Audit{Step: d.Step, Time: d.Time, AgentID: id, Role: v.Role, Kind: v.Kind, Source: src, Payload: v}
		if len(notes) > 0 { // most controllers take no notes: no lookup, no copy of an empty note
			if note, noted := notes[id]; noted {
				n := note // only noted answers pay for a copy on the heap
				a.AgentNote = &n
				if n.DecidedBy != "" {
					a.Source = n.DecidedBy
				}
			}
		}
		switch {
		case ctrlErr != nil:
			a.Reason = "controller error: " + ctrlErr.Error()
		case !ok && a.AgentNote != nil && a.AgentNote.Error != "":
			a.Reason = "unusable reply: " + a.AgentNote.Error
		case !ok:
			a.Reason = "no action for this agent"
		case act < 0 || act >= len(v.ActionMask) || !v.ActionMask[act]:
			a.Reason = "illegal action index " + strconv.Itoa(act) + WithheldEscalation(v, act)
			r := act
			a.Requested = &r
		}
		if a.Reason == "" && v.Kind == KindPlantFallback && (in.item.cut || v.Options[act].Action == ActDecline) {
			// The plant left the placement to the harness, or did not earn
			// it (the step limit cut the protocol, whatever local options
			// were left): the contract-safe rule decides, and the decision
			// is the harness's (G_fb).
			a.Reason = ReasonDeclined
			if in.item.cut {
				a.Reason = ReasonStepLimit
			}
			r := act
			a.Requested = &r
		}
		if a.Reason != "" {
			act = SafeAction(v)
			a.Source = SourceFallback
			ag.slot.feedback = "your last reply was replaced by the fallback: " + a.Reason
		} else {
			ag.slot.feedback = ""
		}
		a.Action = act
		audits = append(audits, a)
	}
	in.audits = audits
	in.msgs = reuse(in.msgs, len(audits))
	in.otherMsgs = 0
	if err := in.commit(d); err != nil {
		return audits, fmt.Errorf("step %d: %w", d.Step, err)
	}
	// Messages belong to the decision that caused them; protocol
	// consequences with no decision of their own (an escalation after a
	// round in which every cell declined) go to the step's first agent, so
	// that the audits always add up to G_cm.
	for i := range audits {
		audits[i].Messages = in.msgs[i]
	}
	if in.otherMsgs != 0 {
		audits[0].Messages += in.otherMsgs
	}
	in.step++
	return audits, nil
}

// activeAgent is one agent of the decision being applied.
type activeAgent struct {
	id       string
	view     *View
	slot     *agentSlot
	act      int  // the controller's answer,
	answered bool // if it gave one
}

// activeAgents lists d's active agents in id order (the audits' order).
// For the decision of the last Next, untouched, they are the agents its
// views activated, in.active, and no map is read; any other decision is
// read from its map.
func (in *Interpreter) activeAgents(d *Decision) []activeAgent {
	var agents []activeAgent
	if d == &in.decision && d.listed() { // the map is still the one Next made
		agents = in.listedAgents()
	} else {
		agents = in.agents[:0]
		for id, v := range d.ActiveAgents {
			agents = append(agents, activeAgent{id: id, view: v, slot: in.slot(id)})
		}
		in.agents = agents
	}
	sortByID(agents)
	return agents
}

// listedAgents are the agents the last Next's views activated, in.active,
// in activation order (the order of ActiveViews), in in.agents' storage.
func (in *Interpreter) listedAgents() []activeAgent {
	agents := in.agents[:0]
	for _, s := range in.active {
		agents = append(agents, activeAgent{id: s.view.AgentID, view: &s.view, slot: s})
	}
	in.agents = agents
	return agents
}

// sortByID puts agents in id order, the audits' order.
func sortByID(agents []activeAgent) {
	if len(agents) > 1 {
		slices.SortFunc(agents, func(a, b activeAgent) int { return strings.Compare(a.id, b.id) })
	}
}

// auditOf finds agent id's audit in the step being applied (audits are
// in id order, one per agent). Most steps have a single agent (every
// centralized one): for a few audits, comparing ids for equality costs
// less than sort.Search's ordered comparisons through a closure.
func (in *Interpreter) auditOf(id string) (int, bool) {
	a := in.audits
	if len(a) <= 4 {
		for i := range a {
			if a[i].AgentID == id {
				return i, true
			}
		}
		return 0, false
	}
	i := sort.Search(len(a), func(i int) bool { return a[i].AgentID >= id })
	return i, i < len(a) && a[i].AgentID == id
}

// decided returns agent id's view and the action committed for it in the
// step being applied (nil and 0 if id has no audit). The audits are made
// from exactly the entries of the decision's ActiveAgents (activeAgents),
// each with its view as Payload: the view is d.ActiveAgents[id], found
// without a map lookup.
func (in *Interpreter) decided(id string) (*View, int) {
	if i, ok := in.auditOf(id); ok {
		return in.audits[i].Payload, in.audits[i].Action
	}
	return nil, 0
}

// cellOf returns the index of the cell a cell option names. An option
// the interpreter made knows its cell's index; any other (or one whose
// name was changed) is looked up by name.
func (in *Interpreter) cellOf(o *CellOption) (int, bool) {
	if cells := in.eng.P.Cells; o.index >= 0 && o.index < len(cells) && cells[o.index].ID == o.Cell {
		return o.index, true
	}
	c, ok := in.cellIndex[o.Cell]
	return c, ok
}

// countMsgs counts n messages caused by agent cause's decision in this
// step.
func (in *Interpreter) countMsgs(cause string, n int) {
	if i, ok := in.auditOf(cause); ok {
		in.msgs[i] += n
	} else {
		in.otherMsgs += n
	}
}

// commit applies one step's validated actions.
func (in *Interpreter) commit(d *Decision) error {
	if !in.item.active {
		v, act := in.decided(RolePlant)
		if v == nil || v.Kind != KindRelease {
			return fmt.Errorf("no release decision to commit")
		}
		opt := v.Options[act]
		if opt.Action == ActDefer {
			in.rememberf(RolePlant, d.Time, -1, 0, "defer")
			return in.eng.Defer()
		}
		in.rememberf(RolePlant, d.Time, -1, 0, "release job ", strconv.Itoa(opt.Job.Job))
		return in.eng.Release(opt.Job.Job)
	}
	return in.advance(d)
}

// send logs a protocol message caused by agent `cause`'s decision.
func (in *Interpreter) send(d *Decision, cause, typ, from, to string) {
	in.Messages = append(in.Messages, Message{Step: d.Step, Time: d.Time, Type: typ, Sender: from, Receiver: to,
		Job: in.item.job, Op: in.work.Op})
	in.countMsgs(cause, 1)
}

// cellSnapshot is a cell's summary as the interpreter keeps it.
type cellSnapshot struct {
	info  factory.CellInfo
	terms factory.BacklogTerms // info.Backlog's terms, made with info
	gen   uint64               // the decision that last read it (Interpreter.gen)
	kept  bool                 // info was taken in this episode, at version ver and time at
	ver   uint64               // the cell's version (factory.Engine.CellVersion) then
	at    float64              // the clock then
}

// areaSnapshot is an area's summary (the plant view's AreaSummary) as the
// interpreter keeps it: it is the area's current summary while the
// area's version is the same and either the clock has not moved or no
// machine of the area is in setup or busy (sum.Busy counts both), for
// then every cell's summary is the same (see cellInfo).
type areaSnapshot struct {
	sum  AreaSummary
	kept bool    // sum was made in this episode, at version ver and time at
	ver  uint64  // the area's version (factory.Engine.AreaVersion) then
	at   float64 // the clock then
}

// cellInfo is cell c's summary for the current decision, taken from the
// engine the first time the decision needs it, unless the summary kept
// from an earlier decision is still the engine's: the cell has not
// changed since (same version) and either the clock has not moved or no
// machine of the cell is in setup or busy (whose backlog counts down).
func (in *Interpreter) cellInfo(c int) *factory.CellInfo {
	s := &in.cells[c]
	if s.gen != in.gen { // small enough to inline: a decision's later reads cost a compare
		in.stampCell(c, s)
	}
	return &s.info
}

// stampCell makes s, cell c's snapshot, the current decision's (cellInfo).
func (in *Interpreter) stampCell(c int, s *cellSnapshot) {
	e := in.eng
	ver, now := e.CellVersion(c), e.Now()
	switch {
	case !s.kept || s.ver != ver:
		e.CellIntoTerms(c, &s.info, &s.terms) // the terms, for when only the clock moves
		s.kept, s.ver, s.at = true, ver, now
	case s.at != now && s.info.Setup+s.info.Busy > 0:
		// Only the clock moved: the backlog is all that changed (see
		// factory.BacklogTerms); the terms give it without CellInto's walk.
		if s.terms.OK() {
			s.info.Backlog = s.terms.At(now)
		} else {
			e.CellInto(c, &s.info)
		}
		s.at = now
	}
	s.gen = in.gen
	in.cellReads++
}

// plantObservation is the plant's observation for the current decision,
// filled the first time the decision needs it (a plant view, or a mode
// selector other than a static mode).
func (in *Interpreter) plantObservation() *PlantObservation {
	if in.plantGen != in.gen {
		in.fillPlantObservation()
		in.plantGen = in.gen
	}
	return &in.plantObs
}

// rememberf adds "t=<t> job <job> op <op>: <what>" to agent's memory, or
// "t=<t> <what>" when job < 0: the text of fmt's "t=%.1f job %d op %d: ",
// built without fmt.
//
// The line is written straight into the current block of lines (see
// line) when the block has room for the longest line the arguments can
// make: past the block's length, where no line handed out lies.
func (in *Interpreter) rememberf(agent string, t float64, job, op int, what ...string) {
	n := len("t=") + 15 + len(" job ") + 20 + len(" op ") + 20 + len(": ") // tenths of t < 2^40: at most 15 bytes
	for _, w := range what {
		n += len(w)
	}
	if !(t >= 0 && t < 1<<40) || n > lineChunk/4 {
		in.rememberSlow(agent, t, job, op, what...)
		return
	}
	if cap(in.lines)-len(in.lines) < n {
		in.lines = make([]byte, 0, lineChunk) // the full block stays with the lines it holds
	}
	start := len(in.lines)
	b := appendMemoryLine(in.lines, t, job, op, what)
	in.lines = b // within the block's capacity: the same block
	in.remember(agent, unsafe.String(&b[start], len(b)-start))
}

// rememberSlow is rememberf for a line that may not fit a block's room:
// built aside, then stored by line.
func (in *Interpreter) rememberSlow(agent string, t float64, job, op int, what ...string) {
	in.remembers = appendMemoryLine(in.remembers[:0], t, job, op, what)
	in.remember(agent, in.line(in.remembers))
}

// appendMemoryLine appends the text of rememberf's line.
func appendMemoryLine(b []byte, t float64, job, op int, what []string) []byte {
	b = append(b, "t="...)
	b = appendTenths(b, t)
	b = append(b, ' ')
	if job >= 0 {
		b = append(b, "job "...)
		b = appendInt(b, job)
		b = append(b, " op "...)
		b = appendInt(b, op)
		b = append(b, ": "...)
	}
	for _, w := range what {
		b = append(b, w...)
	}
	return b
}

// appendTenths appends t as strconv.AppendFloat(b, t, 'f', 1, 64) does:
// t's exact binary value rounded to one decimal, an exact tie to the even
// tenth. For 0 <= t < 2^40 (simulation times) it skips strconv's
// arbitrary-precision path: the product t*10 and its rounding error
// (math.FMA, exact) give the exact value x+e of 10t, so the nearest
// integer, and a tie, are decided exactly. TestAppendTenthsMatchesStrconv
// compares the two.
func appendTenths(b []byte, t float64) []byte {
	if !(t >= 0 && t < 1<<40) || math.Signbit(t) {
		return strconv.AppendFloat(b, t, 'f', 1, 64)
	}
	x := t * 10
	e := math.FMA(t, 10, -x) // 10t = x + e exactly; x < 2^44, so |e| <= 2^-10
	c := math.Floor(x)
	d := x - c // exact (Sterbenz), in [0, 1)
	up := false
	switch {
	case d < 0.25:
	case d > 0.75:
		up = true
	default:
		h := d - 0.5 // exact (Sterbenz): 10t - c - 0.5 = h + e
		switch {
		case h > -e:
			up = true
		case h == -e:
			up = uint64(c)%2 == 1 // a tie: to the even tenth
		}
	}
	n := uint64(c)
	if up {
		n++
	}
	b = decfmt.AppendUint(b, n/10)
	return append(b, '.', byte('0'+n%10))
}

// appendInt appends v in decimal, as strconv.AppendInt(b, int64(v), 10)
// does.
func appendInt(b []byte, v int) []byte {
	if v >= 0 {
		return decfmt.AppendUint(b, uint64(v))
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// maxMessagesHint bounds the messages Reset makes room for (an
// instance's operation count comes from outside, and messages are far
// fewer than operations once MaxDecisions ends an episode).
const maxMessagesHint = 1 << 14

// lineChunk is the size of the blocks that hold memory lines.
const lineChunk = 4 << 10

// line returns b as a string stored in a block of lines: one allocation
// per block instead of one per line. A block is only ever appended to,
// and Reset starts new blocks rather than reuse an earlier episode's, so
// a line never changes, whoever keeps it.
func (in *Interpreter) line(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > lineChunk/4 {
		return string(b)
	}
	if cap(in.lines)-len(in.lines) < len(b) {
		in.lines = make([]byte, 0, lineChunk) // the full block stays with the lines it holds
	}
	n := len(in.lines)
	in.lines = append(in.lines, b...)
	return unsafe.String(&in.lines[n], len(b))
}

func (in *Interpreter) remember(agent, s string) {
	sl := in.slot(agent)
	m := sl.memory
	if len(m) >= MemorySize { // full: drop the oldest, in place (views hold copies)
		copy(m, m[len(m)-MemorySize+1:])
		m = m[:MemorySize-1]
	}
	sl.memory = append(m, s)
}

// round2 rounds a payload figure to two decimals: payloads are read by
// models, and long float tails cost tokens without informing anyone.
func round2(x float64) float64 { return math.Round(x*100) / 100 }
