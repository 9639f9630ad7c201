package check

import (
	"fmt"
	"math"
	"slices"
)

func (c *checker) arrival(r *rec) {
	if _, dup := c.jobs[r.job]; dup {
		c.add(r.line, ckJobState, "job %d arrives twice", r.job)
		return
	}
	if r.job != c.arrived {
		c.add(r.line, ckJobState, "job %d arrives as arrival #%d: jobs arrive in id order", r.job, c.arrived)
		c.arrived = r.job // resynchronize: report the first gap only
	}
	pr := c.plant.products[r.product]
	if r.ops != len(pr.route) {
		c.add(r.line, ckJobState, "job %d of product %s has ops %d, the route has %d", r.job, pr.id, r.ops, len(pr.route))
	}
	c.dueDate(r, pr)
	j := &jobSt{id: r.job, st: jBacklog, product: pr, ops: r.ops, due: r.due, dest: -1, at: -1, slot: -1, relAhead: -1, relFrom: -1}
	c.jobs[r.job] = j
	c.jobList = append(c.jobList, j)
	c.arrived++
	c.nArrived++
	c.sumOps += r.ops
	if c.have && c.sumOps > c.hdr.totalOps {
		c.add(r.line, ckHeader, "arrived jobs have %d ops, more than total_ops %d", c.sumOps, c.hdr.totalOps)
	}
}

// dueDate checks an arrival's due date (and, from an order book, its
// product and time) against the instance: the order's due date if it
// gives one, else arrival + slack × work. Tardiness is measured against
// it, so a due date the instance does not give changes the score.
func (c *checker) dueDate(r *rec, pr *productInfo) {
	due := r.t + pr.slack*pr.work
	if k := c.arrived; c.plant.orders != nil && k >= 0 && k < len(c.plant.orders) {
		o := &c.plant.orders[k]
		if o.Product != pr.id || o.Arrival != r.t {
			c.add(r.line, ckDue, "job %d is %s arriving at t=%v; the order book's job %d is %s at t=%v", r.job, pr.id, r.t, k, o.Product, o.Arrival)
			return
		}
		if o.Due != 0 {
			due = o.Due
		}
	}
	if !feq(r.due, due) {
		c.add(r.line, ckDue, "job %d is due at %v; instance.json gives %v", r.job, r.due, due)
	}
}

// setMachine moves m to state s at time t, booking the time of the state
// it leaves.
func (c *checker) setMachine(m *machineSt, s mstate, t float64) {
	if d := t - m.since; d > 0 {
		c.tot.state[m.state] += d
	}
	m.state, m.since = s, t
}

func (c *checker) machineName(m *machineSt) string {
	return fmt.Sprintf("%s/%d", c.plant.cells[m.cell].id, m.idx)
}

// checkJobField compares a breakdown/repair record's job with the machine's.
func (c *checker) checkJobField(r *rec, m *machineSt) {
	switch {
	case m.job < 0 && r.job >= 0:
		c.add(r.line, ckOverlap, "%s of %s names job %d, but the machine holds no job", r.ev, c.machineName(m), r.job)
	case m.job >= 0 && r.job != m.job:
		c.add(r.line, ckOverlap, "%s of %s: the machine holds job %d (record says %d)", r.ev, c.machineName(m), m.job, r.job)
	case m.job >= 0:
		if j := c.jobs[m.job]; j != nil && r.op != j.fin {
			c.add(r.line, ckOpOrder, "%s of %s names op %d, job %d is at op %d", r.ev, c.machineName(m), r.op, m.job, j.fin)
		}
	}
}

