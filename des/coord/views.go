package coord

import (
	"slices"

	"github.com/coordbench/coordbench/des/factory"
)

// decisionFactors returns the decision factors of a kind: short guidance
// shown to every controller (models above all) with the options. A
// switch, not a map: it is read for every view.
func decisionFactors(kind string) []string {
	switch kind {
	case KindRelease:
		return releaseFactors
	case KindSelectArea:
		return selectAreaFactors
	case KindSelectCell:
		return selectCellFactors
	case KindBid:
		return bidFactors
	case KindAward:
		return awardFactors
	case KindCommit:
		return commitFactors
	case KindReroute:
		return rerouteFactors
	case KindPlantFallback:
		return plantFallbackFactors
	case KindSelectMode:
		return selectModeFactors
	}
	return nil
}

// The decision factors of each kind (decisionFactors).
var (
	releaseFactors = []string{
		"release the most urgent job (earliest due date) when WIP and power allow",
		"defer under power pressure or when the plant is congested; deferring costs time",
	}
	selectAreaFactors = []string{
		"prefer areas whose capable cells have free slots, little backlog and short processing",
		"transport_time is the move from where the job is now",
	}
	selectCellFactors = []string{
		"shorter proc_time and transport_time finish the work item sooner",
		"free_slots 0 means the job will block and hold its current machine",
		"work_item.blocked_on names the full cell a blocked item left: choosing it keeps the item waiting there, in its place",
		"high backlog means waiting; busy_kw adds to plant power when the cell works",
	}
	bidFactors = []string{
		"bid high if you can start the item soon, medium or low if you are loaded, decline if you cannot take it",
		"a declined item goes to other cells; declining everything delays the job",
	}
	awardFactors = []string{
		"award the bid that will finish the item soonest: bid class, free_slots, backlog, proc_time",
	}
	commitFactors = []string{
		"accept unless taking the item would block it (no free slot) or overload you",
		"a rejection sends the item elsewhere and costs coordination messages",
	}
	rerouteFactors = []string{
		"a cell rejected the item, or it is blocked on a full cell (work_item.blocked_on): try a sibling with free slots",
		"escalate to the plant is offered only when no untried cell of the area has a free slot and a machine up",
		"choosing the cell it is blocked on (work_item.blocked_on) keeps it waiting there, in its place in the queue",
	}
	plantFallbackFactors = []string{
		"the protocol ran out of options for this item: place it on any capable cell, a full one included (it will block)",
		"decline leaves the placement to the harness's contract-safe rule, counted as a fallback (G_fb)",
	}
)

// CellReads is the number of cell summaries the interpreter has taken
// from the engine or its snapshots so far in the episode (each cell at
// most once per decision): the work its views cost. A runner that splits
// decisions by role level (harness.MeasureRoles) reads it around each
// step: an area or cell agent's step reads only the cells its views show.
func (in *Interpreter) CellReads() int { return in.cellReads }

// fillWorkItem describes the running item's operation.
func (in *Interpreter) fillWorkItem() {
	e := in.eng
	j := in.item.job
	info := e.Job(j)
	_, base, _ := e.CurrentOp(j)
	at := "dock"
	if info.At >= 0 {
		at = e.P.Cells[info.At].ID
	}
	in.work = WorkItem{Job: j, Op: info.Op, Ops: info.Ops, OpType: info.OpType, Product: info.Product,
		Family: info.Family, Base: base, Due: round2(info.Due), Slack: round2(info.Due - e.Now() - info.Work), At: at}
	if _, from, ok := e.Reroute(j); ok {
		in.work.BlockedOn = e.P.Cells[from].ID
	}
}

func (in *Interpreter) fillPlantObservation() {
	e := in.eng
	p := e.P
	o := &in.plantObs
	*o = PlantObservation{PowerKW: e.PowerKW(), CapKW: p.CapKW(), WIP: e.WIP(), WIPCap: p.Inst.WIPCap,
		Backlog: len(e.Backlog()), Completed: e.Completed(), Jobs: e.NumJobs(), InTransit: e.InTransit(),
		Areas: o.Areas[:0]}
	o.Areas = slices.Grow(o.Areas, len(p.Areas))[:len(p.Areas)]
	now := e.Now()
	for a := range p.Areas {
		sn := &in.areas[a]
		switch ver := e.AreaVersion(a); {
		case !sn.kept || sn.ver != ver:
			in.sumArea(a, &sn.sum)
			sn.kept, sn.ver, sn.at = true, ver, now
		case sn.at != now && sn.sum.Busy > 0:
			in.sumAreaBacklog(a, &sn.sum) // only the clock moved: the counts and power are the same
			sn.at = now
		}
		o.Areas[a] = sn.sum // a copy: the payload's is the controller's to read (or spoil)
	}
}

