package coord

import "github.com/coordbench/coordbench/des/factory"

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
	var ci factory.CellInfo
	for c := range p.Cells {
		e.CellInto(c, &ci)
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

// ModeChoice returns the choice of an adaptive paradigm's rules for the
// work item whose routing the last Next started, if it started one under
// an adaptive paradigm. The value is the interpreter's, valid until the
// next Next: the runner writes it to the trace (mode_selected).
func (in *Interpreter) ModeChoice() (*ModeChoice, bool) {
	if !in.chosen {
		return nil, false
	}
	return &in.choice, true
}
