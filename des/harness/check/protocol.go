package check

import "fmt"

// The decision-against-trace check: the committed decisions of every
// paradigm, followed through its protocol, give the releases and
// placements the trace must show, one to one, in order and at the same
// time. A release option chosen is a release record; a cell chosen by a
// select_cell, award or reroute decision is a route_assigned record when
// the governing mode's cells accept what they are given (accept_only), and
// an offer that cell must answer with its own commit decision when they
// may reject (accept_reject): the accept is the placement, the reject is
// none. A plant_fallback that commits a cell is a placement. Along the
// way the agents must be the ones the protocol names: the area a
// select_area allocated makes the item's next select_cell, and only the
// cell an item was offered to commits on it, once.

// acceptReject are the built-in modes whose cells may reject
// (cell_contract_actions accept_reject).
var acceptReject = map[string]bool{"centralized": false, "hierarchical": false, "heterarchical_cnp": true, "holonic_hybrid": true}

// contractModes gives, for every mode that may govern an item of the run
// (the paradigm, its adaptive modes, the built-in ones), whether its cells
// may reject.
func contractModes(man *manifestFile) map[string]bool {
	m := map[string]bool{}
	for id, r := range acceptReject {
		m[id] = r
	}
	set := func(id, contract string) {
		if _, builtin := m[id]; contract != "" || !builtin { // a built-in mode keeps its switches where a file omits them
			m[id] = contract == "accept_reject"
		}
	}
	if a := man.Paradigm.Adaptive; a != nil {
		for _, md := range a.Modes {
			set(md.ID, md.Contract)
		}
	}
	set(man.Paradigm.ID, man.Paradigm.Contract)
	return m
}

// offer is a cell chosen for an item, awaiting the cell's commit.
type offer struct {
	cell string
	line int
}

// crossCheck follows audits through the protocol of the modes that govern
// them (own: the paradigm's mode id, governing unless a payload's
// authority names another) and matches the releases and placements with
// the trace's commits.
//
// An escalation must have been offered: localRoom (the checker's
// localRoom) names a cell of the area that could have taken the item just
// before the k-th commit, the state of a decision that follows k commits.
func crossCheck(audits []auditLine, commits []commit, own string, rejects map[string]bool,
	localRoom func(k, job, op int, area string, rejected []string) string, add func(check, format string, args ...any)) {
	var want []commit
	offers := map[itemKey]offer{}
	areas := map[itemKey]string{}
	rejected := map[itemKey][]string{} // the cells that rejected an item since it was last placed
	for i := range audits {
		a, line := &audits[i], i+1
		opt := a.chosen()
		if opt == nil || a.Time == nil {
			return // already reported
		}
		unmatched := func() {
			add(ckDecisions, "decisions.jsonl:%d: %s decision with option %q cannot be matched with the trace", line, a.Kind, opt.Action)
		}
		cm := commit{line: line, t: *a.Time, kind: "select_cell", op: -1}
		switch a.Kind {
		case "release":
			switch {
			case opt.Action == "release" && opt.Job != nil:
				cm.kind, cm.job, cm.op = "release", opt.Job.Job, 0
				want = append(want, cm)
			case opt.Action != "defer":
				unmatched()
				return
			}
			continue
		case "bid", "select_mode":
			continue // no placement: the award, or the mode's own decisions, follow
		}
		w := a.Payload.Context.WorkItem
		if w == nil {
			add(ckDecisions, "decisions.jsonl:%d: a %s decision names no work item", line, a.Kind)
			return
		}
		k := itemKey{w.Job, w.Op}
		cm.job, cm.op = w.Job, w.Op
		mode := own
		if au := a.Payload.Context.Authority; au != nil {
			mode = au.Mode // the mode-rule check holds it to the trace's mode_selected
		}
		mayReject, known := rejects[mode]
		if !known {
			add(ckDecisions, "decisions.jsonl:%d: the payload names mode %q, which the manifest does not define", line, mode)
			return
		}
		placed := ""
		switch {
		case a.Kind == "select_area" && opt.Action == "allocate" && opt.Area != nil:
			areas[k] = opt.Area.Area
		case (a.Kind == "select_cell" || a.Kind == "reroute") && opt.Action == "escalate":
			if cell := localRoom(len(want), w.Job, w.Op, a.AgentID, rejected[k]); cell != "" {
				add(ckDecisions, "decisions.jsonl:%d: %s escalated job %d op %d while its cell %s had a free slot and a machine up: escalate is offered only when local recovery is exhausted",
					line, a.AgentID, w.Job, w.Op, cell)
			}
		case (a.Kind == "select_cell" || a.Kind == "award" || a.Kind == "reroute") && opt.Action == "assign" && opt.Cell != nil:
			if area, ok := areas[k]; ok && a.Kind == "select_cell" && a.Role == "area" && a.AgentID != "area:"+area {
				add(ckDecisions, "decisions.jsonl:%d: %s chose a cell for job %d op %d, which the plant allocated to area %s", line, a.AgentID, w.Job, w.Op, area)
			}
			if !mayReject {
				placed = opt.Cell.Cell
				break
			}
			if o, open := offers[k]; open {
				add(ckDecisions, "decisions.jsonl:%d: job %d op %d is offered to %s while its offer to %s (line %d) has no commit", line, w.Job, w.Op, opt.Cell.Cell, o.cell, o.line)
			}
			offers[k] = offer{cell: opt.Cell.Cell, line: line}
		case a.Kind == "commit" && (opt.Action == "accept" || opt.Action == "reject"):
			o, open := offers[k]
			delete(offers, k)
			if !open || a.AgentID != "cell:"+o.cell {
				to := "no cell"
				if open {
					to = fmt.Sprintf("%s (line %d)", o.cell, o.line)
				}
				add(ckDecisions, "decisions.jsonl:%d: %s commits on job %d op %d, which was offered to %s", line, a.AgentID, w.Job, w.Op, to)
				return
			}
			if opt.Action == "accept" {
				placed = o.cell
			} else {
				rejected[k] = append(rejected[k], o.cell)
			}
		case a.Kind == "plant_fallback" && opt.Cell != nil:
			if o, open := offers[k]; open {
				add(ckDecisions, "decisions.jsonl:%d: the plant places job %d op %d while its offer to %s (line %d) has no commit", line, w.Job, w.Op, o.cell, o.line)
				delete(offers, k)
			}
			placed = opt.Cell.Cell
		default:
			unmatched()
			return
		}
		if placed != "" {
			delete(rejected, k)
			cm.cell = placed
			want = append(want, cm)
		}
	}
	for i := 0; i < len(want) && i < len(commits); i++ {
		w, g := want[i], commits[i]
		if w.kind != g.kind || w.job != g.job || w.op != g.op || w.cell != g.cell || w.t != g.t {
			add(ckDecisions, "decisions.jsonl:%d (%s job %d op %d %s at t=%v) does not match trace.jsonl:%d (%s job %d op %d %s at t=%v)",
				w.line, w.kind, w.job, w.op, w.cell, w.t, g.line, g.kind, g.job, g.op, g.cell, g.t)
			return
		}
	}
	if len(want) != len(commits) {
		add(ckDecisions, "decisions.jsonl commits %d releases and placements, the trace shows %d", len(want), len(commits))
	}
}
