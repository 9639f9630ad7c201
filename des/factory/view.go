package factory

// Read-only views of engine state, for the interpreter that builds agents'
// local observations. They expose nominal figures only: hidden exogenous
// draws (processing noise, future breakdowns) never leak.

// JobInfo describes a job as the plant sees it.
type JobInfo struct {
	ID      int
	Product string
	Family  string
	Op      int    // current operation index (== Ops when complete)
	Ops     int    // route length
	OpType  string // type of the current operation ("" when complete)
	Base    float64
	Arrival float64
	Due     float64
	Weight  float64
	At      int     // cell holding the job; -1 at the dock or not released
	Work    float64 // base work left, current operation included
}

// Job describes job j.
func (e *Engine) Job(j int) JobInfo {
	jb := &e.jobs[j]
	pt := &e.P.Products[jb.product]
	info := JobInfo{ID: j, Product: pt.ID, Family: e.P.Families[jb.family], Op: jb.op, Ops: len(jb.route),
		Arrival: jb.Arrival, Due: jb.Due, Weight: jb.Weight, At: jb.at}
	if jb.op < len(jb.route) {
		op := jb.route[jb.op]
		info.OpType, info.Base = e.P.Ops[op.Type], op.Base
		for _, r := range jb.route[jb.op:] {
			info.Work += r.Base
		}
	}
	return info
}

// CurrentOp returns the operation type index and base time of job j's
// current operation (ok false when the job is complete).
func (e *Engine) CurrentOp(j int) (opType int, base float64, ok bool) {
	jb := &e.jobs[j]
	if jb.op >= len(jb.route) {
		return 0, 0, false
	}
	op := jb.route[jb.op]
	return op.Type, op.Base, true
}

// JobLocation is the cell holding job j (-1: dock or not released).
func (e *Engine) JobLocation(j int) int { return e.jobs[j].at }

// CellInfo summarizes one cell's local state.
type CellInfo struct {
	Occupancy  int // admitted and not started (moving in or waiting)
	Waiting    int // in the buffer
	AdmitQueue int // blocked jobs waiting for a slot
	FreeSlots  int
	Idle       int
	Setup      int
	Busy       int
	Blocked    int
	Down       int
	// Backlog is the nominal work (time units) admitted but not started,
	// plus what is left of the setups and operations on its machines
	// (machineBacklog).
	Backlog float64
	// PowerW is the cell's current draw in watts.
	PowerW int64
}

// CellVersion is cell c's version: it changes whenever the state that
// Cell(c) summarizes changes (a machine's state, job or phase, the
// buffer, the admission and transport queues). Only the clock moves
// Cell(c) otherwise, and only while a machine of c is in setup or busy
// (its Backlog counts down): a reader may keep a summary for as long as
// the version and, for a cell with Setup+Busy > 0, the time are the same.
func (e *Engine) CellVersion(c int) uint64 { return e.cellVer[c] }

// AreaVersion is area a's version: it changes whenever the version of
// one of its cells (CellVersion) changes. While it is the same, every
// cell of the area has kept its version.
func (e *Engine) AreaVersion(a int) uint64 { return e.areaVer[a] }

// Cell summarizes cell c.
func (e *Engine) Cell(c int) CellInfo {
	var info CellInfo
	e.CellInto(c, &info)
	return info
}

// CellInto writes cell c's summary (Cell) into *dst, sparing the copy of
// a returned value to callers that keep summaries in place.
func (e *Engine) CellInto(c int, dst *CellInfo) {
	cell := &e.P.Cells[c]
	cs := &e.cells[c]
	info := dst
	*info = CellInfo{Occupancy: cs.occupancy, Waiting: len(cs.waiting), AdmitQueue: len(cs.admitQ),
		FreeSlots: cell.Buffer - cs.occupancy}
	var w int64
	for m := 0; m < cell.Machines; m++ {
		mc := &e.machines[cell.FirstMachine+m]
		w += cell.PowerW[mc.state]
		switch mc.state {
		case Idle:
			info.Idle++
		case Setup:
			info.Setup++
		case Busy:
			info.Busy++
		case Blocked:
			info.Blocked++
		case Down:
			info.Down++
		}
		info.Backlog += e.machineBacklog(mc)
	}
	for _, j := range cs.waiting {
		info.Backlog += e.nominal(j, c)
	}
	for _, j := range cs.admitQ {
		info.Backlog += e.nominal(j, c)
	}
	for _, j := range cs.incoming {
		info.Backlog += e.nominal(j, c)
	}
	info.PowerW = w
}

