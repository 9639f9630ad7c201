package check

import "fmt"

// Queue offers (docs/paradigms.md, "Re-routing and alarms"): a breakdown
// gives the jobs waiting in its cell's buffer a queue alarm; such a job may
// be offered to routing once (queue_release, then stage_release_ready)
// while a machine of its cell is down and another capable cell has room.
// It keeps its slot during the offer: routed back to its cell, it takes
// its place in the buffer again and no record follows its route_assigned;
// routed elsewhere, it gives the slot up when it is admitted or blocked.

// alarmQueue gives the jobs in cell ci's buffer a queue alarm.
func (c *checker) alarmQueue(ci int) {
	for _, id := range c.waitQ[ci] {
		if j := c.jobs[id]; j != nil {
			j.qalarm = true
		}
	}
}

// cellDown reports whether a machine of cell ci is down.
func (c *checker) cellDown(ci int) bool {
	for k := range c.machines[ci] {
		if c.machines[ci][k].state == mDown {
			return true
		}
	}
	return false
}

// roomBut names a capable cell other than ci, for job j's current
// operation, with a free slot and no blocked queue ("" if none).
func (c *checker) roomBut(j *jobSt, ci int) string {
	op, ok := j.product.opType(j.fin)
	if !ok {
		return ""
	}
	for d := range c.plant.cells {
		cell := &c.plant.cells[d]
		if d != ci && cell.caps[op.Op] > 0 && c.occ[d] < cell.buffer && len(c.blockedQ[d]) == 0 {
			return cell.id
		}
	}
	return ""
}

// queueRelease handles a queue_release: job j leaves the buffer of cell
// r.cell to be offered to routing.
func (c *checker) queueRelease(r *rec, j *jobSt, state func(...jstate) bool, opCheck func()) {
	ok := state(jWaiting)
	opCheck()
	if ok && j.at != r.cell {
		c.add(r.line, ckRouteCell, "queue_release of job %d at %s, but it waits in the buffer of %s", j.id,
			c.plant.cells[r.cell].id, c.cellName(j.at))
	}
	switch {
	case !j.qalarm:
		c.add(r.line, ckReroute, "job %d offered to routing from the queue of %s with no breakdown alarm since it queued (or since its last offer)",
			j.id, c.plant.cells[r.cell].id)
	case !c.cellDown(r.cell):
		c.add(r.line, ckReroute, "job %d offered to routing from the queue of %s, none of whose machines is down", j.id, c.plant.cells[r.cell].id)
	case c.roomBut(j, r.cell) == "":
		c.add(r.line, ckReroute, "job %d offered to routing from the queue of %s while no other capable cell has room", j.id, c.plant.cells[r.cell].id)
	}
	j.qalarm = false
	if ok {
		c.tot.bufferWait += r.t - j.since
	}
	j.qpos = 0
	for k, id := range c.waitQ[r.cell] {
		if id == j.id {
			j.qpos = k
		}
	}
	c.leave(j, r.t)
	j.st, j.since = jUnqueued, r.t
	id, op := j.id, r.op
	c.expect(r, fmt.Sprintf("stage_release_ready of job %d op %d (its queue offer)", id, op), func(n *rec) bool {
		return n.ev == "stage_release_ready" && n.job == id && n.op == op
	})
}

// fromQueue ends a queue offer at its route_assigned: routed back to the
// cell it waits in, the job is in its buffer again, in its place (true:
// nothing follows); routed elsewhere, it goes on as any routed job.
func (c *checker) fromQueue(r *rec, j *jobSt) bool {
	if !j.fromQueue {
		return false
	}
	j.fromQueue = false
	if r.cell != j.relFrom {
		return false
	}
	j.relFrom = -1
	q := c.waitQ[r.cell]
	c.waitQ[r.cell] = append(q[:min(j.qpos, len(q))], append([]int{j.id}, q[min(j.qpos, len(q)):]...)...)
	j.st, j.since = jWaiting, r.t
	return true
}

// freeSlot gives up the inbound slot job j holds, if any (a job leaving a
// buffer for a machine, or for another cell after a queue offer).
func (c *checker) freeSlot(j *jobSt) {
	if j.slot >= 0 {
		c.occ[j.slot]--
		j.slot = -1
	}
}