// sumArea writes area a's summary over its cells' summaries into s.
func (in *Interpreter) sumArea(a int, s *AreaSummary) {
	area := &in.eng.P.Areas[a]
	*s = AreaSummary{Area: area.ID, Cells: len(area.Cells), Machines: in.areaMachines[a]}
	var w int64
	for _, c := range area.Cells {
		ci := in.cellInfo(c)
		s.Busy += ci.Busy + ci.Setup
		s.Down += ci.Down
		s.Blocked += ci.Blocked
		s.FreeSlots += ci.FreeSlots
		s.Backlog += ci.Backlog
		w += ci.PowerW
	}
	s.Backlog = round2(s.Backlog)
	s.PowerKW = float64(w) / 1000
}

// sumAreaBacklog refreshes the backlog of area a's summary s, made by
// sumArea while the area's version was the same: with no cell of the area
// changed, only the clock has moved the cells' backlogs (their busy and
// setup machines count down); the counts and the power are still s's.
// The sum is sumArea's, cell by cell in the same order, so that it is the
// same float.
func (in *Interpreter) sumAreaBacklog(a int, s *AreaSummary) {
	var b float64
	for _, c := range in.eng.P.Areas[a].Cells {
		b += in.cellInfo(c).Backlog
	}
	s.Backlog = round2(b)
}

// view activates agent id for the current decision: it returns the
// agent's slot, listed in in.active, with its reusable view reset and the
// shared observation (power headroom, alarms) and its protocol context
// (recent events, working memory, feedback) filled in. The caller adds
// the view to the decision (activate).
func (in *Interpreter) view(id, role, trigger string) *agentSlot {
	slot := in.slot(id)
	in.active = append(in.active, slot)
	v := &slot.view
	old := v.Observation
	*v = View{
		AgentID: id, Role: role,
		Context: Context{Trigger: trigger, RecentEvents: nonNil(v.Context.RecentEvents), Alarms: v.Context.Alarms[:0],
			Memory: append(nonNil(v.Context.Memory), slot.memory...), Feedback: slot.feedback},
		Options:      v.Options[:0],
		LegalActions: v.LegalActions[:0],
		ActionMask:   v.ActionMask[:0],
	}
	capKW := in.eng.P.CapKW()
	v.Observation.HeadroomKW = round2(capKW - in.eng.PowerKW())
	switch role {
	case RolePlant:
		v.Observation.Plant = in.plantObservation()
	case RoleArea:
		v.Observation.Area = old.Area
		if v.Observation.Area == nil {
			v.Observation.Area = &AreaObservation{}
		}
	case RoleCell:
		v.Observation.Cell = old.Cell
		if v.Observation.Cell == nil {
			v.Observation.Cell = &CellObservation{}
		}
	}
	switch h := v.Observation.HeadroomKW; {
	case h < 0:
		v.Context.Alarms = append(v.Context.Alarms, "power_over_cap")
	case h < 0.1*capKW:
		v.Context.Alarms = append(v.Context.Alarms, "power_near_cap")
	}
	if in.nRecent < RecentEvents {
		v.Context.RecentEvents = append(v.Context.RecentEvents, in.recent[:in.nRecent]...)
	} else if rv := v.Context.RecentEvents; cap(rv) >= RecentEvents { // the ring is full: oldest first, in place
		rv = rv[:RecentEvents]
		oldest := uint(in.nRecent) % RecentEvents // unsigned: a mask, no sign fix-up nor bounds check
		for i := range uint(len(rv)) {
			rv[i] = in.recent[(oldest+i)%RecentEvents]
		}
		v.Context.RecentEvents = rv
	} else {
		oldest := in.nRecent % RecentEvents
		v.Context.RecentEvents = append(v.Context.RecentEvents, in.recent[oldest:]...)
		v.Context.RecentEvents = append(v.Context.RecentEvents, in.recent[:oldest]...)
	}
	return slot
}

// finishView numbers the options and marks them all legal: options are
// built from legal actions only.
func (in *Interpreter) finishView(v *View) {
	if in.summaryViews() {
		in.compress(v)
	}
	v.DecisionFactors = decisionFactors(v.Kind)
	for i := range v.Options {
		v.Options[i].Index = i
		v.LegalActions = append(v.LegalActions, i)
		v.ActionMask = append(v.ActionMask, true)
	}
}

