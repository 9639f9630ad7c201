package check

import (
	"slices"
	"strings"
)

// The escalation check (docs/paradigms.md, "Escalation"): an area is
// offered escalate only when local recovery is exhausted, that is when
// no untried capable cell of the area has a free slot and a machine up.
// The check re-derives that from the replay, not from the payload the
// decision shows: a decision is made in the state the trace has reached
// just before the next release or placement record (the engine does not
// move while a work item's protocol runs), so the replay notes, at every
// such record, which cells had room then (snapRoom), and an escalation
// is held to the state before the commit that follows it.

// addCommit records a decision's visible effect with the cells that had
// room just before it.
func (c *checker) addCommit(cm commit) {
	c.commits = append(c.commits, cm)
	c.snapRoom()
}

// snapRoom appends to c.room the bit set of the cells that have room now:
// a free slot (buffer minus occupancy, as the views count it) and a
// machine that is not down.
func (c *checker) snapRoom() {
	n := len(c.plant.cells)
	base := len(c.room)
	for range (n + 63) / 64 {
		c.room = append(c.room, 0)
	}
	for ci := range n {
		if c.hasRoom(ci) {
			c.room[base+ci/64] |= 1 << (ci % 64)
		}
	}
}

// hasRoom reports whether cell ci has a free slot and a machine up now.
func (c *checker) hasRoom(ci int) bool {
	if c.occ[ci] >= c.plant.cells[ci].buffer {
		return false
	}
	for k := range c.machines[ci] {
		if c.machines[ci][k].state != mDown {
			return true
		}
	}
	return false
}

// roomAt reports whether cell ci had room just before the k-th commit
// (k counts from 0), or at the end of the trace when there is no k-th.
func (c *checker) roomAt(k, ci int) bool {
	w := (len(c.plant.cells) + 63) / 64
	if k < 0 || k >= len(c.commits) || (k+1)*w > len(c.room) {
		return c.hasRoom(ci)
	}
	return c.room[k*w+ci/64]&(1<<(ci%64)) != 0
}

// localRoom names a cell that could have taken job's operation op in
// area (an agent id "area:X") just before the k-th commit: capable of the
// operation, not among the cells that rejected the item, with room then.
// It is "" when there is none, or the job or operation is unknown (other
// checks report those).
func (c *checker) localRoom(k, job, op int, area string, rejected []string) string {
	j := c.jobs[job]
	if j == nil {
		return ""
	}
	o, ok := j.product.opType(op)
	if !ok {
		return ""
	}
	area = strings.TrimPrefix(area, "area:")
	for ci := range c.plant.cells {
		cell := &c.plant.cells[ci]
		if cell.area == area && cell.caps[o.Op] > 0 && !slices.Contains(rejected, cell.id) && c.roomAt(k, ci) {
			return cell.id
		}
	}
	return ""
}