// BacklogTerms is a cell's backlog (CellInfo.Backlog) as the sum CellInto
// makes, term by term in its order, with the terms of machines in setup
// or busy kept as their phase's nominal end: while the cell's version
// (CellVersion) is the same, only the clock moves the backlog, and At(now)
// is what CellInto would give at time now, bit for bit. Terms that are
// zero (idle and blocked machines) are left out: adding +0 to a sum of
// non-negative terms changes nothing. A cell with more terms than the
// array holds has none (ok false): its reader takes CellInto again.
type BacklogTerms struct {
	n    int
	ok   bool
	kind [maxBacklogTerms]uint8   // termConst, termBusy or termSetup
	end  [maxBacklogTerms]float64 // the phase's nominal end (busy, setup)
	v    [maxBacklogTerms]float64 // the constant term, or what a setup adds (its operation)
}

const maxBacklogTerms = 4

const (
	termConst uint8 = iota
	termBusy
	termSetup
)

// OK reports whether t holds the cell's terms (see BacklogTerms).
func (t *BacklogTerms) OK() bool { return t.ok }

// At is the cell's backlog at time now, as CellInto sums it.
func (t *BacklogTerms) At(now float64) float64 {
	var b float64
	for i := 0; i < t.n && i < maxBacklogTerms; i++ {
		switch t.kind[i] {
		case termBusy:
			b += max(0, t.end[i]-now)
		case termSetup:
			b += max(0, t.end[i]-now) + t.v[i]
		default:
			b += t.v[i]
		}
	}
	return b
}

func (t *BacklogTerms) add(kind uint8, end, v float64) {
	if t.n == maxBacklogTerms {
		t.ok = false
		return
	}
	t.kind[t.n], t.end[t.n], t.v[t.n] = kind, end, v
	t.n++
}

// CellIntoTerms writes cell c's summary into *dst, as CellInto does, and
// its backlog's terms into *t (see BacklogTerms), in one walk of the
// cell's machines and queues.
func (e *Engine) CellIntoTerms(c int, dst *CellInfo, t *BacklogTerms) {
	cell := &e.P.Cells[c]
	cs := &e.cells[c]
	info := dst
	*info = CellInfo{Occupancy: cs.occupancy, Waiting: len(cs.waiting), AdmitQueue: len(cs.admitQ),
		FreeSlots: cell.Buffer - cs.occupancy}
	t.n, t.ok = 0, true
	var w int64
	for m := 0; m < cell.Machines; m++ {
		mc := &e.machines[cell.FirstMachine+m]
		w += cell.PowerW[mc.state]
		switch mc.state { // machineBacklog's cases; idle and blocked add 0
		case Idle:
			info.Idle++
		case Setup:
			info.Setup++
			nom := e.nominal(mc.job, mc.cell)
			info.Backlog += max(0, mc.nomEnd-e.now) + nom
			t.add(termSetup, mc.nomEnd, nom)
		case Busy:
			info.Busy++
			info.Backlog += max(0, mc.nomEnd-e.now)
			t.add(termBusy, mc.nomEnd, 0)
		case Blocked:
			info.Blocked++
		case Down:
			info.Down++
			v := e.setupBacklog(mc)
			info.Backlog += v
			if v != 0 {
				t.add(termConst, 0, v)
			}
		}
	}
	// The queues one by one, in CellInto's order, and only those with
	// jobs (most are empty): a loop over an array of the three cost more
	// than their walk.
	if len(cs.waiting) > 0 {
		e.queueTerms(cs.waiting, c, info, t)
	}
	if len(cs.admitQ) > 0 {
		e.queueTerms(cs.admitQ, c, info, t)
	}
	if len(cs.incoming) > 0 {
		e.queueTerms(cs.incoming, c, info, t)
	}
	info.PowerW = w
}

