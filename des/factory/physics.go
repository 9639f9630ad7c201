package factory

import (
	"math"

	"github.com/coordbench/coordbench/des/sim"
)

// apply realizes one calendar event and settles its consequences
// (dispatch in every cell whose machines or buffer changed).
func (e *Engine) apply(ev sim.Event) {
	switch ev.Kind {
	case kArrival:
		e.onArrival(int(ev.A))
	case kTransportDone:
		e.onTransportDone(int(ev.A))
	case kSetupDone:
		e.onSetupDone(int(ev.A), ev.B)
	case kFinish:
		e.onFinish(int(ev.A), ev.B)
	case kBreakdown:
		e.onBreakdown(int(ev.A))
	case kRepair:
		e.onRepair(int(ev.A))
	}
	e.settle()
}

// emitAt records event ev about job j at cell c (machine index m, -1 if none).
func (e *Engine) emitAt(ev EventType, j, c, m int) {
	r := e.record(ev, j)
	r.Cell, r.Machine = int32(c), int32(m)
}

func (e *Engine) onArrival(j int) {
	e.Acc.Events++
	jb := &e.jobs[j]
	jb.state = jBacklog
	e.backlog = append(e.backlog, j)
	e.openRelease("arrival")
	r := e.record(EvArrival, j)
	r.Op = -1
	r.Due, r.Ops, r.Product = jb.Due, int32(len(jb.route)), int32(jb.product)
	e.nextArrival = j + 1
	if e.nextArrival < len(e.jobs) {
		e.schedule(e.jobs[e.nextArrival].Arrival, kArrival, int32(e.nextArrival), 0)
	}
}

func (e *Engine) onTransportDone(j int) {
	e.Acc.Events++
	jb := &e.jobs[j]
	e.Acc.TransportTime += e.now - jb.since
	e.inTransit--
	e.powerW -= e.P.transW
	jb.state, jb.at, jb.since = jWaiting, jb.dest, e.now
	cs := &e.cells[jb.dest]
	cs.incoming = remove(cs.incoming, j)
	cs.waiting = append(cs.waiting, j)
	e.touch(jb.dest)
	e.progress++
	e.emitAt(EvTransportComplete, j, jb.dest, -1)
	e.markDirty(jb.dest)
}

func (e *Engine) onSetupDone(mi int, epoch int32) {
	m := &e.machines[mi]
	if m.epoch != epoch || m.state != Setup {
		return // interrupted by a breakdown; the resumed setup has its own event
	}
	e.Acc.Events++
	jb := &e.jobs[m.job]
	m.family = jb.family
	e.emitAt(EvSetupComplete, m.job, m.cell, m.index)
	e.startProcessing(mi)
}

func (e *Engine) onFinish(mi int, epoch int32) {
	m := &e.machines[mi]
	if m.epoch != epoch || m.state != Busy {
		return
	}
	e.Acc.Events++
	j := m.job
	jb := &e.jobs[j]
	e.working--
	e.progress++
	e.emitAt(EvFinish, j, m.cell, m.index)
	jb.op++
	if jb.op == len(jb.route) {
		jb.state = jDone
		jb.machine = -1
		m.job = -1
		e.setState(mi, Idle)
		e.markDirty(m.cell)
		e.wip--
		e.completed++
		e.Acc.Completed++
		if late := e.now - jb.Due; late > 0 {
			e.Acc.Tardiness += late
		}
		e.openRelease("job_complete")
		r := e.record(EvJobComplete, j)
		r.Op = -1
		r.Cell, r.Machine = int32(m.cell), int32(m.index)
		return
	}
	// The finished job holds its machine until its next cell admits it.
	e.setState(mi, Blocked)
	jb.state, jb.dest = jRouting, -1
	e.routeQ = append(e.routeQ, j)
	e.emitAt(EvStageReleaseReady, j, -1, -1)
}

func (e *Engine) onBreakdown(mi int) {
	e.Acc.Events++
	e.Acc.Breakdowns++
	m := &e.machines[mi]
	e.emitAt(EvBreakdown, m.job, m.cell, m.index)
	m.resume = m.state
	m.remaining, m.nomLeft = 0, 0 // nothing left of an earlier interrupted phase
	if m.state == Setup || m.state == Busy {
		m.remaining = m.endAt - e.now
		m.nomLeft = max(0, m.nomEnd-e.now)
		m.epoch++ // the pending completion is void
		e.working--
	}
	e.setState(mi, Down)
	e.alarmBlocked(m.cell)
	e.alarmQueued(m.cell)
	e.openRelease(TriggerBreakdown)
	e.schedule(e.now+m.rp.Exp(e.P.Cells[m.cell].MTTR), kRepair, int32(mi), 0)
}

