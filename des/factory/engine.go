package factory

import (
	"slices"

	"github.com/coordbench/coordbench/des/sim"
)

// Status is an episode's state; every status but Running is final.
type Status string

// Episode statuses. Done is the only non-truncated end.
const (
	Running        Status = "running"
	Done           Status = "done"
	Deadlock       Status = "deadlock"
	NoProgress     Status = "no_progress"
	TimeLimit      Status = "time_limit"
	DecisionLimit  Status = "decision_limit"
	ControllerFail Status = "controller_failed"
	// Aborted: the controller ended the episode with a fatal error
	// (coord.ErrAbort: a model that could not be reached, say).
	Aborted Status = "aborted"
	// Interrupted: the user stopped the run (Ctrl-C in des run); the
	// metrics describe the state reached.
	Interrupted Status = "interrupted"
)

// Truncated reports whether the episode ended before all jobs completed.
func (s Status) Truncated() bool { return s != Running && s != Done }

// Calendar event kinds (sim.Event.Kind) and their priority classes at equal
// times: repairs first, then completions of setups and operations, then
// transport completions, arrivals, and breakdowns last.
const (
	kRepair uint8 = iota
	kSetupDone
	kFinish
	kTransportDone
	kArrival
	kBreakdown
)

type jobState uint8

const (
	jPending   jobState = iota // not arrived yet
	jBacklog                   // arrived, waiting for release
	jRouting                   // its current operation awaits a cell
	jBlocked                   // committed to a full cell, waiting for a slot
	jTransport                 // moving to its cell
	jWaiting                   // in the cell's inbound buffer
	jWorking                   // on a machine (setup or processing)
	jDone
)

type job struct {
	JobSpec
	state   jobState
	op      int     // operation being routed/moved/processed
	dest    int     // cell of the current operation (-1 before routing)
	at      int     // cell holding the job (-1: the dock)
	machine int     // global machine index holding the job, -1 if none
	since   float64 // start of the current wait (blocked, transport, buffer)
	route   []RouteOp
	family  int

	// Re-routing (reroute.go): why the current routing is a re-route offer
	// ("" if it is not) and the cell whose queue the job left; the room
	// epoch of its last offer in this blocked spell (-1: none); the order
	// in which it blocked; a breakdown alarm on the cell it waits for.
	reroute     string
	rerouteFrom int
	offered     int64
	blockSeq    uint64
	alarm       bool
	// A breakdown alarm on the cell whose buffer holds the job (qalarm:
	// it may be offered to routing once, offerQueued); during that offer,
	// fromQueue is set and qpos is its place in the buffer.
	qalarm    bool
	fromQueue bool
	qpos      int
}

type machine struct {
	cell, index int
	state       MachineState
	job         int // job on the machine (working or holding), -1 if none
	family      int // family it is set up for, -1 if none
	epoch       int32
	endAt       float64      // end of the current setup or processing (realized)
	resume      MachineState // state to return to after repair
	remaining   float64      // realized work left in the interrupted phase
	// The nominal twins of endAt and remaining, the only ones agents see
	// (view.go): the phase's nominal duration (no processing noise) minus
	// the time it has run, never below 0.
	nomEnd  float64 // nominal end of the running phase
	nomLeft float64 // nominal work left in the interrupted phase
	since   float64 // start of the current state
	bd, rp  sim.Stream
}

type cellState struct {
	occupancy int   // admitted jobs not yet started (moving in or waiting)
	waiting   []int // jobs in the buffer, in arrival order
	admitQ    []int // jobs blocked on this cell, FIFO
	incoming  []int // jobs moving to this cell
}