func (in *Interpreter) releaseView(v *View) {
	e := in.eng
	v.Kind = KindRelease
	n := min(len(e.Backlog()), MaxReleaseOptions)
	in.jobOpts = slices.Grow(in.jobOpts[:0], n)
	for _, j := range e.Backlog()[:n] {
		info := e.Job(j)
		in.jobOpts = append(in.jobOpts, JobOption{Job: j, Product: info.Product, Family: info.Family,
			Arrival: round2(info.Arrival), Due: round2(info.Due), Work: info.Work})
		v.Options = append(v.Options, Option{Action: ActRelease, Job: &in.jobOpts[len(in.jobOpts)-1]})
	}
	if e.CanDefer() {
		v.Options = append(v.Options, Option{Action: ActDefer})
	}
}

// itemViews activates the agents of the running item's current stage.
func (in *Interpreter) itemViews(d *Decision) {
	it := &in.item
	p := in.eng.P
	in.fillWorkItem()
	in.cellOpts = slices.Grow(in.cellOpts[:0], len(p.Cells))
	add := func(v *View) { // Next puts the views of in.active in d.ActiveAgents
		v.Context.WorkItem = &in.work
		v.Context.Authority = in.auth // nil unless the paradigm is adaptive
		in.finishView(v)
	}
	plant := func() *View { // the plant's view, with its contract
		s := in.view(RolePlant, RolePlant, it.trigger)
		s.view.Context.Contract = in.contract(s)
		return &s.view
	}
	switch it.stage {
	case stSelectMode:
		in.selectorView()
	case stPlantCell:
		v := plant()
		v.Kind = KindSelectCell
		for _, c := range in.untriedCells(-1) {
			v.Options = append(v.Options, Option{Action: ActAssign, Cell: in.cellOption(c)})
		}
		add(v)
	case stPlantFallback:
		v := plant()
		v.Kind = KindPlantFallback
		for c := range p.Cells {
			if p.Capable(c, it.op) {
				v.Options = append(v.Options, Option{Action: ActAssign, Cell: in.cellOption(c)})
			}
		}
		v.Options = append(v.Options, Option{Action: ActDecline})
		add(v)
	case stPlantArea:
		v := plant()
		v.Kind = KindSelectArea
		in.areaOpts = slices.Grow(in.areaOpts[:0], len(p.Areas))
		for _, a := range in.candidateAreas() {
			in.areaOpts = append(in.areaOpts, in.areaOption(a))
			v.Options = append(v.Options, Option{Action: ActAllocate, Area: &in.areaOpts[len(in.areaOpts)-1]})
		}
		add(v)
	case stAreaCell, stReroute:
		v := in.areaView(it.area)
		v.Kind = KindSelectCell
		if it.stage == stReroute {
			v.Kind = KindReroute
		}
		recoverable := false
		for _, c := range in.untriedCells(it.area) {
			o := in.cellOption(c)
			v.Options = append(v.Options, Option{Action: ActAssign, Cell: o})
			recoverable = recoverable || localRoom(o)
		}
		if !recoverable { // local recovery is exhausted: only now may the area hand the item back
			v.Options = append(v.Options, Option{Action: ActEscalate})
		}
		add(v)
	case stBid:
		for _, c := range in.invitees() {
			v := in.cellView(c)
			v.Kind = KindBid
			v.Context.Contract.Invitation = in.invitation()
			for _, b := range bidClasses {
				v.Options = append(v.Options, Option{Action: ActBid, Bid: b})
			}
			v.Options = append(v.Options, Option{Action: ActDecline})
			add(v)
		}
	case stAward:
		var v *View
		if it.area >= 0 {
			v = in.areaView(it.area)
		} else {
			v = plant()
		}
		v.Kind = KindAward
		for _, c := range it.bids {
			if !it.excludedCell[c] {
				o := in.cellOption(c)
				o.Bid = it.bidClass[c]
				v.Options = append(v.Options, Option{Action: ActAssign, Cell: o})
			}
		}
		add(v)
	case stCommit:
		v := in.cellView(it.cell)
		v.Kind = KindCommit
		v.Options = append(v.Options, Option{Action: ActAccept}, Option{Action: ActReject})
		add(v)
	}
}

// agentSlot is what the interpreter keeps per agent, found with one map
// lookup: its reused payload storage (the view and the contract the view
// points to), its working memory and its feedback on the last reply.
type agentSlot struct {
	view     View
	contract Contract
	memory   []string // the last MemorySize lines, oldest first
	feedback string   // set when the last reply was replaced by the fallback
}

// slot returns agent id's slot, made on first use.
func (in *Interpreter) slot(id string) *agentSlot {
	if id == RolePlant && in.plantSlot != nil { // active in most decisions: kept at hand
		return in.plantSlot
	}
	s := in.views[id]
	if s == nil {
		s = &agentSlot{}
		in.views[id] = s
	}
	if id == RolePlant {
		in.plantSlot = s
	}
	return s
}

