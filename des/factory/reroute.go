package factory

import "slices"

// Re-routing of blocked work items (the paper's blocked backlog, from which
// an item "resumes normal routing and dispatch"; docs/paradigms.md,
// "Re-routing and alarms").
//
// A job blocked on a full cell is offered to routing again when a capable
// cell can take it: another cell whose inbound buffer has a free slot, or
// the cell whose machine holds the job (it can continue there without a
// slot). The offer is a blocking_release of the job from its queue followed
// by a stage_release_ready; the paradigm's protocol then decides where the
// item goes, its old destination being one option (choosing it again keeps
// the item waiting there, in its place in the queue, with no new blocking
// incident: the physical state is unchanged).
//
// Offers are bounded: a job is offered once per blocked spell for the room
// that exists when it blocks, and again only when some capable cell gains
// room after its last offer (a change of the physical state), or when a
// machine of the cell it waits for breaks down. At most one job is offered
// at a time, and only when no other work item awaits routing, so that each
// offer sees the room the previous one left: the oldest eligible blocked
// job goes first.

// Reasons a blocked job is offered to routing again (the trigger of its
// protocol, payload context.trigger).
const (
	RerouteRoom      = "blocked_reroute"   // a capable cell has room
	RerouteBreakdown = "breakdown_reroute" // a machine of its destination broke down
)

// hasRoom reports whether cell c can admit a job now.
func (e *Engine) hasRoom(c int) bool {
	cs := &e.cells[c]
	return cs.occupancy < e.P.Cells[c].Buffer && len(cs.admitQ) == 0
}

// updateRoom notes the cells that gained room since the last call: their
// gain epoch makes the jobs offered before it eligible again.
func (e *Engine) updateRoom() {
	for c := range e.cells {
		r := e.hasRoom(c)
		if r && !e.room[c] {
			e.roomEpoch++
			e.gainAt[c] = e.roomEpoch
		}
		e.room[c] = r
	}
}

// rerouteEligible reports whether blocked job j may be offered now: some
// capable cell other than its destination can take it, and that cell's
// room is news to the job (gained after its last offer; for the cell
// holding it, only once per spell).
func (e *Engine) rerouteEligible(j int) bool {
	jb := &e.jobs[j]
	op := jb.route[jb.op].Type
	holder := -1
	if jb.machine >= 0 {
		holder = e.machines[jb.machine].cell
	}
	for c := range e.cells {
		if c == jb.dest || !e.P.Capable(c, op) {
			continue
		}
		if c == holder && jb.offered < 0 {
			return true
		}
		if e.room[c] && e.gainAt[c] > jb.offered {
			return true
		}
	}
	return false
}

// offerReroute moves the oldest eligible blocked job back to routing. It
// runs only when no work item awaits routing, and costs nothing while no
// job is blocked (the room gains it skips then precede every later
// block, which is all eligibility compares with).
func (e *Engine) offerReroute() {
	if e.nBlocked == 0 {
		return
	}
	e.updateRoom()
	best := -1
	for c := range e.cells {
		for _, j := range e.cells[c].admitQ {
			if (best < 0 || e.jobs[j].blockSeq < e.jobs[best].blockSeq) && e.rerouteEligible(j) {
				best = j
			}
		}
	}
	if best < 0 {
		return
	}
	j := best
	jb := &e.jobs[j]
	c := jb.dest
	cs := &e.cells[c]
	cs.admitQ = remove(cs.admitQ, j)
	e.touch(c)
	e.nBlocked--
	e.Acc.BlockingTime += e.now - jb.since
	e.Acc.Reroutes++
	e.emitAt(EvBlockingRelease, j, c, -1)
	jb.reroute, jb.rerouteFrom = RerouteRoom, c
	if jb.alarm {
		jb.reroute = RerouteBreakdown
	}
	jb.alarm = false
	jb.offered = e.roomEpoch
	jb.state, jb.dest = jRouting, -1
	e.routeQ = append(e.routeQ, j)
	e.emitAt(EvStageReleaseReady, j, -1, -1)
}

