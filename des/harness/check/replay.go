package check

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/internal/inputfile"
)

// Machine states.
type mstate uint8

const (
	mIdle mstate = iota
	mSetup
	mBusy
	mBlocked
	mDown
	numMStates
)

var mstateNames = [numMStates]string{"idle", "setup", "busy", "blocked", "down"}

func (s mstate) String() string { return mstateNames[s] }

// Job states.
type jstate uint8

const (
	jBacklog   jstate = iota // arrived, not released
	jReleased                // released; stage_release_ready must follow
	jRouting                 // its current op awaits route_assigned
	jAssigned                // routed; admission, blocked or a continuation must follow
	jBlocked                 // waiting for a slot of its destination
	jUnblocked               // blocking_release seen; admission must follow
	jAdmitted                // slot reserved; transport_start must follow
	jTransport               // moving
	jWaiting                 // in the destination's inbound buffer
	jWorking                 // on a machine (setup or processing, or down meanwhile)
	jFinished                // op finished, holding its machine; stage_release_ready or job_complete must follow
	jDone
	jUnqueued // queue_release seen (a queued job at a broken cell); stage_release_ready must follow
)

var jstateNames = [...]string{"arrived (not released)", "released", "awaiting routing", "routed", "blocked",
	"unblocked", "admitted", "in transport", "waiting in a buffer", "on a machine", "finished an op", "complete",
	"released from its queue"}

func (s jstate) String() string { return jstateNames[s] }

type machineSt struct {
	cell, idx int
	state     mstate
	resume    mstate // state interrupted by the current breakdown
	job       int    // job on or held by the machine, -1 if none
	since     float64
	family    string
	hasFamily bool
	setupDone bool // setup_complete seen, process_start must follow
	awaitRes  bool // repaired in setup/busy, process_resume must follow
	// work is the time spent so far in the current setup or processing
	// phase, downtime excluded; runFrom is when the current run began.
	work, runFrom float64
	setupFrom     string
	setupFromHas  bool
	downLine      int
}

type jobSt struct {
	id      int
	st      jstate
	product *productInfo
	ops     int
	due     float64
	fin     int // operations finished = index of the current operation
	dest    int // cell of the current operation, -1 before routing
	at      int // cell holding or buffering the job; -1 the dock; -2 moving
	slot    int // cell whose inbound slot the job holds, -1 none
	mach    *machineSt
	since   float64 // start of the current wait (blocked, transport, buffer)
	dur     float64 // transport duration
	// Blocking release bookkeeping: the job that was ahead in the queue
	// (-1 none) and whether the cell was full, checked if admission
	// follows; whether the job was offered a re-route in its current
	// blocked spell.
	relAhead int
	relFull  bool
	offered  bool
	// relFrom is the cell whose queue the job left for a re-route (-1:
	// none): blocking on it again keeps the job's place (blockOrd, the
	// order in which it blocked) and is no new incident.
	relFrom  int
	blockOrd int
	// Queue offers (queue.go): a breakdown alarm on the cell whose buffer
	// holds the job; during its offer, the place it left in that buffer.
	qalarm    bool
	fromQueue bool
	qpos      int
	// modeLine is the line of the mode_selected record of the job's
	// current routing, 0 if none.
	modeLine int
}

// commit is a decision's visible effect: a release or a route_assigned.
type commit struct {
	line int
	t    float64
	kind string // "release" or "select_cell"
	job  int
	op   int
	cell string
}

type header struct {
	instance    string
	seed        uint64
	timeUnitS   float64
	capKW       float64
	transportKW float64
	carbon      float64
	wipCap      int
	horizon     float64
	jobs        int
	totalOps    int
}

// totals is what the trace determines of metrics.json.
type totals struct {
	end                     float64
	status                  string
	completed, finished     int
	released                int
	tardiness               float64
	energy, overKWh, overT  float64
	overEntries, overSecs   int
	blocking, wipViolations int
	breakdowns, reroutes    int
	state                   [numMStates]float64 // machine-time per state
	transport, blockingT    float64
	bufferWait              float64
	unresolvedOverdue       float64
	owedUntil               float64 // end, or the horizon for a truncated episode
}