// queueTerms adds the nominal work of queue q's jobs at cell c to info's
// backlog and to its terms t (CellIntoTerms).
func (e *Engine) queueTerms(q []int, c int, info *CellInfo, t *BacklogTerms) {
	for _, j := range q {
		v := e.nominal(j, c)
		info.Backlog += v
		if v != 0 {
			t.add(termConst, 0, v)
		}
	}
}

// machineBacklog is the nominal work left on machine m: what remains of a
// running or interrupted setup plus the operation that follows it, or what
// remains of a running or interrupted operation. What remains is the
// phase's nominal duration minus the time it has run (downtime excluded),
// never below 0; the realized times, noise included, stay hidden. An idle
// or blocked machine, down or not, has none.
//
// The idle, blocked and busy machines (most of a cell's, most of the
// time) are answered here, small enough to inline into CellInto; the
// others go to setupBacklog.
func (e *Engine) machineBacklog(m *machine) float64 {
	switch m.state {
	case Idle, Blocked:
		return 0
	case Busy:
		return max(0, m.nomEnd-e.now)
	}
	return e.setupBacklog(m)
}

// setupBacklog is machineBacklog for a machine in setup or down.
func (e *Engine) setupBacklog(m *machine) float64 {
	phase, left := m.state, max(0, m.nomEnd-e.now)
	if phase == Down {
		phase, left = m.resume, m.nomLeft
	}
	switch phase {
	case Setup:
		return left + e.nominal(m.job, m.cell)
	case Busy:
		return left
	}
	return 0
}

// nominal is the nominal processing time of job j's current operation on c.
func (e *Engine) nominal(j, c int) float64 {
	jb := &e.jobs[j]
	op := jb.route[jb.op]
	return e.P.ProcTime(c, op.Type, op.Base)
}

// PowerKW is the plant's current power draw.
func (e *Engine) PowerKW() float64 { return float64(e.powerW) / 1000 }

// WIP counts released, unfinished jobs.
func (e *Engine) WIP() int { return e.wip }

// Completed counts finished jobs.
func (e *Engine) Completed() int { return e.completed }

// NumJobs is the number of jobs of the episode.
func (e *Engine) NumJobs() int { return len(e.jobs) }

// NumOps is the number of operations of all the episode's jobs.
func (e *Engine) NumOps() int {
	n := 0
	for i := range e.jobs {
		n += len(e.jobs[i].route)
	}
	return n
}

// Arrived counts jobs that have arrived so far.
func (e *Engine) Arrived() int { return e.nextArrival }

// InTransit counts jobs being moved.
func (e *Engine) InTransit() int { return e.inTransit }

// Debt is the unresolved work at the current time: unfinished jobs,
// operations not yet finished, and overdue debt (time past due summed over
// unfinished jobs).
type Debt struct {
	Jobs    int
	Ops     int
	Overdue float64
}

// Debt measures the unresolved work now.
func (e *Engine) Debt() Debt {
	var d Debt
	for i := range e.jobs {
		jb := &e.jobs[i]
		if jb.state == jDone {
			continue
		}
		d.Jobs++
		d.Ops += len(jb.route) - jb.op
		if late := e.now - jb.Due; late > 0 {
			d.Overdue += late
		}
	}
	return d
}

// Machine reports machine m of cell c: its state and the family it is set
// up for (-1 if none).
func (e *Engine) Machine(c, m int) (MachineState, int) {
	mc := &e.machines[e.P.Cells[c].FirstMachine+m]
	return mc.state, mc.family
}