// alarmBlocked marks the jobs blocked on cell c as eligible for a new offer
// (a machine of c broke down: the roles that route may react).
func (e *Engine) alarmBlocked(c int) {
	for _, j := range e.cells[c].admitQ {
		e.jobs[j].offered, e.jobs[j].alarm = -1, true
	}
}

// Reroute reports whether job j's current routing is a re-route offer, why
// (RerouteRoom or RerouteBreakdown), and the cell whose queue it left.
func (e *Engine) Reroute(j int) (why string, from int, ok bool) {
	jb := &e.jobs[j]
	if jb.reroute == "" {
		return "", -1, false
	}
	return jb.reroute, jb.rerouteFrom, true
}

// Queued work at a broken cell (the paper's breakdown alarm reaching the
// roles that route): when a machine breaks down, the jobs waiting in its
// cell's inbound buffer get a queue alarm, and each is offered to routing
// once (queue_release, then stage_release_ready, trigger
// breakdown_reroute) while a machine of the cell is still down and another
// capable cell has room. The job keeps its slot during the offer; choosing
// its cell again puts it back in its place in the buffer (nothing changed
// physically), choosing another moves it there from this cell.

// alarmQueued gives the jobs waiting in cell c's buffer a queue alarm.
func (e *Engine) alarmQueued(c int) {
	for _, j := range e.cells[c].waiting {
		if jb := &e.jobs[j]; !jb.qalarm {
			jb.qalarm = true
			e.nQAlarm++
		}
	}
}

// clearQAlarm drops job jb's queue alarm, if it has one.
func (e *Engine) clearQAlarm(jb *job) {
	if jb.qalarm {
		jb.qalarm = false
		e.nQAlarm--
	}
}

// cellDown reports whether a machine of cell c is down.
func (e *Engine) cellDown(c int) bool {
	cell := &e.P.Cells[c]
	for m := 0; m < cell.Machines; m++ {
		if e.machines[cell.FirstMachine+m].state == Down {
			return true
		}
	}
	return false
}

// queueEligible reports whether job j, waiting at cell c, may be offered
// now: it has a queue alarm, a machine of c is down, and another capable
// cell has room.
func (e *Engine) queueEligible(j, c int) bool {
	jb := &e.jobs[j]
	if !jb.qalarm || !e.cellDown(c) {
		return false
	}
	op := jb.route[jb.op].Type
	for d := range e.cells {
		if d != c && e.P.Capable(d, op) && e.hasRoom(d) {
			return true
		}
	}
	return false
}

// offerQueued offers the first eligible queued job (cells in plant order,
// jobs in buffer order) to routing. Like offerReroute it runs only when no
// work item awaits routing, and costs nothing while no job has an alarm.
func (e *Engine) offerQueued() {
	if e.nQAlarm == 0 {
		return
	}
	for c := range e.cells {
		cs := &e.cells[c]
		for k, j := range cs.waiting {
			if !e.queueEligible(j, c) {
				continue
			}
			jb := &e.jobs[j]
			e.clearQAlarm(jb)
			cs.waiting = slices.Delete(cs.waiting, k, k+1)
			e.touch(c)
			e.Acc.BufferWaitTime += e.now - jb.since
			e.Acc.Reroutes++
			e.emitAt(EvQueueRelease, j, c, -1)
			jb.reroute, jb.rerouteFrom = RerouteBreakdown, c
			jb.fromQueue, jb.qpos = true, k
			jb.state, jb.dest, jb.since = jRouting, -1, e.now
			e.routeQ = append(e.routeQ, j)
			e.emitAt(EvStageReleaseReady, j, -1, -1)
			return
		}
	}
}

// returnToQueue ends a queue offer whose job was sent back to the cell it
// waits in: it takes its place in the buffer again.
func (e *Engine) returnToQueue(j int) {
	jb := &e.jobs[j]
	c := jb.at
	cs := &e.cells[c]
	cs.waiting = slices.Insert(cs.waiting, min(jb.qpos, len(cs.waiting)), j)
	jb.state, jb.since = jWaiting, e.now
	e.touch(c)
	e.markDirty(c)
}