type checker struct {
	rep   *Report
	plant *plantModel
	hdr   header
	have  bool // header seen

	line     int
	t        float64 // current instant
	started  bool
	ended    bool
	endLine  int
	lastLine int
	prev     *rec

	want     func(r *rec) bool
	wantDesc string
	wantLine int

	machines [][]machineSt
	jobs     map[int]*jobSt
	jobList  []*jobSt
	occ      []int
	blockedQ [][]int // per cell, blocked jobs in blocking order
	waitQ    [][]int // per cell, jobs in the buffer in arrival order
	arrived  int     // next job id expected to arrive
	nArrived int
	sumOps   int

	// power
	powerRecs   int
	lastKW      float64
	lastPowT    float64
	lastPowLine int
	powInstant  float64
	powInstantN int
	powCrossed  bool                    // the last power_change crossed the cap
	alarms      map[float64]*alarmFacts // alarms by instant (alarm.go)
	powerBad    bool
	// the last second counted in overSecs (-1 before any)
	lastOverSec float64
	dispatchBad []bool
	blockingBad []bool
	transportW  int64

	tot     totals
	commits []commit
	// room holds, per commit, the bit set of the cells that had room just
	// before it (snapRoom): the state the decisions before it saw.
	room []uint64

	// adaptive: the paradigm has rules, so every routing starts with a
	// mode_selected record (set by Dir from the manifest); modes are those
	// records.
	adaptive bool
	modes    []modeRec
}

// tolerance for times derived by float arithmetic.
func tol(t float64) float64 { return 1e-9 * math.Max(1, math.Abs(t)) }

func (c *checker) add(line int, check, format string, args ...any) {
	c.rep.Problems = append(c.rep.Problems, Problem{Line: line, Check: check, Msg: fmt.Sprintf(format, args...)})
}

func newChecker(rep *Report, inst *factory.Instance) *checker {
	c := &checker{rep: rep, jobs: map[int]*jobSt{}}
	c.plant = newPlantModel(inst, func(check, format string, args ...any) { c.add(0, check, format, args...) })
	n := len(c.plant.cells)
	c.machines = make([][]machineSt, n)
	for i, cell := range c.plant.cells {
		ms := make([]machineSt, max(cell.machines, 0))
		for k := range ms {
			ms[k] = machineSt{cell: i, idx: k, job: -1}
		}
		c.machines[i] = ms
	}
	c.occ = make([]int, n)
	c.blockedQ = make([][]int, n)
	c.waitQ = make([][]int, n)
	c.dispatchBad = make([]bool, n)
	c.blockingBad = make([]bool, n)
	c.lastOverSec = -1
	// Defaults until the header is read.
	c.hdr = header{instance: inst.Name, timeUnitS: inst.TimeUnitS, capKW: float64(watts(inst.Power.CapKW)) / 1000,
		transportKW: float64(watts(inst.Power.TransportKW)) / 1000, carbon: inst.Power.CarbonKgPerKWh,
		wipCap: inst.WIPCap, horizon: inst.Horizon, jobs: c.plant.jobsExpected}
	c.transportW = watts(c.hdr.transportKW)
	return c
}

// run reads the whole trace. It fails only on unreadable input or a line
// that is not a JSON object.
func (c *checker) run(r io.Reader) error {
	err := inputfile.Lines(r, fileTrace, "run log", maxLine, func(no int, b []byte) error {
		c.line = no
		return c.feed(bytes.TrimRight(b, "\r"))
	})
	if err != nil {
		return err
	}
	c.finish()
	return nil
}

func (c *checker) feed(b []byte) error {
	c.rep.Stats.Records++
	if len(bytes.TrimSpace(b)) == 0 {
		c.add(c.line, ckFormat, "empty line")
		return nil
	}
	raw, unknown, err := decodeLine(b)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		c.add(c.line, ckFormat, "unknown keys: %s", strings.Join(unknown, ", "))
	}
	r := c.validate(raw)
	if r == nil {
		return nil
	}
	c.rep.Stats.Events[r.ev]++
	c.apply(r)
	return nil
}