// Engine is the event engine G for one episode: a deterministic state
// machine over a compiled Plant. Drive it with Advance; when it stops with
// decisions pending, commit them with Release, Defer and Assign, then call
// Advance again. Every step appends the records of the events it realized
// to a batch, which Records hands over. An Engine is not safe for
// concurrent use; run episodes in parallel with one Engine each.
type Engine struct {
	P    *Plant
	seed uint64
	cal  *sim.Calendar
	recs []Record // the batch's storage: recs[:nrec] are the records since the last Records call, in order
	nrec int

	specs    []JobSpec // the episode's jobs as drawn (storage kept by Reset)
	jobs     []job
	machines []machine
	cells    []cellState
	cellVer  []uint64 // cell c's version (CellVersion): bumped by touch
	areaVer  []uint64 // area a's version (AreaVersion): bumped by touch with its cell's
	backlog  []int    // arrived, unreleased jobs in arrival order
	routeQ   []int    // jobs whose current operation awaits routing, FIFO
	dirty    []int    // cells whose dispatch must be retried
	isDirty  []bool

	releaseOpen bool   // a release opportunity is open (something changed)
	releaseWhy  string // the change that opened it
	alarms      uint8  // alarms raised since the plant last decided (alarm* bits)
	deferred    bool   // the plant deferred at the current instant
	nextArrival int
	wip         int
	completed   int
	inTransit   int
	working     int // machines in setup or busy
	status      Status
	now         float64
	progress    uint64

	powerW    int64 // live plant power, in watts
	lastPowW  int64 // last traced power
	lastPowT  float64
	overshoot bool
	overUnit  int64 // the last time unit counted in PowerOvershootUnits, -1 before any

	// Room bookkeeping for re-routing (reroute.go).
	room      []bool  // cell c had room at the last check
	gainAt    []int64 // room epoch at which cell c last gained room
	roomEpoch int64
	blockSeq  uint64
	nBlocked  int // jobs in the cells' admission queues
	nQAlarm   int // jobs with a queue alarm (qalarm)

	Acc Accounting
}

// Accounting holds the engine's running totals; see docs/metrics.md.
type Accounting struct {
	EnergyKWh     float64 `json:"energy_kwh"`
	OvershootKWh  float64 `json:"overshoot_kwh"`
	OvershootTime float64 `json:"overshoot_time"`
	// Job-time in each wait, closed at episode end for waits still open.
	TransportTime  float64 `json:"transport_time"`
	BlockingTime   float64 `json:"blocking_time"`
	BufferWaitTime float64 `json:"buffer_wait_time"`
	// Machine-time in each state.
	SetupTime          float64 `json:"setup_time"`
	BusyTime           float64 `json:"busy_time"`
	MachineBlockedTime float64 `json:"machine_blocked_time"`
	DownTime           float64 `json:"down_time"`

	Tardiness float64 `json:"tardiness"`
	Completed int     `json:"completed"`

	PowerOvershootEntries int `json:"power_overshoot_entries"`
	BlockingIncidents     int `json:"blocking_incidents"`
	// Reroutes counts blocked jobs offered to routing again.
	Reroutes      int `json:"reroutes"`
	WIPViolations int `json:"wip_violations"`
	// PowerOvershootUnits counts the time units [k, k+1) of the clock in
	// which plant power was above the cap for a positive length of time.
	PowerOvershootUnits int `json:"power_overshoot_units"`

	Breakdowns int `json:"breakdowns"`
	Events     int `json:"events"` // calendar events applied
}

// NewEngine starts an episode of plant p with the given seed. Its first
// records (Records) are episode_start and the initial power_change.
func NewEngine(p *Plant, seed uint64) *Engine {
	e := &Engine{}
	e.Reset(p, seed)
	return e
}

