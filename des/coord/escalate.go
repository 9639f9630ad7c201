package coord

import "strconv"

// Escalation after local recovery (docs/paradigms.md, "Escalation"): an
// area's select_cell or reroute view offers escalate only when local
// recovery is exhausted, that is when no untried capable cell of the area
// can take the item now (localRoom). Otherwise escalate is not an option,
// so not a legal action: an answer naming the index it takes when offered
// (the last, after the cells) is illegal like any other, and the audit's
// reason says why it is not offered (WithheldEscalation).

// localRoom reports whether a cell option can take the item now: a free
// slot in its inbound buffer and a machine up.
func localRoom(o *CellOption) bool { return o.FreeSlots > 0 && o.Down < o.Machines }

// WithheldEscalation is the reason's addition for answer act of view v
// when act is where escalate stands when offered (the index after the
// last cell) and v withholds it: the first option's cell that can take
// the item. It is "" for any other answer or view.
func WithheldEscalation(v *View, act int) string {
	if v.Role != RoleArea || v.Kind != KindSelectCell && v.Kind != KindReroute || act != len(v.Options) {
		return ""
	}
	for i := range v.Options {
		if o := v.Options[i].Cell; o != nil && localRoom(o) {
			return ": escalate is not offered while local recovery is possible (cell " + o.Cell + " has " +
				strconv.Itoa(o.FreeSlots) + " free slots and a machine up)"
		}
	}
	return ""
}
