package coord

import (
	"fmt"
	"slices"
)

// stage is where a work item's routing protocol stands: which agents are
// active next and for what.
type stage uint8

const (
	stPlantCell     stage = iota // plant picks a cell (centralized; reselection)
	stPlantArea                  // plant picks an area (hierarchical, holonic)
	stAreaCell                   // the area picks one of its cells, or escalates
	stBid                        // candidate cells bid or decline, all at once
	stAward                      // the decider awards among the bids
	stCommit                     // the proposed cell accepts or rejects
	stReroute                    // after a rejection the area tries a sibling, or escalates
	stPlantFallback              // the protocol ran out of options: the plant places the item, or declines
	stSelectMode                 // the mode_selector chooses the item's mode (adaptive, selector agent)
)

// itemState is the protocol state of the work item being routed.
type itemState struct {
	active  bool
	job     int
	op      int // operation type index
	mode    AuthorityMode
	stage   stage
	trigger string
	area    int    // area holding the item, -1 while the plant decides
	cell    int    // proposed cell, -1 if none
	decider string // agent assigning the cell: "plant" or "area:X"

	excludedCell []bool // rejected for this item (a decliner may bid again when re-announced)
	excludedArea []bool // escalated
	candidates   []int  // cells asked in the current bid round
	bids         []int  // cells that bid in the current round, by cell index order
	bidClass     []string
	bidRound     bool // the current assignment goes through bids
	round        int
	steps        int
	rejected     []string
	escalated    []string
	inv          inviteState // the bid rounds' cut under bid_invitations (activation.go)
	// cut: the step limit (maxItemSteps), not the protocol, sent the item
	// to the plant-level fallback, whatever local options were left: the
	// plant did not earn the placement, and the harness makes it (G_fb).
	cut bool
}

// maxItemSteps bounds the protocol steps spent on one work item before it
// goes to the plant-level fallback, which always places it: every protocol
// terminates.
func (in *Interpreter) maxItemSteps() int { return 4*len(in.eng.P.Cells) + 8 }

// startItem begins routing job j's current operation under the mode the
// selector picks for it.
func (in *Interpreter) startItem(j int) error {
	e := in.eng
	it := &in.item
	nc, na := len(e.P.Cells), len(e.P.Areas)
	*it = itemState{
		active: true, job: j, area: -1, cell: -1, decider: RolePlant, trigger: "work_item_ready",
		excludedCell: reuse(it.excludedCell, nc), excludedArea: reuse(it.excludedArea, na),
		bidClass: reuse(it.bidClass, nc), candidates: it.candidates[:0], bids: it.bids[:0],
		rejected: it.rejected[:0], escalated: it.escalated[:0], inv: it.inv.next(),
	}
	it.op, _, _ = e.CurrentOp(j)
	why, from, reroute := e.Reroute(j)
	if reroute {
		it.trigger = why
	}
	switch {
	case in.isStatic:
		it.mode = in.static // a static mode reads no observation (itemViews describes the item); Reset validated it
	case in.adaptive != nil && in.adaptive.mode.Adaptive.ByAgent():
		in.startSelection(j) // the mode_selector decides first; beginProtocol follows its answer
		return nil
	case in.adaptive != nil:
		it.mode = in.chooseMode(j)
	default:
		in.fillWorkItem()
		it.mode = in.sel.ModeFor(&in.work, in.plantObservation())
		if err := it.mode.Validate(); err != nil {
			return fmt.Errorf("mode selector for job %d: %w", j, err)
		}
	}
	in.beginProtocol(from, reroute)
	return nil
}

// beginProtocol sets the first stage of the work item under its mode;
// from and reroute are the engine's Reroute of its job.
func (in *Interpreter) beginProtocol(from int, reroute bool) {
	e := in.eng
	it := &in.item
	switch {
	case reroute && it.mode.AreaLocalRerouteEnabled:
		// A blocked item is first the business of the area that holds its
		// destination: it reroutes locally (its old cell is one option)
		// or escalates to the plant.
		it.area = e.P.Cells[from].Area
		it.decider, it.stage = in.areaAgents[it.area], stReroute
	case it.mode.RoutingAuthorityMode == RoutingCNP:
		in.startBids(RolePlant)
	case it.mode.hasAreaLevel():
		it.stage = stPlantArea
	default:
		it.stage = stPlantCell
	}
}