// Reset starts a new episode of plant p with the given seed on e, as
// NewEngine does, reusing e's storage (jobs, machines, cells, calendar):
// a runner that plays episodes one after the other allocates the engine
// once. Nothing of e's previous episode survives, its records not taken
// included; what e returned about it (Backlog, RouteQueue, Records) is
// invalid from here on.
func (e *Engine) Reset(p *Plant, seed uint64) {
	specs := p.jobsInto(e.specs, seed)
	recs := e.recs
	if recs == nil {
		recs = make([]Record, recordsHint)
	}
	calHint := 64 + p.Machines*2 + len(specs)
	cal := e.cal
	if cal == nil {
		cal = sim.NewCalendar(calHint)
	} else {
		cal.Reset()
	}
	*e = Engine{
		P: p, seed: seed, cal: cal, recs: recs, specs: specs,
		jobs:     reuse(e.jobs, len(specs)),
		machines: slices.Grow(e.machines[:0], p.Machines),
		cells:    reuseCells(e.cells, len(p.Cells)),
		cellVer:  reuse(e.cellVer, len(p.Cells)+len(p.Areas)), // areaVer too (split below): one allocation
		backlog:  e.backlog[:0],
		routeQ:   e.routeQ[:0],
		dirty:    e.dirty[:0],
		isDirty:  reuse(e.isDirty, len(p.Cells)),
		room:     reuse(e.room, len(p.Cells)),
		gainAt:   reuse(e.gainAt, len(p.Cells)),
		status:   Running, releaseOpen: true, releaseWhy: "episode_start",
		overUnit: -1,
	}
	e.cellVer, e.areaVer = e.cellVer[:len(p.Cells)], e.cellVer[len(p.Cells):] // cellVer keeps the capacity of both for the next Reset
	for i, s := range specs {
		pt := &p.Products[s.product]
		e.jobs[i] = job{JobSpec: s, dest: -1, at: -1, machine: -1, route: pt.Route, family: pt.Family, rerouteFrom: -1, offered: -1}
	}
	for c := range e.room {
		e.room[c] = true // buffers start empty
	}
	total := 0
	for i := range e.jobs {
		total += len(e.jobs[i].route)
	}
	r := e.record(EvEpisodeStart, -1)
	r.Seed, r.Job, r.Ops = seed, int32(len(specs)), int32(total)
	for c := range p.Cells {
		cell := &p.Cells[c]
		for m := 0; m < cell.Machines; m++ {
			mc := machine{cell: c, index: m, state: Idle, job: -1, family: -1}
			if cell.MTBF > 0 {
				mc.bd = sim.NewStream(seed, BreakdownStream(cell.ID, m))
				mc.rp = sim.NewStream(seed, RepairStream(cell.ID, m))
				e.schedule(mc.bd.Exp(cell.MTBF), kBreakdown, int32(len(e.machines)), 0)
			}
			e.machines = append(e.machines, mc)
			e.powerW += cell.PowerW[Idle]
		}
	}
	e.lastPowW = -1 // force a power_change with the initial level right after episode_start
	e.flushPower()
	if len(e.jobs) > 0 {
		e.schedule(e.jobs[0].Arrival, kArrival, 0, 0)
	}
}

