package coord

// SafeAction is the contract-safe fallback: a legal action chosen from the
// view alone by a fixed, conservative rule (docs/payload.md). It never
// stalls the plant and never chooses a full cell when another has room:
//   - release: the backlog job with the earliest due date (never defer);
//   - select_cell: a cell with free inbound slots if any, then the least
//     backlog plus processing time, then the lowest index;
//   - otherwise: the first legal action.
func SafeAction(v *View) int {
	best := -1
	better := func(i int) bool { return best < 0 }
	switch v.Kind {
	case KindRelease:
		better = func(i int) bool {
			o := v.Options[i]
			if o.Job == nil {
				return false
			}
			return best < 0 || v.Options[best].Job == nil || o.Job.Due < v.Options[best].Job.Due
		}
	case KindSelectCell:
		better = func(i int) bool {
			o := v.Options[i].Cell
			if o == nil {
				return false
			}
			if best < 0 || v.Options[best].Cell == nil {
				return true
			}
			b := v.Options[best].Cell
			if (o.FreeSlots > 0) != (b.FreeSlots > 0) {
				return o.FreeSlots > 0
			}
			return o.Backlog+o.ProcTime < b.Backlog+b.ProcTime
		}
	}
	for _, i := range v.LegalActions {
		if i >= 0 && i < len(v.Options) && better(i) {
			best = i
		}
	}
	if best < 0 && len(v.LegalActions) > 0 {
		best = v.LegalActions[0]
	}
	return best
}