func (c *checker) breakdown(r *rec) {
	m := &c.machines[r.cell][r.machine]
	c.checkJobField(r, m)
	if r.ev == "breakdown" {
		c.tot.breakdowns++
		if c.plant.cells[r.cell].mtbf <= 0 {
			c.add(r.line, ckBreakdown, "breakdown of %s, whose cell has no breakdowns (mtbf 0)", c.machineName(m))
		}
		if m.state == mDown {
			c.add(r.line, ckBreakdown, "breakdown of %s, already down since line %d", c.machineName(m), m.downLine)
			return
		}
		if m.state == mSetup || m.state == mBusy {
			m.work += r.t - m.runFrom
		}
		m.resume = m.state
		m.downLine = r.line
		c.setMachine(m, mDown, r.t)
		return
	}
	if m.state != mDown {
		c.add(r.line, ckBreakdown, "repair of %s, which is %s, not down", c.machineName(m), m.state)
		return
	}
	c.setMachine(m, m.resume, r.t)
	if m.resume == mSetup || m.resume == mBusy {
		m.runFrom = r.t
		m.awaitRes = true
		phase, job, mi := m.resume.String(), m.job, r.machine
		cell := r.cell
		c.expect(r, fmt.Sprintf("process_resume of job %d on %s, phase %s", job, c.machineName(m), phase), func(n *rec) bool {
			return n.ev == "process_resume" && n.job == job && n.cell == cell && n.machine == mi && n.phase == phase
		})
	}
}