// reuse returns s resized to n zero elements, reusing its storage.
func reuse[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// reuseCells returns n empty cell states, keeping the storage of the
// queues of s's.
func reuseCells(s []cellState, n int) []cellState {
	s = slices.Grow(s[:0], n)[:n]
	for i := range s {
		c := &s[i]
		*c = cellState{waiting: c.waiting[:0], admitQ: c.admitQ[:0], incoming: c.incoming[:0]}
	}
	return s
}

func (e *Engine) schedule(t float64, kind uint8, a, b int32) {
	// Times are now + a non-negative duration, so this cannot fail; a
	// failure would be an engine bug, and ending the episode keeps the
	// results readable instead of crashing the suite.
	if _, err := e.cal.Schedule(t, kind, kind, a, b, 0); err != nil {
		e.end(Deadlock)
	}
}

// Now is the current simulation time.
func (e *Engine) Now() float64 { return e.now }

// Status is the episode status (Running until the end).
func (e *Engine) Status() Status { return e.status }

// Progress counts physical progress: a job released, admitted, moved,
// started, finished or completed (arrivals are exogenous and do not count).
// A decision step that leaves it unchanged made no progress.
func (e *Engine) Progress() uint64 { return e.progress }

// Advance runs the autonomous event-advance loop: it applies every pending
// event of the current instant, then stops if a decision is required, the
// episode has ended, or nothing can progress any more (deadlock); otherwise
// it moves the clock to the next event time and goes on. It returns true
// while the episode runs (decisions are pending).
func (e *Engine) Advance() bool {
	for e.status == Running {
		next, ok := e.peek()
		if ok && next.Time <= e.now {
			e.cal.Next()
			e.apply(next)
			continue
		}
		// The current instant is complete.
		if e.completed == len(e.jobs) {
			e.end(Done)
			break
		}
		if len(e.routeQ) == 0 {
			e.offerReroute()
		}
		if len(e.routeQ) == 0 {
			e.offerQueued()
		}
		// Power that crossed the cap is traced before anyone decides, so
		// that going over raises its alarm now, in this instant, for the
		// plant to answer (a commit may change the level again: it is
		// traced at the next crossing or when the instant closes).
		if (e.powerW > e.P.capWatts) != e.overshoot {
			e.flushPower()
		}
		if len(e.routeQ) > 0 || e.ReleasePending() {
			return true
		}
		if !ok || !e.canProgress() {
			e.end(Deadlock)
			break
		}
		e.closeInstant()
		if next.Time > e.P.Inst.Horizon {
			e.now = e.P.Inst.Horizon
			e.end(TimeLimit)
			break
		}
		e.now = next.Time
	}
	return false
}

// closeInstant runs once the current instant's events and decisions are
// all applied, just before time moves on: the instant's final power level
// is traced, alarms no one could answer are dropped (no release was
// possible), and a defer made during the instant expires.
func (e *Engine) closeInstant() {
	e.flushPower()
	e.alarms = 0
	if e.deferred {
		e.deferred = false
		e.openRelease("defer_expired")
	}
}

// canProgress reports whether some pending event can still change the
// state of a job (deadlock detection). Breakdowns and repairs of machines
// that hold nothing useful do not count.
func (e *Engine) canProgress() bool {
	if e.nextArrival < len(e.jobs) || e.inTransit > 0 || e.working > 0 {
		return true
	}
	if e.deferred && len(e.backlog) > 0 && e.wip < e.P.Inst.WIPCap {
		return true
	}
	for i := range e.machines {
		m := &e.machines[i]
		if m.state == Down && (m.resume == Setup || m.resume == Busy || (m.job < 0 && len(e.cells[m.cell].waiting) > 0)) {
			return true
		}
	}
	return false
}

// Truncate ends a running episode now with the given status (used by the
// runner for no-progress, decision-limit and controller failures, and when
// the controller aborts).
func (e *Engine) Truncate(s Status) {
	if e.status == Running {
		e.end(s)
	}
}

func (e *Engine) end(s Status) {
	if e.status != Running {
		return
	}
	e.status = s
	e.flushPower()
	now := e.now
	e.integratePower(now)
	for i := range e.machines {
		e.closeState(&e.machines[i], now)
	}
	for i := range e.jobs {
		j := &e.jobs[i]
		switch j.state {
		case jBlocked:
			e.Acc.BlockingTime += now - j.since
		case jTransport:
			e.Acc.TransportTime += now - j.since
		case jWaiting:
			e.Acc.BufferWaitTime += now - j.since
		}
	}
	e.record(EvEpisodeEnd, -1).Status = s
}

// Records hands over the records of the events realized since the
// previous call (or since Reset), in the order they happened: those of
// Advance, of the commits (Release, Defer, Assign) and of the end
// (episode_end, from Advance or Truncate). Records is the engine's
// output, as raft's Ready is a node's: the loop that drives the engine
// takes them after each step and hands them on (harness.Run: to the trace
// writer, an observer and the interpreter).
//
// The slice belongs to the engine and is overwritten from its next step
// on: consume or copy the records first. An engine whose records are
// never taken keeps them all, up to its next Reset.
func (e *Engine) Records() []Record {
	r := e.recs[:e.nrec]
	e.nrec = 0
	return r
}

// recordsHint is the room the batch of records starts with: a decision's
// steps realize about 9 events on average, at most 30 to 80 at once on
// the reported and generated plants; a bigger batch grows once and is
// kept.
const recordsHint = 64

// record adds the record of event ev about job j to the batch and returns
// it for the caller to complete: it is Record{T: now, Ev: ev, Job: j, Op:
// j's operation or -1, Cell: -1, Machine: -1, From: -1}. Field by field
// into the batch's storage, not with that literal: Go builds a literal of
// a struct with a string in it on the stack and copies its 96 bytes over
// the slot with a write-barrier check, at every one of an episode's ~2,500
// records, and Status (the string) is set only by the episode's last
// record. TestRecordIsTheLiteral checks every field. The pointer is valid
// until the next record.
func (e *Engine) record(ev EventType, j int) *Record {
	i := e.nrec
	if i == len(e.recs) {
		e.recs = append(e.recs, Record{}) // the batch's storage grows (and is kept)
	}
	e.nrec = i + 1
	r := &e.recs[i]
	r.T, r.Ev, r.Job, r.Op, r.Cell, r.Machine, r.From = e.now, ev, int32(j), -1, -1, -1, -1
	r.KW, r.Due, r.Dur, r.Phase, r.Ops, r.Product, r.Seed = 0, 0, 0, 0, 0, 0, 0
	if r.Status != "" {
		r.Status = ""
	}
	if j >= 0 {
		r.Op = int32(e.jobs[j].op)
	}
	return r
}

// Release triggers that are alarms: they survive the other changes of
// their instant until the plant answers (ReleaseTrigger).
const (
	TriggerPowerAlarm     = "power_alarm"     // plant power went over the cap
	TriggerPowerRecovered = "power_recovered" // plant power fell back to the cap or under
	TriggerBreakdown      = "breakdown"       // a machine broke down
	TriggerRepair         = "repair"          // a machine was repaired
)

// Alarm bits (Engine.alarms), most urgent first.
const (
	alarmPower uint8 = 1 << iota
	alarmBreakdown
	alarmRepair
)

// openRelease opens a release opportunity because of the named change.
func (e *Engine) openRelease(why string) {
	e.releaseOpen = true
	e.releaseWhy = why
	switch why {
	case TriggerPowerAlarm:
		e.alarms |= alarmPower
	case TriggerPowerRecovered:
		e.alarms &^= alarmPower
	case TriggerBreakdown:
		e.alarms |= alarmBreakdown
	case TriggerRepair:
		e.alarms |= alarmRepair
	}
}

// ReleaseTrigger names the change that opened the current release
// opportunity. An alarm raised since the plant last decided, in this
// instant, wins over later changes of the instant, the most urgent
// first: power_alarm (plant power went over the cap and has not come
// back), breakdown, repair. Otherwise it is the last change:
// episode_start, arrival, job_complete, power_recovered or defer_expired.
func (e *Engine) ReleaseTrigger() string {
	switch {
	case e.alarms&alarmPower != 0:
		return TriggerPowerAlarm
	case e.alarms&alarmBreakdown != 0:
		return TriggerBreakdown
	case e.alarms&alarmRepair != 0:
		return TriggerRepair
	}
	return e.releaseWhy
}

// peek returns the next calendar event that is not void, discarding the
// void ones first: a setup or processing completion cancelled by a
// breakdown (its machine's epoch moved on). Such an event must not move
// the clock: time would stop at a realized completion time that nothing
// happens at, a stop that would show agents when a hidden phase would
// have ended.
func (e *Engine) peek() (sim.Event, bool) {
	for {
		ev, ok := e.cal.Peek()
		if !ok || (ev.Kind != kFinish && ev.Kind != kSetupDone) {
			return ev, ok
		}
		m := &e.machines[ev.A]
		want := Busy
		if ev.Kind == kSetupDone {
			want = Setup
		}
		if m.epoch == ev.B && m.state == want {
			return ev, ok
		}
		e.cal.Discard()
	}
}