func (e *Engine) onRepair(mi int) {
	e.Acc.Events++
	m := &e.machines[mi]
	e.emitAt(EvRepair, m.job, m.cell, m.index)
	e.schedule(e.now+m.bd.Exp(e.P.Cells[m.cell].MTBF), kBreakdown, int32(mi), 0)
	e.openRelease(TriggerRepair)
	switch {
	case m.resume == Setup || m.resume == Busy:
		e.setState(mi, m.resume)
		e.working++
		m.endAt = e.now + m.remaining
		m.nomEnd = e.now + m.nomLeft
		kind := kFinish
		if m.resume == Setup {
			kind = kSetupDone
		}
		e.schedule(m.endAt, kind, int32(mi), m.epoch)
		r := e.record(EvProcessResume, m.job)
		r.Cell, r.Machine, r.Phase = int32(m.cell), int32(m.index), m.resume
	case m.job >= 0:
		e.setState(mi, Blocked)
	default:
		e.setState(mi, Idle)
		e.markDirty(m.cell)
	}
	if !e.cellDown(m.cell) { // no queue offer while the cell is up: its alarms need not be kept (nor scanned)
		for _, j := range e.cells[m.cell].waiting {
			e.clearQAlarm(&e.jobs[j])
		}
	}
}

// setState moves a machine to state s, keeping power and machine-time
// accounting.
func (e *Engine) setState(mi int, s MachineState) {
	m := &e.machines[mi]
	e.closeState(m, e.now)
	pw := &e.P.Cells[m.cell].PowerW
	e.powerW += pw[s] - pw[m.state]
	m.state = s
	e.touch(m.cell) // its phase's nominal end and job change with its state
}

// touch records a change of cell c's state: its buffer, its queues, or a
// machine's state, job or phase (see CellVersion), and so of its area
// (AreaVersion).
func (e *Engine) touch(c int) {
	e.cellVer[c]++
	e.areaVer[e.P.Cells[c].Area]++
}

// closeState books the time spent in the machine's current state up to t.
func (e *Engine) closeState(m *machine, t float64) {
	d := t - m.since
	switch m.state {
	case Setup:
		e.Acc.SetupTime += d
	case Busy:
		e.Acc.BusyTime += d
	case Blocked:
		e.Acc.MachineBlockedTime += d
	case Down:
		e.Acc.DownTime += d
	}
	m.since = t
}

func (e *Engine) markDirty(c int) {
	if !e.isDirty[c] {
		e.isDirty[c] = true
		e.dirty = append(e.dirty, c)
	}
}

// settle dispatches in every dirty cell until none is left. Dispatching
// frees buffer slots, which may admit blocked jobs, which frees machines in
// other cells, which makes those cells dirty in turn.
func (e *Engine) settle() {
	for i := 0; i < len(e.dirty); i++ {
		c := e.dirty[i]
		e.isDirty[c] = false
		e.dispatch(c)
	}
	e.dirty = e.dirty[:0]
}

// dispatch starts waiting jobs on idle machines of cell c by its local rule.
func (e *Engine) dispatch(c int) {
	cs := &e.cells[c]
	for len(cs.waiting) > 0 {
		k := e.pickWaiting(c)
		if k < 0 {
			return
		}
		j := cs.waiting[k]
		jb := &e.jobs[j]
		mi := e.pickMachine(c, jb.family)
		cs.waiting = append(cs.waiting[:k], cs.waiting[k+1:]...)
		cs.occupancy--
		e.touch(c)
		e.Acc.BufferWaitTime += e.now - jb.since
		e.clearQAlarm(jb)
		jb.state, jb.machine = jWorking, mi
		m := &e.machines[mi]
		m.job = j
		e.working++
		e.progress++
		if m.family != jb.family {
			e.setState(mi, Setup)
			m.endAt = e.now + e.P.SetupTime(m.family, jb.family)
			m.nomEnd = m.endAt // setups have no noise
			e.emitAt(EvSetupStart, j, c, m.index)
			e.schedule(m.endAt, kSetupDone, int32(mi), m.epoch)
		} else {
			e.startProcessing(mi)
		}
		e.admitBlocked(c)
	}
}

// pickWaiting returns the index in the buffer of the job the cell's rule
// starts next, or -1 if no machine is idle.
func (e *Engine) pickWaiting(c int) int {
	cell := &e.P.Cells[c]
	idleFam := -2
	anyIdle := false
	for m := 0; m < cell.Machines; m++ {
		mc := &e.machines[cell.FirstMachine+m]
		if mc.state == Idle {
			if !anyIdle {
				idleFam = mc.family
			}
			anyIdle = true
		}
	}
	if !anyIdle {
		return -1
	}
	w := e.cells[c].waiting
	switch cell.Dispatch {
	case "spt":
		best, bestT := 0, 0.0
		for k, j := range w {
			jb := &e.jobs[j]
			op := jb.route[jb.op]
			t := op.Base * cell.Factor[op.Type] * jb.Noise[jb.op]
			if k == 0 || t < bestT {
				best, bestT = k, t
			}
		}
		return best
	case "family":
		for k, j := range w {
			if e.jobs[j].family == idleFam {
				return k
			}
		}
	}
	return 0
}