// jobEvent handles every event about a job.
func (c *checker) jobEvent(r *rec) {
	j := c.jobs[r.job]
	if j == nil {
		c.add(r.line, ckJobState, "%s of job %d, which has not arrived", r.ev, r.job)
		return
	}
	var m *machineSt
	if r.machine >= 0 {
		m = &c.machines[r.cell][r.machine]
	}
	if r.op >= 0 && r.op >= j.ops {
		c.add(r.line, ckOpOrder, "%s of job %d op %d: its route has %d ops", r.ev, j.id, r.op, j.ops)
	}
	opCheck := func() {
		if r.op != j.fin {
			c.add(r.line, ckOpOrder, "%s of job %d op %d, but its current op is %d", r.ev, j.id, r.op, j.fin)
		}
	}
	state := func(want ...jstate) bool {
		for _, s := range want {
			if j.st == s {
				return true
			}
		}
		c.add(r.line, ckJobState, "%s of job %d, which is %s", r.ev, j.id, j.st)
		return false
	}
	destCheck := func() {
		if r.cell != j.dest {
			c.add(r.line, ckRouteCell, "%s of job %d at cell %s, but op %d was routed to %s", r.ev, j.id,
				c.plant.cells[r.cell].id, j.fin, c.cellName(j.dest))
		}
	}
	switch r.ev {
	case "release":
		state(jBacklog)
		opCheck()
		if wip := c.tot.released - c.tot.completed; wip >= c.hdr.wipCap {
			c.tot.wipViolations++
		}
		c.tot.released++
		j.st = jReleased
		c.addCommit(commit{line: r.line, t: r.t, kind: "release", job: j.id, op: 0})
		id := j.id
		c.expect(r, fmt.Sprintf("stage_release_ready of job %d op 0", id), func(n *rec) bool {
			return n.ev == "stage_release_ready" && n.job == id && n.op == 0
		})
	case "queue_release":
		c.queueRelease(r, j, state, opCheck)
	case "stage_release_ready":
		if j.st == jUnqueued {
			// A queue offer: the job left the buffer of a broken cell.
			opCheck()
			j.fromQueue, j.relFrom = true, j.at
			c.tot.reroutes++
		} else if j.st == jUnblocked {
			// A re-route offer: the job left its blocked queue for routing.
			opCheck()
			if c.rerouteRoom(j) == "" {
				c.add(r.line, ckReroute, "job %d offered to routing again while no capable cell other than %s has room",
					j.id, c.cellName(j.dest))
			}
			j.offered = true
			j.relFrom = j.dest
			c.tot.reroutes++
		} else if state(jReleased, jFinished) {
			opCheck()
			j.offered, j.relFrom = false, -1
		}
		j.st, j.modeLine = jRouting, 0
	case "route_assigned":
		state(jRouting)
		opCheck()
		if c.adaptive && j.modeLine == 0 {
			c.add(r.line, ckMode, "route_assigned of job %d op %d with no mode_selected since it awaited routing", j.id, r.op)
		}
		j.modeLine = 0
		c.capability(r, j)
		j.dest = r.cell
		j.st = jAssigned
		c.addCommit(commit{line: r.line, t: r.t, kind: "select_cell", job: j.id, op: r.op, cell: c.plant.cells[r.cell].id})
		if c.fromQueue(r, j) {
			break // back in its place in the buffer: nothing follows
		}
		id, op, cell := j.id, r.op, r.cell
		c.expect(r, fmt.Sprintf("admission, blocked or (continuation) process_start of job %d op %d at %s", id, op, c.plant.cells[cell].id),
			func(n *rec) bool {
				return (n.ev == "admission" || n.ev == "blocked" || n.ev == "process_start") && n.job == id && n.op == op && n.cell == cell
			})
	case "blocked":
		state(jAssigned)
		opCheck()
		destCheck()
		if c.occ[r.cell] < c.plant.cells[r.cell].buffer && len(c.blockedQ[r.cell]) == 0 {
			c.add(r.line, ckBlocking, "job %d blocked on cell %s, which has a free slot (%d/%d)", j.id,
				c.plant.cells[r.cell].id, c.occ[r.cell], c.plant.cells[r.cell].buffer)
		}
		c.leave(j, r.t)
		c.freeSlot(j)
		if j.relFrom == r.cell {
			// Kept on the cell whose queue it left for a re-route: its
			// place in the queue, no new incident.
			q := c.blockedQ[r.cell]
			k := 0
			for k < len(q) && c.jobs[q[k]].blockOrd < j.blockOrd {
				k++
			}
			c.blockedQ[r.cell] = slices.Insert(q, k, j.id)
		} else {
			c.tot.blocking++
			j.blockOrd = c.tot.blocking
			c.blockedQ[r.cell] = append(c.blockedQ[r.cell], j.id)
		}
		j.relFrom = -1
		j.st, j.since = jBlocked, r.t
	case "blocking_release":
		// Either a slot freed (admission follows, first come first
		// served, checked there) or the job is offered to routing again
		// (stage_release_ready follows).
		state(jBlocked)
		opCheck()
		destCheck()
		j.relAhead = -1
		if q := c.blockedQ[r.cell]; len(q) > 0 && q[0] != j.id {
			j.relAhead = q[0]
		}
		j.relFull = c.occ[r.cell] >= c.plant.cells[r.cell].buffer
		c.leave(j, r.t)
		j.st = jUnblocked
		id, op, cell := j.id, r.op, r.cell
		c.expect(r, fmt.Sprintf("admission of job %d op %d at %s, or its stage_release_ready (a re-route)", id, op, c.plant.cells[cell].id),
			func(n *rec) bool {
				return n.ev == "admission" && n.job == id && n.op == op && n.cell == cell ||
					n.ev == "stage_release_ready" && n.job == id && n.op == op
			})
	case "admission":
		if j.st == jBlocked {
			c.add(r.line, ckBlocking, "admission of job %d, which is blocked on %s without a blocking_release", j.id, c.cellName(j.dest))
		} else if j.st == jUnblocked {
			if j.relAhead >= 0 {
				c.add(r.line, ckBlocking, "job %d leaves the blocked queue of %s ahead of job %d (first come, first served)",
					j.id, c.plant.cells[r.cell].id, j.relAhead)
			}
			if j.relFull {
				c.add(r.line, ckBlocking, "job %d unblocked while cell %s is full (%d/%d)", j.id, c.plant.cells[r.cell].id,
					c.occ[r.cell], c.plant.cells[r.cell].buffer)
			}
		} else if state(jAssigned, jUnblocked) && j.st == jAssigned && len(c.blockedQ[r.cell]) > 0 {
			c.add(r.line, ckBlocking, "job %d admitted to %s ahead of %d blocked jobs", j.id, c.plant.cells[r.cell].id,
				len(c.blockedQ[r.cell]))
		}
		opCheck()
		destCheck()
		c.leave(j, r.t)
		c.freeSlot(j)
		c.occ[r.cell]++
		j.slot, j.offered, j.relFrom = r.cell, false, -1
		if c.occ[r.cell] > c.plant.cells[r.cell].buffer {
			c.add(r.line, ckBuffer, "cell %s holds %d admitted jobs, capacity %d", c.plant.cells[r.cell].id,
				c.occ[r.cell], c.plant.cells[r.cell].buffer)
		}
		j.st = jAdmitted
		id, op, cell := j.id, r.op, r.cell
		c.expect(r, fmt.Sprintf("transport_start of job %d op %d to %s", id, op, c.plant.cells[cell].id), func(n *rec) bool {
			return n.ev == "transport_start" && n.job == id && n.op == op && n.cell == cell
		})
	case "transport_start":
		c.transportStart(r, j, state, opCheck, destCheck)
	case "transport_complete":
		ok := state(jTransport)
		opCheck()
		destCheck()
		if ok {
			if want := j.since + j.dur; math.Abs(r.t-want) > tol(want) {
				c.add(r.line, ckTransport, "job %d arrives at t=%v, transport started at %v with dur %v", j.id, r.t, j.since, j.dur)
			}
			c.tot.transport += r.t - j.since
		}
		c.leave(j, r.t)
		j.st, j.at, j.since = jWaiting, r.cell, r.t
		c.waitQ[r.cell] = append(c.waitQ[r.cell], j.id)
	case "setup_start":
		c.startFromBuffer(r, j, m, true)
	case "process_start":
		switch {
		case j.st == jWorking && j.mach == m && m.state == mSetup:
			if !m.setupDone {
				c.add(r.line, ckSetup, "process_start of job %d on %s before its setup completed", j.id, c.machineName(m))
			}
			opCheck()
			c.startRun(r, j, m)
		case j.st == jAssigned && j.mach == m && j.mach != nil:
			// Same-cell continuation: the job stays on the machine that
			// holds it (route_assigned directly before, checked by expect).
			if m.state == mDown {
				c.add(r.line, ckDown, "process_start of job %d on %s, which is down (since line %d)", j.id, c.machineName(m), m.downLine)
			} else if m.state != mBlocked {
				c.add(r.line, ckOverlap, "continuation of job %d on %s, which is %s", j.id, c.machineName(m), m.state)
			}
			if c.prev == nil || c.prev.ev != "route_assigned" || c.prev.job != j.id {
				c.add(r.line, ckSequence, "continuation of job %d must directly follow its route_assigned", j.id)
			}
			opCheck()
			destCheck()
			j.st = jWorking
			c.startRun(r, j, m)
		default:
			c.startFromBuffer(r, j, m, false)
		}
	case "setup_complete":
		c.runningOn(r, j, m, mSetup)
		opCheck()
		if m.state == mSetup && m.job == j.id {
			work := m.work + (r.t - m.runFrom)
			fam := j.product.family
			if want := c.plant.setupTime(m.setupFrom, m.setupFromHas, fam); math.Abs(work-want) > tol(r.t) {
				c.add(r.line, ckSetup, "setup of job %d on %s took %v, instance.json says %v (from %q to %q)",
					j.id, c.machineName(m), work, want, m.setupFrom, fam)
			}
			m.family, m.hasFamily, m.setupDone = fam, true, true
		}
		id, op, cell, mi := j.id, r.op, r.cell, r.machine
		c.expect(r, fmt.Sprintf("process_start of job %d op %d on %s", id, op, c.machineName(m)), func(n *rec) bool {
			return n.ev == "process_start" && n.job == id && n.op == op && n.cell == cell && n.machine == mi
		})
	case "process_resume":
		if m.state == mDown {
			c.add(r.line, ckDown, "process_resume of job %d on %s, which is down (since line %d)", j.id, c.machineName(m), m.downLine)
		} else if !m.awaitRes {
			c.add(r.line, ckBreakdown, "process_resume on %s without a repair before it", c.machineName(m))
		} else if m.state.String() != r.phase {
			c.add(r.line, ckBreakdown, "process_resume on %s in phase %s, but it was interrupted in %s", c.machineName(m), r.phase, m.state)
		}
		if m.job != j.id {
			c.add(r.line, ckOverlap, "process_resume of job %d on %s, which holds job %d", j.id, c.machineName(m), m.job)
		}
		opCheck()
		m.awaitRes = false
	case "finish":
		c.runningOn(r, j, m, mBusy)
		opCheck()
		destCheck()
		if m.state == mBusy && m.job == j.id {
			work := m.work + (r.t - m.runFrom)
			if op, ok := j.product.opType(r.op); ok {
				nominal := op.Time * c.plant.cells[r.cell].caps[op.Op]
				h := c.plant.inst.ProcessingNoise
				lo, hi := nominal*(1-h), nominal*(1+h)
				if work < lo-tol(r.t) || work > hi+tol(r.t) {
					c.add(r.line, ckProcess, "job %d op %d (%s) ran %v on %s; nominal %v ± %v%%", j.id, r.op, op.Op, work,
						c.machineName(m), nominal, 100*h)
				}
			}
		}
		c.bind(j, m)
		if m.state != mDown {
			c.setMachine(m, mBlocked, r.t)
		}
		j.fin++
		c.tot.finished++
		c.leave(j, r.t)
		j.st = jFinished
		id := j.id
		if j.fin >= j.ops {
			c.expect(r, fmt.Sprintf("job_complete of job %d", id), func(n *rec) bool { return n.ev == "job_complete" && n.job == id })
		} else {
			op := j.fin
			c.expect(r, fmt.Sprintf("stage_release_ready of job %d op %d", id, op), func(n *rec) bool {
				return n.ev == "stage_release_ready" && n.job == id && n.op == op
			})
		}
	case "job_complete":
		if state(jFinished) && j.fin != j.ops {
			c.add(r.line, ckJobState, "job_complete of job %d after %d of %d ops", j.id, j.fin, j.ops)
		}
		if m.job != j.id || m.state != mBlocked {
			c.add(r.line, ckOverlap, "job_complete of job %d on %s, which is %s with job %d", j.id, c.machineName(m), m.state, m.job)
		}
		c.leave(j, r.t)
		c.unbind(j)
		if m.job >= 0 {
			if k := c.jobs[m.job]; k != nil && k.mach == m {
				k.mach = nil
			}
		}
		m.job = -1
		if m.state != mDown {
			c.setMachine(m, mIdle, r.t)
		}
		j.st = jDone
		c.tot.completed++
		if late := r.t - j.due; late > 0 {
			c.tot.tardiness += late
		}
	}
}