// advance commits one step of the running item's protocol.
func (in *Interpreter) advance(d *Decision) error {
	it := &in.item
	if it.stage == stSelectMode { // not one of the item's protocol steps: its protocol starts at the next
		_, act := in.decided(AgentModeSelector)
		in.commitSelection(d, act)
		_, from, reroute := in.eng.Reroute(it.job)
		in.beginProtocol(from, reroute)
		return nil
	}
	it.steps++
	switch it.stage {
	case stPlantFallback:
		// ApplyNotes has replaced a decline by the contract-safe cell.
		v, act := in.decided(RolePlant)
		opt := v.Options[act]
		c, ok := in.cellOf(opt.Cell)
		if !ok {
			return fmt.Errorf("no cell %q", opt.Cell.Cell)
		}
		in.rememberf(RolePlant, d.Time, it.job, in.work.Op, "fallback placement on ", opt.Cell.Cell)
		in.Messages = append(in.Messages,
			Message{Step: d.Step, Time: d.Time, Type: MsgAssign, Sender: RolePlant, Receiver: in.cellAgents[c], Job: it.job, Op: in.work.Op, Forced: true},
			Message{Step: d.Step, Time: d.Time, Type: MsgAccept, Sender: in.cellAgents[c], Receiver: RolePlant, Job: it.job, Op: in.work.Op, Forced: true})
		in.countMsgs(RolePlant, 2)
		it.area, it.decider = -1, RolePlant
		return in.settle(d, RolePlant, c)
	case stPlantCell, stAreaCell, stAward, stReroute:
		v, act := in.decided(it.decider)
		if v == nil {
			return fmt.Errorf("no decision from %s", it.decider)
		}
		opt := v.Options[act]
		if opt.Action == ActEscalate {
			in.rememberf(it.decider, d.Time, it.job, in.work.Op, "escalated")
			if err := in.escalate(d, it.decider); err != nil {
				return err
			}
			break
		}
		c, ok := in.cellOf(opt.Cell)
		if !ok {
			return fmt.Errorf("no cell %q", opt.Cell.Cell)
		}
		typ := MsgAssign // stPlantCell, stAreaCell
		switch it.stage {
		case stAward:
			typ = MsgAward
		case stReroute:
			typ = MsgReroute
		}
		in.rememberf(it.decider, d.Time, it.job, in.work.Op, typ, " ", opt.Cell.Cell)
		in.send(d, it.decider, typ, it.decider, in.cellAgents[c])
		if err := in.propose(d, it.decider, c); err != nil {
			return err
		}
	case stPlantArea:
		v, act := in.decided(RolePlant)
		opt := v.Options[act]
		a := slices.Index(in.areaAgents, RoleArea+":"+opt.Area.Area)
		if a < 0 {
			return fmt.Errorf("no area %q", opt.Area.Area)
		}
		in.rememberf(RolePlant, d.Time, it.job, in.work.Op, "allocate ", opt.Area.Area)
		in.send(d, RolePlant, MsgAllocate, RolePlant, in.areaAgents[a])
		it.area, it.decider, it.trigger = a, in.areaAgents[a], "allocation"
		if it.mode.MediatedBidRoundEnabled {
			in.startBids(it.decider)
		} else {
			it.stage = stAreaCell
		}
	case stBid:
		it.bids = it.bids[:0]
		for _, c := range it.candidates {
			id := in.cellAgents[c]
			in.send(d, id, MsgAnnounce, it.decider, id)
			v, act := in.decided(id)
			opt := v.Options[act]
			if opt.Action == ActBid {
				it.bids = append(it.bids, c)
				it.bidClass[c] = opt.Bid
				in.send(d, id, MsgBid, id, it.decider)
				in.rememberf(id, d.Time, it.job, in.work.Op, "bid ", opt.Bid)
			} else {
				it.bidClass[c] = ""
				in.noteDecline(c)
				in.send(d, id, MsgDecline, id, it.decider)
				in.rememberf(id, d.Time, it.job, in.work.Op, "declined")
			}
		}
		if len(it.bids) == 0 {
			return in.refused(d, "")
		}
		it.stage, it.trigger = stAward, "bids"
	case stCommit:
		id := in.cellAgents[it.cell]
		v, act := in.decided(id)
		opt := v.Options[act]
		if opt.Action == ActAccept {
			in.rememberf(id, d.Time, it.job, in.work.Op, "accepted")
			in.send(d, id, MsgAccept, id, it.decider)
			return in.settle(d, id, it.cell)
		}
		in.rememberf(id, d.Time, it.job, in.work.Op, "rejected")
		in.send(d, id, MsgReject, id, it.decider)
		it.excludedCell[it.cell] = true
		it.rejected = append(it.rejected, in.eng.P.Cells[it.cell].ID)
		return in.refused(d, id)
	}
	if it.active && it.steps >= in.maxItemSteps() {
		it.cut = true
		return in.fallback()
	}
	return nil
}

// propose offers the item to cell c: the cell commits if it may reject,
// else it accepts implicitly and the item is placed.
func (in *Interpreter) propose(d *Decision, cause string, c int) error {
	it := &in.item
	it.cell = c
	if it.mode.CellContractActions == AcceptReject {
		it.stage = stCommit
		it.trigger = "assignment"
		if it.bidRound {
			it.trigger = "award"
		}
		return nil
	}
	in.send(d, cause, MsgAccept, in.cellAgents[c], it.decider)
	return in.settle(d, cause, c)
}