// validate checks one line's fields and resolves names; nil if the record
// cannot be applied.
func (c *checker) validate(l *rawLine) *rec {
	line := c.line
	if l.Ev == nil {
		c.add(line, ckFormat, "no event name (\"ev\")")
		return nil
	}
	ev := *l.Ev
	spec, ok := eventFields[ev]
	if !ok {
		c.add(line, ckFormat, "unknown event %q", ev)
		return nil
	}
	have := l.present()
	bad := false
	if miss := spec.required &^ have; miss != 0 {
		c.add(line, ckFormat, "%s: missing %s", ev, fieldList(miss))
		bad = true
	}
	if extra := have &^ (spec.required | spec.optional); extra != 0 {
		c.add(line, ckFormat, "%s: unexpected %s", ev, fieldList(extra))
		bad = true
	}
	if bad {
		return nil
	}
	r := &rec{line: line, ev: ev, raw: l, job: -1, op: -1, cell: -1, machine: -1, from: -1, fromMach: -1, ops: -1}
	r.t = *l.T
	if !finite(r.t) {
		c.add(line, ckFormat, "%s: time is not a finite number", ev)
		return nil
	}
	if ev == "breakdown" || ev == "repair" {
		if (l.Job == nil) != (l.Op == nil) {
			c.add(line, ckFormat, "%s: job and op must come together", ev)
			return nil
		}
	}
	if ev != "episode_start" {
		r.job, r.op = i64(l.Job), i64(l.Op)
		if r.job == -2 || (r.job >= 0 && c.hdr.jobs >= 0 && r.job >= c.hdr.jobs) {
			c.add(line, ckFormat, "%s: job %d out of range [0, %d)", ev, *l.Job, c.hdr.jobs)
			return nil
		}
		if r.op == -2 {
			c.add(line, ckFormat, "%s: op %d out of range", ev, *l.Op)
			return nil
		}
	}
	if l.Cell != nil {
		ci, ok := c.plant.cellIdx[*l.Cell]
		if !ok {
			c.add(line, ckFormat, "%s: unknown cell %q", ev, *l.Cell)
			return nil
		}
		r.cell = ci
	}
	if l.Machine != nil {
		if r.machine, ok = c.machineOf(r.cell, l.Machine); !ok {
			c.add(line, ckFormat, "%s: cell %s has no machine %d", ev, *l.Cell, *l.Machine)
			return nil
		}
	}
	if l.From != nil {
		if *l.From != "dock" {
			ci, ok := c.plant.cellIdx[*l.From]
			if !ok {
				c.add(line, ckFormat, "%s: unknown origin %q", ev, *l.From)
				return nil
			}
			r.from = ci
		}
		if l.FromMachine != nil {
			if r.fromMach, ok = c.machineOf(r.from, l.FromMachine); !ok {
				c.add(line, ckFormat, "%s: origin %s has no machine %d", ev, *l.From, *l.FromMachine)
				return nil
			}
		}
	}
	if l.Dur != nil {
		r.dur = *l.Dur
		if !finite(r.dur) || r.dur < 0 {
			c.add(line, ckFormat, "%s: bad duration %v", ev, r.dur)
			return nil
		}
	}
	if l.KW != nil {
		r.kw = *l.KW
		if !finite(r.kw) || r.kw < 0 || r.kw > 1e12 {
			c.add(line, ckFormat, "%s: bad power level %v", ev, r.kw)
			return nil
		}
	}
	if l.Product != nil {
		r.product = *l.Product
		if c.plant.products[r.product] == nil {
			c.add(line, ckFormat, "%s: unknown product %q", ev, r.product)
			return nil
		}
	}
	if l.Ops != nil {
		r.ops = i64(l.Ops)
		if r.ops < 0 {
			c.add(line, ckFormat, "%s: bad op count %d", ev, *l.Ops)
			return nil
		}
	}
	if l.Due != nil {
		r.due = *l.Due
		if !finite(r.due) {
			c.add(line, ckFormat, "%s: due is not a finite number", ev)
			return nil
		}
	}
	if l.Phase != nil {
		r.phase = *l.Phase
		if r.phase != "setup" && r.phase != "busy" {
			c.add(line, ckFormat, "%s: phase must be setup or busy (got %q)", ev, r.phase)
			return nil
		}
	}
	if l.Status != nil {
		r.status = *l.Status
		if !finalStatus[r.status] {
			c.add(line, ckFormat, "%s: unknown final status %q", ev, r.status)
			return nil
		}
	}
	return r
}