func (c *checker) cellName(ci int) string {
	if ci < 0 {
		return "no cell"
	}
	return c.plant.cells[ci].id
}

// capability checks that cell r.cell can do job j's operation r.op.
func (c *checker) capability(r *rec, j *jobSt) {
	op, ok := j.product.opType(r.op)
	if !ok {
		return
	}
	if f := c.plant.cells[r.cell].caps[op.Op]; !(f > 0) {
		c.add(r.line, ckCapability, "job %d op %d (%s) on cell %s, which cannot do %s", j.id, r.op, op.Op,
			c.plant.cells[r.cell].id, op.Op)
	}
}

func (c *checker) transportStart(r *rec, j *jobSt, state func(...jstate) bool, opCheck, destCheck func()) {
	state(jAdmitted)
	opCheck()
	destCheck()
	// Where the job is: the machine holding it, else its cell or the dock.
	from, fromMach := j.at, -1
	if j.mach != nil {
		from, fromMach = j.mach.cell, j.mach.idx
	}
	if r.from != from || r.fromMach != fromMach {
		c.add(r.line, ckRouteCell, "job %d leaves from %s, but it is at %s", j.id, c.place(r.from, r.fromMach), c.place(from, fromMach))
	}
	if want := c.plant.transportTime(r.from, r.cell); math.Abs(r.dur-want) > tol(want) {
		c.add(r.line, ckTransport, "transport %s -> %s takes %v, instance.json says %v", c.place(r.from, -1),
			c.plant.cells[r.cell].id, r.dur, want)
	}
	if m := j.mach; m != nil {
		switch {
		case m.job != j.id:
			c.add(r.line, ckOverlap, "job %d leaves %s, which holds job %d", j.id, c.machineName(m), m.job)
		case m.state == mBlocked:
			c.setMachine(m, mIdle, r.t)
		case m.state == mDown && m.resume == mBlocked:
			m.resume = mIdle
		default:
			c.add(r.line, ckOverlap, "job %d leaves %s, which is %s", j.id, c.machineName(m), m.state)
			if m.state != mDown {
				c.setMachine(m, mIdle, r.t)
			}
		}
		if m.job == j.id {
			m.job = -1
		}
		j.mach = nil
	}
	c.leave(j, r.t)
	j.st, j.since, j.dur, j.at = jTransport, r.t, r.dur, -2
}

