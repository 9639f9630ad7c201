package coord

// chooseMode applies the adaptive paradigm's rules to job j's work item,
// whose routing starts: it takes the ModeState, records the choice (see
// ModeChoice) and the payloads' account of it, and returns the mode.
func (in *Interpreter) chooseMode(j int) AuthorityMode {
	a := in.adaptive
	in.fillWorkItem()
	c := &in.choice
	*c = ModeChoice{Step: in.step, Time: in.eng.Now(), Job: j, Op: in.work.Op}
	in.modeState(&c.State)
	c.Rule, c.Mode = a.mode.Choose(&c.State)
	mode := a.own
	because := ""
	if c.Rule >= 0 {
		mode, because = a.byRule[c.Rule], a.because[c.Rule]
	}
	in.chosen = true
	in.auth = &Authority{Paradigm: a.mode.ID, Mode: c.Mode, Routing: mode.RoutingAuthorityMode, Rule: c.Rule, Because: because}
	return mode
}

// startSelection begins job j's work item under an adaptive paradigm whose
// mode_selector agent chooses: it takes the ModeState the agent sees and
// sets the select_mode stage.
func (in *Interpreter) startSelection(j int) {
	in.fillWorkItem()
	c := &in.choice
	*c = ModeChoice{Step: in.step, Time: in.eng.Now(), Job: j, Op: in.work.Op, Rule: RuleOfAgent}
	in.modeState(&c.State)
	in.item.mode, in.item.stage = in.adaptive.own, stSelectMode
	in.auth = nil // no mode governs the item yet
}

// commitSelection applies the mode_selector's answer act (an index into
// the offered modes; the audit has replaced an illegal one): the item's
// mode, the choice to record, and the payloads' account of it.
func (in *Interpreter) commitSelection(d *Decision, act int) {
	a := in.adaptive
	mode := a.offered[act]
	c := &in.choice
	c.Mode = mode.ID
	in.item.mode = mode
	in.chosen = true
	in.rememberf(AgentModeSelector, d.Time, c.Job, c.Op, "mode ", mode.ID)
	in.auth = &Authority{Paradigm: a.mode.ID, Mode: mode.ID, Routing: mode.RoutingAuthorityMode, Rule: RuleOfAgent,
		Because: "chosen by " + AgentModeSelector}
}

// modeState fills s for the running work item (fillWorkItem has run).
func (in *Interpreter) modeState(s *ModeState) {
	e := in.eng
	p := e.P
	*s = ModeState{PowerHeadroom: 1, WIP: e.WIP(), Backlog: len(e.Backlog()), Slack: in.work.Slack}
	if capKW := p.CapKW(); capKW > 0 {
		s.PowerHeadroom = 1 - e.PowerKW()/capKW
	}
	if p.Inst.WIPCap > 0 {
		s.WIPLoad = float64(s.WIP) / float64(p.Inst.WIPCap)
	}
	if in.work.BlockedOn != "" {
		s.Reroute = 1
	}
	for c := range p.Cells {
		ci := in.cellInfo(c) // the decision's snapshot, which the plant's view reads next
		s.DownMachines += ci.Down
		s.BlockedJobs += ci.AdmitQueue
		if p.Capable(c, in.item.op) {
			s.CapableCells++
			s.CapableFreeSlots += ci.FreeSlots
			if ci.Down > 0 {
				s.CapableCellsDown++
			}
		}
	}
	from := e.Now() - in.adaptive.window // rejections after it count
	for i := len(in.Messages) - 1; i >= 0; i-- {
		m := &in.Messages[i]
		if m.Time <= from {
			break
		}
		if m.Type == MsgReject && m.Step < in.step {
			s.RecentRejections++
		}
	}
}

// ModeChoice returns, once, an adaptive paradigm's choice of a work
// item's mode that is not yet taken: made by the rules when the last Next
// started the item's routing, or by the mode_selector agent's answer that
// the last Apply committed. The runner asks after each and writes the
// choice to the trace (mode_selected). The value is the interpreter's,
// valid until the next Next.
func (in *Interpreter) ModeChoice() (*ModeChoice, bool) {
	if !in.chosen {
		return nil, false
	}
	in.chosen = false
	return &in.choice, true
}

// selectorView activates the mode_selector for the running work item: the
// plant's observation, the work item, the ModeState, one option per
// offered mode.
func (in *Interpreter) selectorView() {
	s := in.view(AgentModeSelector, RoleSelector, in.item.trigger)
	v := &s.view
	v.Kind = KindSelectMode
	v.Observation.Plant = in.plantObservation()
	v.Context.WorkItem = &in.work
	v.Context.ModeState = &in.choice.State
	for i := range in.adaptive.offered {
		m := &in.adaptive.offered[i]
		v.Options = append(v.Options, Option{Action: ActMode, Mode: &ModeOption{ID: m.ID, RoutingAuthorityMode: m.RoutingAuthorityMode,
			CellContractActions: m.CellContractActions, AreaLocalRerouteEnabled: m.AreaLocalRerouteEnabled,
			PlantRerouteRequired: m.PlantRerouteRequired, MediatedBidRoundEnabled: m.MediatedBidRoundEnabled}})
	}
	in.finishView(v)
}

// selectModeFactors are the decision factors of select_mode.
var selectModeFactors = []string{
	"central routing (the plant picks the cell) is informed and cheap in messages, but one agent decides everything",
	"local modes (areas, cells that bid or reject) recover from refusals and breakdowns near the work, at more decision steps and messages",
	"mode_state gives the figures an adaptive paradigm's rules read: power headroom, load, breakdowns at capable cells, slack, re-routes, recent rejections",
}