// machineOf resolves machine number p of cell ci (-1: none or unknown);
// ok is false when the cell has no such machine.
func (c *checker) machineOf(ci int, p *int64) (m int, ok bool) {
	m = i64(p)
	return m, ci >= 0 && m >= 0 && m < len(c.machines[ci])
}

var finalStatus = map[string]bool{"done": true, "deadlock": true, "no_progress": true, "time_limit": true,
	"decision_limit": true, "controller_failed": true, "aborted": true,
	"interrupted": true}

// apply advances the clock to the record's instant and applies it.
func (c *checker) apply(r *rec) {
	if c.ended {
		c.add(r.line, ckHeader, "%s after episode_end (line %d)", r.ev, c.endLine)
		return
	}
	if r.ev == "episode_start" {
		c.header(r)
		c.prev, c.lastLine = r, r.line
		return
	}
	if !c.have && !c.started {
		c.add(r.line, ckHeader, "the trace does not start with episode_start")
	}
	if r.t < 0 {
		c.add(r.line, ckTime, "negative time %v", r.t)
	}
	if c.started && r.t < c.t {
		c.add(r.line, ckTime, "time goes back from %v to %v", c.t, r.t)
	} else {
		if c.started && r.t > c.t {
			c.endInstant()
		}
		c.t = r.t
	}
	if !c.started {
		c.started = true
		c.t = math.Max(r.t, 0)
	}
	if c.have && r.t > c.hdr.horizon {
		c.add(r.line, ckTime, "time %v is past the horizon %v", r.t, c.hdr.horizon)
	}
	if r.ev == "mode_selected" { // a protocol record: the physical sequence checks do not see it
		c.modeSelected(r)
		c.lastLine = r.line
		return
	}
	if c.want != nil {
		w, desc, wl := c.want, c.wantDesc, c.wantLine
		c.want = nil
		if !w(r) {
			c.add(r.line, ckSequence, "line %d must be directly followed by %s (got %s)", wl, desc, describe(r))
		}
	}
	switch r.ev {
	case "power_change":
		c.powerChange(r)
	case "arrival":
		c.arrival(r)
	case "episode_end":
		c.endInstant()
		c.ended, c.endLine = true, r.line
		c.tot.status = r.status
	case "breakdown", "repair":
		c.breakdown(r)
		c.alarm(r.ev, r.line, r.t)
		if r.ev == "breakdown" {
			c.alarmQueue(r.cell)
		}
	default:
		c.jobEvent(r)
	}
	c.prev = r
	c.lastLine = r.line
}

// expect requires the next record to satisfy ok.
func (c *checker) expect(r *rec, desc string, ok func(n *rec) bool) {
	t := r.t
	c.want = func(n *rec) bool { return n.t == t && ok(n) }
	c.wantDesc, c.wantLine = fmt.Sprintf("%s at t=%v", desc, t), r.line
}

