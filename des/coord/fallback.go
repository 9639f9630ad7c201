package coord

// SafeAction is the contract-safe fallback: a legal action chosen from the
// view alone by a fixed, conservative rule (docs/payload.md). It never
// stalls the plant and never sends work to a full cell when another has room:
//   - release: the backlog job with the earliest due date (never defer);
//   - select_area: an area with free slots, then the least backlog per
//     machine plus its shortest processing time;
//   - select_cell, award, reroute, plant_fallback: a cell with free inbound
//     slots if any, then the least backlog plus processing time (escalate
//     or decline only if no cell is offered);
//   - bid: "medium" if the cell has a free slot, else decline;
//   - commit: accept (honour the contract);
//   - otherwise: the first legal action.
func SafeAction(v *View) int {
	var score func(o Option) (float64, bool)
	switch v.Kind {
	case KindRelease:
		score = func(o Option) (float64, bool) {
			if o.Job == nil {
				return 0, false
			}
			return o.Job.Due, true
		}
	case KindSelectArea:
		score = func(o Option) (float64, bool) {
			if o.Area == nil {
				return 0, false
			}
			s := o.Area.Backlog/float64(max(o.Area.Machines, 1)) + o.Area.MinProcTime
			if o.Area.FreeSlots <= 0 {
				s += 1e9
			}
			return s, true
		}
	case KindSelectCell, KindAward, KindReroute, KindPlantFallback:
		score = func(o Option) (float64, bool) {
			if o.Cell == nil {
				return 0, false
			}
			s := o.Cell.Backlog + o.Cell.ProcTime
			if o.Cell.FreeSlots <= 0 {
				s += 1e9
			}
			return s, true
		}
	case KindBid:
		want := ActDecline
		if c := v.Observation.Cell; c != nil && c.FreeSlots > 0 {
			want = ActBid
		}
		score = func(o Option) (float64, bool) {
			return 0, o.Action == want && (o.Action != ActBid || o.Bid == "medium")
		}
	case KindCommit:
		score = func(o Option) (float64, bool) { return 0, o.Action == ActAccept }
	}
	best, bestS := -1, 0.0
	for _, i := range v.LegalActions {
		if i < 0 || i >= len(v.Options) || score == nil {
			continue
		}
		if s, ok := score(v.Options[i]); ok && (best < 0 || s < bestS) {
			best, bestS = i, s
		}
	}
	if best < 0 && len(v.LegalActions) > 0 {
		best = v.LegalActions[0]
	}
	return best
}