// pickMachine picks an idle machine of cell c, preferring one already set
// up for the family, then the lowest index.
func (e *Engine) pickMachine(c, family int) int {
	cell := &e.P.Cells[c]
	first := -1
	for m := 0; m < cell.Machines; m++ {
		mi := cell.FirstMachine + m
		mc := &e.machines[mi]
		if mc.state != Idle {
			continue
		}
		if mc.family == family {
			return mi
		}
		if first < 0 {
			first = mi
		}
	}
	return first
}

func (e *Engine) startProcessing(mi int) {
	m := &e.machines[mi]
	jb := &e.jobs[m.job]
	op := jb.route[jb.op]
	nominal := e.P.ProcTime(m.cell, op.Type, op.Base)
	e.setState(mi, Busy)
	m.endAt = e.now + nominal*jb.Noise[jb.op]
	m.nomEnd = e.now + nominal
	e.emitAt(EvProcessStart, m.job, m.cell, m.index)
	e.schedule(m.endAt, kFinish, int32(mi), m.epoch)
}

// admitBlocked admits blocked jobs into cell c while it has free slots.
func (e *Engine) admitBlocked(c int) {
	cs := &e.cells[c]
	for len(cs.admitQ) > 0 && cs.occupancy < e.P.Cells[c].Buffer {
		j := cs.admitQ[0]
		cs.admitQ = cs.admitQ[:copy(cs.admitQ, cs.admitQ[1:])]
		e.touch(c)
		e.nBlocked--
		jb := &e.jobs[j]
		e.Acc.BlockingTime += e.now - jb.since
		e.emitAt(EvBlockingRelease, j, c, -1)
		e.admit(j)
	}
}

// admit reserves a slot in the job's destination and starts its transport,
// freeing the machine that held it.
func (e *Engine) admit(j int) {
	jb := &e.jobs[j]
	c := jb.dest
	e.cells[c].occupancy++
	e.cells[c].incoming = append(e.cells[c].incoming, j)
	e.touch(c)
	e.progress++
	e.emitAt(EvAdmission, j, c, -1)
	from, fromMachine := jb.at, -1
	if mi := jb.machine; mi >= 0 {
		m := &e.machines[mi]
		fromMachine = m.index
		m.job = -1
		jb.machine = -1
		if m.state == Down {
			m.resume = Idle
			e.touch(m.cell)
		} else {
			e.setState(mi, Idle)
			e.markDirty(m.cell)
		}
	}
	d := e.P.TransportTime(from, c)
	jb.state, jb.since = jTransport, e.now
	e.inTransit++
	e.powerW += e.P.transW
	r := e.record(EvTransportStart, j)
	r.From, r.Machine, r.Cell, r.Dur = int32(from), int32(fromMachine), int32(c), d
	e.schedule(e.now+d, kTransportDone, int32(j), 0)
}

// flushPower traces the plant power if it changed since the last record,
// integrating energy and overshoot over the interval that just ended.
func (e *Engine) flushPower() {
	if e.powerW == e.lastPowW {
		return
	}
	e.integratePower(e.now)
	over := e.powerW > e.P.capWatts
	if over && !e.overshoot {
		e.Acc.PowerOvershootEntries++
		e.openRelease(TriggerPowerAlarm) // the plant, which holds the release lever, reacts
	}
	if !over && e.overshoot {
		e.openRelease(TriggerPowerRecovered)
	}
	e.overshoot = over
	e.lastPowW = e.powerW
	r := e.record(EvPowerChange, -1)
	r.KW = float64(e.powerW) / 1000
}

// integratePower books the traced power level over [lastPowT, t]. The
// formula is the one docs/metrics.md gives, so that a checker reading the
// trace computes bit-identical totals.
func (e *Engine) integratePower(t float64) {
	if e.lastPowW >= 0 {
		if dt := t - e.lastPowT; dt > 0 {
			kw := float64(e.lastPowW) / 1000
			h := dt * e.P.Inst.TimeUnitS / 3600
			e.Acc.EnergyKWh += kw * h
			if e.lastPowW > e.P.capWatts {
				e.Acc.OvershootKWh += (kw - e.P.CapKW()) * h
				e.Acc.OvershootTime += dt
				e.bookOverUnits(e.lastPowT, t)
			}
		}
	}
	e.lastPowT = t
}

// bookOverUnits adds to PowerOvershootUnits the time units [k, k+1) that
// the over-cap interval [a, b) (b > a) meets and that no earlier interval
// met. Intervals come in time order, so remembering the last unit counted
// is enough.
func (e *Engine) bookOverUnits(a, b float64) {
	first, last := int64(math.Floor(a)), int64(math.Ceil(b))-1
	first = max(first, e.overUnit+1)
	if last >= first {
		e.Acc.PowerOvershootUnits += int(last - first + 1)
		e.overUnit = last
	}
}