func (c *checker) header(r *rec) {
	if c.have || c.started {
		c.add(r.line, ckHeader, "episode_start at line %d: it must be the first line, once", r.line)
		return
	}
	l := r.raw
	c.have = true
	h := header{instance: *l.Instance, seed: *l.Seed, timeUnitS: *l.TimeUnitS, capKW: *l.PowerCapKW,
		transportKW: *l.TransportKW, carbon: *l.Carbon, wipCap: int(*l.WIPCap), horizon: *l.Horizon,
		jobs: i64(l.Jobs), totalOps: i64(l.TotalOps)}
	if r.t != 0 {
		c.add(r.line, ckHeader, "episode_start at t=%v, want 0", r.t)
	}
	in := c.plant.inst
	p := c.hdr // the instance's values
	if h.instance != p.instance {
		c.add(r.line, ckHeader, "instance %q, instance.json says %q", h.instance, p.instance)
	}
	cmp := func(name string, got, want float64) {
		if got != want && !(finite(got) && finite(want) && math.Abs(got-want) <= 1e-9*math.Max(math.Abs(got), math.Abs(want))) {
			c.add(r.line, ckHeader, "%s %v, instance.json says %v", name, got, want)
		}
	}
	cmp("time_unit_s", h.timeUnitS, p.timeUnitS)
	cmp("power_cap_kw", h.capKW, p.capKW)
	cmp("transport_kw", h.transportKW, p.transportKW)
	cmp("carbon_kg_per_kwh", h.carbon, p.carbon)
	cmp("horizon", h.horizon, p.horizon)
	if int64(h.wipCap) != *l.WIPCap || h.wipCap != in.WIPCap {
		c.add(r.line, ckHeader, "wip_cap %d, instance.json says %d", *l.WIPCap, in.WIPCap)
	}
	if h.jobs < 0 {
		c.add(r.line, ckHeader, "bad job count %d", *l.Jobs)
		h.jobs = max(p.jobs, 0)
	} else if p.jobs >= 0 && h.jobs != p.jobs {
		c.add(r.line, ckHeader, "jobs %d, instance.json says %d", h.jobs, p.jobs)
	}
	if h.totalOps < 0 {
		c.add(r.line, ckHeader, "bad total_ops %d", *l.TotalOps)
		h.totalOps = 0
	}
	for _, v := range []float64{h.timeUnitS, h.capKW, h.transportKW, h.carbon, h.horizon} {
		if !finite(v) {
			c.add(r.line, ckFormat, "episode_start: non-finite number")
			h.timeUnitS, h.capKW, h.transportKW, h.carbon, h.horizon = p.timeUnitS, p.capKW, p.transportKW, p.carbon, p.horizon
			break
		}
	}
	c.hdr = h
	c.transportW = watts(h.transportKW)
	c.rep.Stats.Jobs = h.jobs
	c.rep.Stats.Instance, c.rep.Stats.Seed = h.instance, h.seed
}

// power returns the plant power implied by the replayed state, in watts.
func (c *checker) power() int64 {
	var w int64
	for ci := range c.machines {
		pw := &c.plant.cells[ci].powerW
		for k := range c.machines[ci] {
			w += pw[c.machines[ci][k].state]
		}
	}
	for _, j := range c.jobList {
		if j.st == jTransport {
			w += c.transportW
		}
	}
	return w
}

func (c *checker) powerChange(r *rec) {
	first := c.powerRecs == 0
	c.powerRecs++
	if first {
		if r.t != 0 || c.prev == nil || c.prev.ev != "episode_start" {
			c.add(r.line, ckPowerRecord, "the first power_change must directly follow episode_start at t=0")
		}
	} else {
		// Power is traced once an instant, when it closes, and also
		// before a decision when it crossed the cap (the alarm is raised
		// then): a second record at one t follows a crossing.
		if r.t == c.powInstant && c.powInstantN > 0 && !c.powCrossed {
			c.add(r.line, ckPowerRecord, "second power_change at t=%v (line %d), which did not cross the cap", r.t, c.lastPowLine)
		}
		if r.kw == c.lastKW {
			c.add(r.line, ckPowerRecord, "power_change to the same level %v kW", r.kw)
		}
	}
	// A mismatch is reported when it starts, not again while it lasts.
	if want := c.power(); watts(r.kw) != want {
		if !c.powerBad {
			c.add(r.line, ckPowerLevel, "power_change says %v kW, machine states and transports give %v kW", r.kw, float64(want)/1000)
		}
		c.powerBad = true
	} else {
		c.powerBad = false
	}
	// Energy over the interval that just ended, then the overshoot entry.
	c.integrate(r.t)
	cap := c.hdr.capKW
	if r.kw > cap && (first || c.lastKW <= cap) {
		c.tot.overEntries++
	}
	c.powCrossed = !first && (r.kw > cap) != (c.lastKW > cap)
	switch {
	case r.kw > cap && (first || c.lastKW <= cap):
		c.alarm("power_alarm", r.line, r.t)
	case c.powCrossed:
		c.alarm("power_recovered", r.line, r.t)
	}
	c.lastKW, c.lastPowLine = r.kw, r.line
	if !first {
		if r.t != c.powInstant {
			c.powInstantN = 0
		}
		c.powInstantN++
	}
	c.powInstant = r.t
}