// settle places the item on cell c in the engine and ends its protocol.
func (in *Interpreter) settle(d *Decision, cause string, c int) error {
	it := &in.item
	if it.area >= 0 && it.decider == in.areaAgents[it.area] {
		in.send(d, cause, MsgReport, it.decider, RolePlant)
	}
	it.active = false
	return in.eng.Assign(it.job, c)
}

// refused handles a cell that rejected the item (or a bid round in which
// every candidate declined): re-award to another bidder, reroute within the
// area, escalate to the plant, or re-announce, as the mode allows.
func (in *Interpreter) refused(d *Decision, cause string) error {
	it := &in.item
	if cause == "" {
		cause = it.decider
	}
	if it.bidRound && slices.ContainsFunc(it.bids, func(c int) bool { return !it.excludedCell[c] }) {
		it.stage, it.trigger = stAward, "rejection"
		return nil
	}
	if it.area >= 0 {
		if it.mode.AreaLocalRerouteEnabled && in.hasUntried(it.area) {
			it.stage, it.trigger, it.bidRound = stReroute, "rejection", false
			return nil
		}
		return in.escalate(d, cause)
	}
	if it.bidRound { // plant-mediated contract net: announce again
		it.round++
		if it.round < MaxBidRounds && in.hasUntried(-1) {
			in.startBids(RolePlant)
			it.trigger = "reannouncement"
			return nil
		}
		return in.fallback()
	}
	return in.plantFailure(d, cause, "rejection")
}

// escalate hands the item from its area back to the plant.
func (in *Interpreter) escalate(d *Decision, cause string) error {
	it := &in.item
	in.send(d, cause, MsgEscalate, in.areaAgents[it.area], RolePlant)
	it.excludedArea[it.area] = true
	it.escalated = append(it.escalated, in.eng.P.Areas[it.area].ID)
	it.area, it.decider, it.cell, it.bidRound = -1, RolePlant, -1, false
	return in.plantFailure(d, cause, "escalation")
}

// plantFailure: the plant reselects (activated by trigger: an escalation
// or a rejection) if the mode requires it and something is left to
// choose; otherwise it places the item by its fallback.
func (in *Interpreter) plantFailure(d *Decision, cause, trigger string) error {
	it := &in.item
	it.trigger = trigger
	if it.mode.PlantRerouteRequired {
		if it.mode.hasAreaLevel() {
			if len(in.candidateAreas()) > 0 {
				it.stage = stPlantArea
				return nil
			}
		} else if in.hasUntried(-1) {
			it.stage = stPlantCell
			return nil
		}
	}
	return in.fallback()
}

// fallback hands the item, whose protocol ran out of options (every cell
// refused, every area escalated, no reselection in this paradigm, or too
// many steps), to the plant-level fallback: the plant is activated to
// place it on any capable cell, full ones included, or to decline; a
// decline, like an illegal answer, leaves the placement to the
// contract-safe rule, audited as a fallback (ApplyNotes). No work is ever
// placed without a decision step (docs/metrics.md, "Attribution").
func (in *Interpreter) fallback() error {
	it := &in.item
	in.Forced++
	it.stage, it.trigger = stPlantFallback, "protocol_exhausted"
	it.area, it.decider, it.cell, it.bidRound = -1, RolePlant, -1, false
	return nil
}

// startBids announces the item to the decider's candidate cells.
func (in *Interpreter) startBids(decider string) {
	it := &in.item
	it.decider, it.bidRound, it.stage, it.trigger = decider, true, stBid, "announcement"
	it.candidates = append(it.candidates[:0], in.untriedCells(it.area)...)
	it.bids = it.bids[:0]
	it.inv.ranked = false // bid_invitations cuts the candidates when the round's views are built
}

// untriedCells lists capable cells not yet refused for this item, in area
// a (all areas when a < 0).
// The result is reused by the next call: copy it to keep it.
//
// An area's cells are listed from the area's own cell list (Compile numbers
// an area's cells consecutively, so that is cell index order), so an area
// agent's options cost O(cells of the area).
func (in *Interpreter) untriedCells(a int) []int {
	it := &in.item
	p := in.eng.P
	out := in.untried[:0]
	if a >= 0 {
		for _, c := range p.Areas[a].Cells {
			if p.Capable(c, it.op) && !it.excludedCell[c] {
				out = append(out, c)
			}
		}
	} else {
		for c := range p.Cells {
			if p.Capable(c, it.op) && !it.excludedCell[c] {
				out = append(out, c)
			}
		}
	}
	in.untried = out
	return out
}

// hasUntried reports whether area a (all areas when a < 0) has an untried
// capable cell.
func (in *Interpreter) hasUntried(a int) bool { return len(in.untriedCells(a)) > 0 }

// candidateAreas lists areas not escalated with an untried capable cell.
// The result is reused by the next call: copy it to keep it.
func (in *Interpreter) candidateAreas() []int {
	out := in.candAreas[:0]
	for a := range in.eng.P.Areas {
		if !in.item.excludedArea[a] && in.hasUntried(a) {
			out = append(out, a)
		}
	}
	in.candAreas = out
	return out
}
