package coord

// SafeAction is the contract-safe fallback: the action the harness takes
// on an agent's behalf when its answer is missing, illegal or unusable,
// when its controller failed or timed out, and when the plant declines a
// plant_fallback placement (docs/payload.md). It is a documented weak
// default, so that failing to decide never pays: it reads no figure of
// quality (processing time, transport time, backlog, due date) and takes
// options in the payload's own order, which is never ranked by quality
// (the backlog in arrival order, areas and cells in plant order, bid
// classes strongest first). What it keeps of the contract is safety: it
// never stalls the plant, never sends work to a full cell when an
// offered one has room, adds no power over the cap when an option with
// room adds none, and honours contracts:
//   - release: defer while the plant is over its power cap and deferring
//     is legal, else the first offered job (the oldest arrival);
//   - select_area: the first area with free slots, else the first area;
//   - select_cell, award, reroute, plant_fallback: the first cell with a
//     free inbound slot whose busy power fits the headroom, else the
//     first with a free slot, else the first cell; escalate or decline
//     only if no cell is offered;
//   - bid: "low", the weakest class, if the cell has a free slot, else
//     decline;
//   - commit: accept (honour the contract);
//   - otherwise (select_mode): the first legal action.
//
// docs/metrics.md ("The fallback alone") measures it against the
// built-in controllers: alone it schedules no better than rule.
func SafeAction(v *View) int {
	for tier := range fallbackTiers {
		for _, i := range v.LegalActions {
			if i >= 0 && i < len(v.Options) && fallbackTakes(v, tier, &v.Options[i]) {
				return i
			}
		}
	}
	return -1
}

// Reasons of a plant_fallback decision the harness makes although the
// plant answered legally (docs/paradigms.md, "Escalation").
const (
	// ReasonDeclined: the plant declined the placement.
	ReasonDeclined = "the plant declined the fallback placement"
	// ReasonStepLimit: the protocol's step limit, not an exhausted
	// protocol, sent the item to the plant, so its placement is not the
	// plant's to make.
	ReasonStepLimit = "the protocol's step limit sent the item to the plant before local recovery was exhausted"
)

// fallbackTiers is the number of SafeAction's tiers: the last takes any
// legal option.
const fallbackTiers = 4

// fallbackTakes reports whether SafeAction takes option o of view v in
// its tier-th pass (tier 0 first): within a pass the first legal option
// it takes wins. A function of the view, not a list of closures: the
// fallback allocates nothing.
func fallbackTakes(v *View, tier int, o *Option) bool {
	switch v.Kind {
	case KindRelease:
		switch tier {
		case 0:
			return o.Action == ActDefer && v.Observation.HeadroomKW < 0
		case 1:
			return o.Action == ActRelease
		}
	case KindSelectArea:
		switch tier {
		case 0:
			return o.Area != nil && o.Area.FreeSlots > 0
		case 1:
			return o.Area != nil
		}
	case KindSelectCell, KindAward, KindReroute, KindPlantFallback:
		switch tier {
		case 0:
			return o.Cell != nil && o.Cell.FreeSlots > 0 && o.Cell.BusyKW <= max(v.Observation.HeadroomKW, 0)
		case 1:
			return o.Cell != nil && o.Cell.FreeSlots > 0
		case 2:
			return o.Cell != nil
		}
	case KindBid:
		if tier == 0 {
			if c := v.Observation.Cell; c != nil && c.FreeSlots > 0 {
				return o.Action == ActBid && o.Bid == "low"
			}
			return o.Action == ActDecline
		}
	case KindCommit:
		if tier == 0 {
			return o.Action == ActAccept
		}
	}
	return tier == fallbackTiers-1
}
