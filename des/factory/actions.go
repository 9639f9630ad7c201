package factory

import (
	"fmt"
	"slices"
)

// ReleasePending reports whether a release opportunity is open: the order
// backlog is not empty, WIP is under its cap, and something changed since
// the plant last deferred.
func (e *Engine) ReleasePending() bool {
	return e.status == Running && e.releaseOpen && len(e.backlog) > 0 && e.wip < e.P.Inst.WIPCap
}

// CanDefer reports whether deferring a release is legal: only while some
// future event is pending, so that deferring never freezes the clock.
func (e *Engine) CanDefer() bool {
	if !e.ReleasePending() {
		return false
	}
	_, ok := e.peek()
	return ok
}

// Backlog lists arrived, unreleased jobs in arrival order. The slice is the
// engine's own: do not modify it, and do not keep it across commits.
func (e *Engine) Backlog() []int { return e.backlog }

// RouteQueue lists jobs whose current operation awaits a cell, oldest first.
// Same ownership rules as Backlog.
func (e *Engine) RouteQueue() []int { return e.routeQ }

// Release takes job j from the backlog into work in progress; its first
// operation then awaits routing.
func (e *Engine) Release(j int) error {
	if !e.ReleasePending() {
		return fmt.Errorf("release of job %d: no release opportunity is open", j)
	}
	k := indexOf(e.backlog, j)
	if k < 0 {
		return fmt.Errorf("release of job %d: not in the order backlog", j)
	}
	e.backlog = remove(e.backlog, j)
	e.alarms = 0 // answered
	e.wip++
	e.progress++
	jb := &e.jobs[j]
	jb.state, jb.op, jb.dest = jRouting, 0, -1
	e.emitAt(EvRelease, j, -1, -1)
	e.routeQ = append(e.routeQ, j)
	e.emitAt(EvStageReleaseReady, j, -1, -1)
	return nil
}

// Defer closes the release opportunity until time moves on.
func (e *Engine) Defer() error {
	if !e.CanDefer() {
		return fmt.Errorf("defer: not legal now (no open release opportunity or no pending event)")
	}
	e.releaseOpen = false
	e.alarms = 0 // answered
	e.deferred = true
	return nil
}

// Assign commits job j's current operation to cell c. The cell admits it
// at once if its inbound buffer has a free slot (the job starts moving);
// otherwise the job is blocked, counted as a blocking incident, and waits
// for a slot, holding its machine if it is on one. A job assigned to the
// cell whose machine holds it continues on that machine at once.
func (e *Engine) Assign(j, c int) error {
	if c < 0 || c >= len(e.P.Cells) {
		return fmt.Errorf("assign job %d: no cell %d", j, c)
	}
	k := indexOf(e.routeQ, j)
	if k < 0 {
		return fmt.Errorf("assign job %d: its operation is not awaiting routing", j)
	}
	jb := &e.jobs[j]
	op := jb.route[jb.op]
	if !e.P.Capable(c, op.Type) {
		return fmt.Errorf("assign job %d op %d (%s) to cell %s: the cell cannot do it",
			j, jb.op, e.P.Ops[op.Type], e.P.Cells[c].ID)
	}
	e.routeQ = remove(e.routeQ, j)
	jb.dest = c
	if jb.reroute == "" {
		jb.offered = -1 // a new blocked spell, if it blocks
	}
	// A re-routed job sent back to the cell whose queue it left keeps
	// waiting there: same place in the queue, no new blocking incident.
	stays := jb.reroute != "" && c == jb.rerouteFrom
	queued, from := jb.fromQueue, jb.rerouteFrom
	jb.reroute, jb.rerouteFrom, jb.fromQueue = "", -1, false
	e.emitAt(EvRouteAssigned, j, c, -1)
	if queued {
		if stays {
			e.returnToQueue(j)
			e.settle()
			return nil
		}
		e.cells[from].occupancy-- // it leaves the buffer it waited in
		e.touch(from)
	}
	if mi := jb.machine; mi >= 0 && e.machines[mi].cell == c && e.machines[mi].state == Blocked {
		// Same-cell continuation: the job stays on its machine (no
		// transport, no buffer slot), as a shuttle stays at its station.
		jb.state = jWorking
		e.working++
		e.progress++
		e.startProcessing(mi)
	} else if e.cells[c].occupancy < e.P.Cells[c].Buffer && len(e.cells[c].admitQ) == 0 {
		e.admit(j)
	} else {
		jb.state, jb.since = jBlocked, e.now
		e.nBlocked++
		cs := &e.cells[c]
		if stays {
			k := 0 // the queue is in blocking order
			for k < len(cs.admitQ) && e.jobs[cs.admitQ[k]].blockSeq < jb.blockSeq {
				k++
			}
			cs.admitQ = slices.Insert(cs.admitQ, k, j)
			e.touch(c)
		} else {
			e.blockSeq++
			jb.blockSeq = e.blockSeq
			cs.admitQ = append(cs.admitQ, j)
			e.touch(c)
			e.Acc.BlockingIncidents++
		}
		e.emitAt(EvBlocked, j, c, -1)
	}
	if queued {
		e.admitBlocked(from) // the slot it left goes to the queue there, after its own move
	}
	e.settle()
	return nil
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// remove deletes the first v from s, keeping order.
func remove(s []int, v int) []int {
	if k := indexOf(s, v); k >= 0 {
		return append(s[:k], s[k+1:]...)
	}
	return s
}