// contract describes the running item's protocol state to the agent of
// slot s, in s's reused contract storage (valid until s's next view).
func (in *Interpreter) contract(s *agentSlot) *Contract {
	it := &in.item
	ct := &s.contract
	*ct = Contract{From: it.decider, Round: min(it.round+1, MaxBidRounds), Rejected: it.rejected, Escalated: it.escalated}
	return ct
}

func (in *Interpreter) areaView(a int) *View {
	e := in.eng
	p := e.P
	it := &in.item
	s := in.view(in.areaAgents[a], RoleArea, it.trigger)
	v := &s.view
	o := v.Observation.Area
	*o = AreaObservation{Area: p.Areas[a].ID, Cells: o.Cells[:0]}
	var w int64
	for _, c := range p.Areas[a].Cells {
		ci := in.cellInfo(c)
		o.Cells = append(o.Cells, CellSummary{Cell: p.Cells[c].ID, Machines: p.Cells[c].Machines, Idle: ci.Idle,
			Busy: ci.Busy + ci.Setup, Blocked: ci.Blocked, Down: ci.Down, Waiting: ci.Waiting, FreeSlots: ci.FreeSlots,
			Backlog: round2(ci.Backlog), PowerKW: float64(ci.PowerW) / 1000})
		w += ci.PowerW
	}
	o.PowerKW = float64(w) / 1000
	v.Context.Contract = in.contract(s)
	v.Context.Contract.From = RolePlant
	return v
}

func (in *Interpreter) cellView(c int) *View {
	e := in.eng
	p := e.P
	it := &in.item
	s := in.view(in.cellAgents[c], RoleCell, it.trigger)
	v := &s.view
	ci := in.cellInfo(c)
	o := v.Observation.Cell
	*o = CellObservation{Cell: p.Cells[c].ID, Area: p.Areas[p.Cells[c].Area].ID, Machines: o.Machines[:0],
		Waiting: ci.Waiting, Incoming: ci.Occupancy - ci.Waiting, Buffer: p.Cells[c].Buffer, FreeSlots: ci.FreeSlots,
		AdmitQueue: ci.AdmitQueue, Backlog: round2(ci.Backlog), PowerKW: float64(ci.PowerW) / 1000}
	for m := 0; m < p.Cells[c].Machines; m++ {
		st, fam := e.Machine(c, m)
		ms := MachineState{State: st.String()}
		if fam >= 0 {
			ms.Family = p.Families[fam]
		}
		o.Machines = append(o.Machines, ms)
		if st == factory.Down && !slices.Contains(v.Context.Alarms, "machine_down") {
			v.Context.Alarms = append(v.Context.Alarms, "machine_down")
		}
	}
	ct := in.contract(s)
	ct.ProcTime = round2(p.ProcTime(c, it.op, in.work.Base))
	ct.TransportTime = p.TransportTime(in.eng.JobLocation(it.job), c)
	v.Context.Contract = ct
	return v
}

// cellOption describes cell c as a candidate for the running item. The
// pointer is valid until the next Next.
func (in *Interpreter) cellOption(c int) *CellOption {
	p := in.eng.P
	ci := in.cellInfo(c)
	in.cellOpts = append(in.cellOpts, in.cellTmpl[c]) // the cell's id, area, machines, busy power and index
	o := &in.cellOpts[len(in.cellOpts)-1]
	o.ProcTime = round2(p.ProcTime(c, in.item.op, in.work.Base))
	o.TransportTime = p.TransportTime(in.eng.JobLocation(in.item.job), c)
	o.FreeSlots, o.Backlog, o.Idle, o.Down = ci.FreeSlots, round2(ci.Backlog), ci.Idle, ci.Down
	return o
}

// areaOption aggregates area a's untried capable cells for the running item.
func (in *Interpreter) areaOption(a int) AreaOption {
	p := in.eng.P
	o := AreaOption{Area: p.Areas[a].ID}
	from := in.eng.JobLocation(in.item.job)
	for i, c := range in.untriedCells(a) {
		ci := in.cellInfo(c)
		pt := round2(p.ProcTime(c, in.item.op, in.work.Base))
		tt := p.TransportTime(from, c)
		if i == 0 || pt < o.MinProcTime {
			o.MinProcTime = pt
		}
		if i == 0 || tt < o.TransportTime {
			o.TransportTime = tt
		}
		o.CapableCells++
		o.Machines += p.Cells[c].Machines
		o.FreeSlots += ci.FreeSlots
		o.Backlog += ci.Backlog
		o.Down += ci.Down
	}
	o.Backlog = round2(o.Backlog)
	return o
}

// nonNil empties s, keeping its storage, and never returns nil: the
// payload shows [] rather than null for an empty list.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s[:0]
}