func (c *checker) place(cell, mach int) string {
	switch {
	case cell == -1:
		return "the dock"
	case cell == -2:
		return "in transport"
	case mach >= 0:
		return fmt.Sprintf("%s/%d", c.plant.cells[cell].id, mach)
	}
	return c.plant.cells[cell].id
}

// runningOn checks that machine m is in state s with job j and not down.
func (c *checker) runningOn(r *rec, j *jobSt, m *machineSt, s mstate) {
	switch {
	case m.state == mDown:
		c.add(r.line, ckDown, "%s of job %d on %s, which is down (since line %d)", r.ev, j.id, c.machineName(m), m.downLine)
	case m.job != j.id:
		c.add(r.line, ckOverlap, "%s of job %d on %s, which holds job %d", r.ev, j.id, c.machineName(m), m.job)
	case m.state != s:
		c.add(r.line, ckJobState, "%s of job %d on %s, which is %s", r.ev, j.id, c.machineName(m), m.state)
	}
}

// startFromBuffer handles a setup_start or process_start of a job that
// leaves its cell's inbound buffer.
func (c *checker) startFromBuffer(r *rec, j *jobSt, m *machineSt, setup bool) {
	switch {
	case m.state == mDown:
		c.add(r.line, ckDown, "%s of job %d on %s, which is down (since line %d)", r.ev, j.id, c.machineName(m), m.downLine)
	case m.state != mIdle:
		c.add(r.line, ckOverlap, "%s of job %d on %s, which is %s with job %d", r.ev, j.id, c.machineName(m), m.state, m.job)
	}
	if j.st == jWaiting && j.at == r.cell && m.state == mIdle {
		c.dispatchRule(r, j, m)
	}
	switch j.st {
	case jWaiting:
		if j.at != r.cell {
			c.add(r.line, ckRouteCell, "%s of job %d at %s, but it waits in the buffer of %s", r.ev, j.id,
				c.plant.cells[r.cell].id, c.cellName(j.at))
		}
		c.tot.bufferWait += r.t - j.since
	case jTransport:
		c.add(r.line, ckNotInBuffer, "%s of job %d before its transport to %s completes", r.ev, j.id, c.cellName(j.dest))
	case jAssigned, jAdmitted, jBlocked, jUnblocked, jRouting, jReleased:
		c.add(r.line, ckNotInBuffer, "%s of job %d, which is %s, not in a buffer", r.ev, j.id, j.st)
	default:
		c.add(r.line, ckJobState, "%s of job %d, which is %s", r.ev, j.id, j.st)
	}
	if r.op != j.fin {
		c.add(r.line, ckOpOrder, "%s of job %d op %d, but its current op is %d", r.ev, j.id, r.op, j.fin)
	}
	if r.cell != j.dest {
		c.add(r.line, ckRouteCell, "%s of job %d at cell %s, but op %d was routed to %s", r.ev, j.id,
			c.plant.cells[r.cell].id, j.fin, c.cellName(j.dest))
		c.capability(r, j)
	}
	fam := j.product.family
	need := !m.hasFamily || m.family != fam
	if setup && !need {
		c.add(r.line, ckSetup, "setup of job %d on %s, already set up for family %q", j.id, c.machineName(m), fam)
	}
	if !setup && need {
		c.add(r.line, ckSetup, "process_start of job %d (family %q) on %s without setup (set up for %q)", j.id, fam,
			c.machineName(m), m.family)
	}
	c.leave(j, r.t)
	c.freeSlot(j)
	j.qalarm = false
	c.bind(j, m)
	j.st, j.at = jWorking, r.cell
	if setup {
		m.setupFrom, m.setupFromHas = m.family, m.hasFamily
		m.setupDone = false
		m.work, m.runFrom = 0, r.t
		if m.state != mDown {
			c.setMachine(m, mSetup, r.t)
		}
		return
	}
	c.startRun(r, j, m)
}