// integrate books the last traced level over [lastPowT, t], the formula
// of docs/trace-format.md.
func (c *checker) integrate(t float64) {
	if c.powerRecs > 0 {
		if dt := t - c.lastPowT; dt > 0 {
			kw := c.lastKW
			h := dt * c.hdr.timeUnitS / 3600
			c.tot.energy += kw * h
			if kw > c.hdr.capKW {
				c.tot.overKWh += (kw - c.hdr.capKW) * h
				c.tot.overT += dt
				c.countOverSeconds(c.lastPowT, t)
			}
		}
	}
	c.lastPowT = t
}

// countOverSeconds counts, once each, the seconds of plant time [k, k+1)
// that an over-cap interval [from, to) meets for a positive length: from
// k = floor(from) up to the second that holds the instant just before
// to, on the clock in seconds (onSeconds).
func (c *checker) countOverSeconds(from, to float64) {
	lo, hi := math.Floor(c.onSeconds(from)), math.Ceil(c.onSeconds(to))-1
	if lo <= c.lastOverSec {
		lo = c.lastOverSec + 1
	}
	if !(hi >= lo) { // none, or a time that is not a number
		return
	}
	c.tot.overSecs = int(min(float64(c.tot.overSecs)+(hi-lo+1), 1<<53)) // bounded: seconds of a huge time unit
	c.lastOverSec = hi
}

// onSeconds is trace time t in seconds (t × time_unit_s), snapped to
// the whole second within 4 ulps of it: the same trace written in
// another time unit counts the same seconds (docs/metrics.md).
func (c *checker) onSeconds(t float64) float64 {
	s := t * c.hdr.timeUnitS
	whole := math.Round(s)
	if math.Abs(s-whole) <= 4*0x1p-52*math.Max(1, math.Abs(whole)) {
		return whole
	}
	return s
}

// endInstant checks what must hold once every event and decision of the
// current instant is applied.
func (c *checker) endInstant() {
	line := c.lastLine
	if c.powerRecs > 0 {
		if w := c.power(); w != watts(c.lastKW) {
			if !c.powerBad {
				c.add(line, ckPowerLevel, "at the end of t=%v the plant draws %v kW, but the last power_change (line %d) says %v kW",
					c.t, float64(w)/1000, c.lastPowLine, c.lastKW)
			}
			c.powerBad = true
		} else {
			c.powerBad = false
		}
	}
	// A cell never keeps a machine idle while a job waits in its buffer.
	for ci := range c.machines {
		bad := false
		if len(c.waitQ[ci]) > 0 {
			for k := range c.machines[ci] {
				if c.machines[ci][k].state == mIdle {
					bad = true
					break
				}
			}
		}
		if bad && !c.dispatchBad[ci] {
			c.add(line, ckDispatch, "at the end of t=%v cell %s has an idle machine and %d jobs waiting in its buffer",
				c.t, c.plant.cells[ci].id, len(c.waitQ[ci]))
		}
		c.dispatchBad[ci] = bad
		bad = len(c.blockedQ[ci]) > 0 && c.occ[ci] < c.plant.cells[ci].buffer
		if bad && !c.blockingBad[ci] {
			c.add(line, ckBlocking, "at the end of t=%v job %d stays blocked on cell %s, which has a free slot (%d/%d)",
				c.t, c.blockedQ[ci][0], c.plant.cells[ci].id, c.occ[ci], c.plant.cells[ci].buffer)
		}
		c.blockingBad[ci] = bad
	}
}