// startRun puts machine m to processing job j.
func (c *checker) startRun(r *rec, j *jobSt, m *machineSt) {
	c.bind(j, m)
	j.st = jWorking
	m.setupDone = false
	m.work, m.runFrom = 0, r.t
	if m.state != mDown {
		c.setMachine(m, mBusy, r.t)
	}
}

// bind makes machine m hold job j, detaching whatever either held before.
func (c *checker) bind(j *jobSt, m *machineSt) {
	if m.job >= 0 && m.job != j.id {
		if k := c.jobs[m.job]; k != nil && k.mach == m {
			k.mach = nil
		}
	}
	if j.mach != nil && j.mach != m && j.mach.job == j.id {
		j.mach.job = -1
	}
	m.job = j.id
	j.mach = m
}

func (c *checker) unbind(j *jobSt) {
	if j.mach != nil && j.mach.job == j.id {
		j.mach.job = -1
	}
	j.mach = nil
}

// leave undoes the bookkeeping of the job's current wait state before it
// moves on (only matters for records out of sequence).
func (c *checker) leave(j *jobSt, t float64) {
	switch j.st {
	case jBlocked:
		if j.dest >= 0 {
			c.blockedQ[j.dest] = without(c.blockedQ[j.dest], j.id)
		}
		c.tot.blockingT += t - j.since
	case jWaiting:
		if j.at >= 0 {
			c.waitQ[j.at] = without(c.waitQ[j.at], j.id)
		}
	}
}