// finish runs the end-of-trace checks and closes open intervals.
func (c *checker) finish() {
	if !c.have {
		c.add(0, ckHeader, "no episode_start")
	}
	if c.want != nil {
		c.add(c.wantLine, ckSequence, "line %d must be directly followed by %s (the trace ends)", c.wantLine, c.wantDesc)
		c.want = nil
	}
	end := c.t
	if !c.ended {
		c.add(c.lastLine, ckHeader, "no episode_end: the trace is truncated")
		c.endInstant()
	}
	c.integrate(end)
	c.tot.end = end
	// A truncated episode owes its jobs to the horizon (docs/metrics.md,
	// "The full obligation"): G_mk is the horizon, unfinished jobs are
	// overdue up to it.
	owed := end
	if c.ended && c.tot.status != "done" && c.hdr.horizon > end {
		owed = c.hdr.horizon
	}
	c.tot.owedUntil = owed
	for ci := range c.machines {
		for k := range c.machines[ci] {
			m := &c.machines[ci][k]
			c.setMachine(m, m.state, end)
			if m.awaitRes {
				c.add(0, ckSequence, "%s was repaired but never resumed", c.machineName(m))
			}
		}
	}
	for _, j := range c.jobList {
		switch j.st {
		case jBlocked:
			c.tot.blockingT += end - j.since
		case jTransport:
			c.tot.transport += end - j.since
		case jWaiting:
			c.tot.bufferWait += end - j.since
		}
		if j.st != jDone {
			if late := owed - j.due; late > 0 {
				c.tot.unresolvedOverdue += late
			}
		}
	}
	if c.have && c.nArrived == c.hdr.jobs && c.sumOps != c.hdr.totalOps {
		c.add(0, ckHeader, "the jobs' routes have %d ops in all, episode_start says total_ops %d", c.sumOps, c.hdr.totalOps)
	}
	if c.nArrived > c.hdr.jobs && c.hdr.jobs >= 0 {
		c.add(0, ckHeader, "%d jobs arrived, episode_start says %d", c.nArrived, c.hdr.jobs)
	}
	if c.ended {
		st := c.tot.status
		all := c.tot.completed == c.hdr.jobs
		switch {
		case st == "done" && !all:
			c.add(c.endLine, ckStatus, "status done with %d of %d jobs complete", c.tot.completed, c.hdr.jobs)
		case st != "done" && all:
			c.add(c.endLine, ckStatus, "status %s although every job is complete", st)
		case st == "time_limit" && end != c.hdr.horizon:
			c.add(c.endLine, ckStatus, "status time_limit at t=%v, the horizon is %v", end, c.hdr.horizon)
		case st == "deadlock":
			if why := c.progressPossible(); why != "" {
				c.add(c.endLine, ckStatus, "status deadlock, but %s", why)
			}
			for _, j := range c.jobList {
				if j.st == jBlocked && !j.offered {
					if room := c.rerouteRoom(j); room != "" {
						c.add(c.endLine, ckReroute, "status deadlock, but blocked job %d could go to %s and was never offered a re-route", j.id, room)
					}
				}
			}
		}
	}
	s := &c.rep.Stats
	s.Arrived, s.Released, s.Completed, s.OpsFinished = c.nArrived, c.tot.released, c.tot.completed, c.tot.finished
	s.Breakdowns, s.Status, s.End = c.tot.breakdowns, c.tot.status, end
}

// progressPossible says why the episode could still progress at its end
// ("" if nothing could): the engine declares a deadlock only when no job
// can move by itself and no decision is pending.
func (c *checker) progressPossible() string {
	if c.nArrived < c.hdr.jobs {
		return fmt.Sprintf("%d jobs have yet to arrive", c.hdr.jobs-c.nArrived)
	}
	backlog, waiting := 0, make([]int, len(c.machines))
	for _, j := range c.jobList {
		switch j.st {
		case jTransport:
			return fmt.Sprintf("job %d is still moving", j.id)
		case jReleased, jRouting, jFinished:
			return fmt.Sprintf("job %d awaits a routing decision", j.id)
		case jBacklog:
			backlog++
		case jWaiting:
			if j.at >= 0 {
				waiting[j.at]++
			}
		}
	}
	if wip := c.tot.released - c.tot.completed; backlog > 0 && wip < c.hdr.wipCap {
		return fmt.Sprintf("%d jobs could still be released (WIP %d < %d)", backlog, wip, c.hdr.wipCap)
	}
	for ci := range c.machines {
		for k := range c.machines[ci] {
			m := &c.machines[ci][k]
			switch {
			case m.state == mSetup || m.state == mBusy:
				return fmt.Sprintf("%s is working", c.machineName(m))
			case m.state == mDown && (m.resume == mSetup || m.resume == mBusy):
				return fmt.Sprintf("%s will resume its work after repair", c.machineName(m))
			case m.state == mDown && m.resume == mIdle && waiting[ci] > 0:
				return fmt.Sprintf("%s will be repaired and can take a waiting job", c.machineName(m))
			}
		}
	}
	return ""
}