// rerouteRoom names a capable cell, other than the blocked job's
// destination, that could take it now ("" if none): one whose buffer has a
// free slot and no blocked queue, or the cell whose machine holds the job.
func (c *checker) rerouteRoom(j *jobSt) string {
	op, ok := j.product.opType(j.fin)
	if !ok {
		return ""
	}
	for ci := range c.plant.cells {
		cell := &c.plant.cells[ci]
		if ci == j.dest || !(cell.caps[op.Op] > 0) {
			continue
		}
		if j.mach != nil && j.mach.cell == ci || c.occ[ci] < cell.buffer && len(c.blockedQ[ci]) == 0 {
			return cell.id
		}
	}
	return ""
}

func without(q []int, id int) []int {
	for i, x := range q {
		if x == id {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

// dispatchRule checks the cell's local rule for a job leaving its buffer:
// which waiting job starts (fifo: the first arrived; family: the first
// of the family the first idle machine is set up for, else the first
// arrived; spt depends on hidden noise and is not checked) and on which
// machine (the first idle one set up for the job's family, else the first
// idle one).
func (c *checker) dispatchRule(r *rec, j *jobSt, m *machineSt) {
	var firstIdle, firstFam *machineSt
	fam := j.product.family
	for k := range c.machines[r.cell] {
		mm := &c.machines[r.cell][k]
		if mm.state != mIdle {
			continue
		}
		if firstIdle == nil {
			firstIdle = mm
		}
		if firstFam == nil && mm.hasFamily && mm.family == fam {
			firstFam = mm
		}
	}
	want := firstFam
	if want == nil {
		want = firstIdle
	}
	if want != m {
		c.add(r.line, ckDispatchRule, "job %d starts on %s, the rule picks %s (first idle machine set up for family %q, else first idle)",
			j.id, c.machineName(m), c.machineName(want), fam)
	}
	q := c.waitQ[r.cell]
	if len(q) == 0 {
		return
	}
	pick := q[0]
	cell := &c.plant.cells[r.cell]
	switch cell.dispatch {
	case "spt":
		return
	case "family":
		if firstIdle.hasFamily {
			for _, id := range q {
				if k := c.jobs[id]; k != nil && k.product.family == firstIdle.family {
					pick = id
					break
				}
			}
		}
	}
	if pick != j.id {
		c.add(r.line, ckDispatchRule, "cell %s (%s) starts job %d, its rule picks job %d", cell.id, cell.dispatch, j.id, pick)
	}
}
