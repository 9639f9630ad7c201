package coord

import "fmt"

// Compressed views (the view_detail switch): under "summary" the
// observation's lists (the plant's areas, an area's cells, a cell's
// machines) are replaced by their totals, so every payload is shorter.
// The context (work item, contract, alarms, recent events, memory) and
// the options (the legal actions and the figures each is chosen by) stay
// whole. docs/paradigms.md, "Communication efficiency", and
// docs/payload.md describe the variant.

// View detail values (AuthorityMode.ViewDetail; "" is DetailFull).
const (
	DetailFull    = "full"
	DetailSummary = "summary"
)

// AreaTotals sums the plant's area summaries (a summary plant view's
// observation.plant.area_totals, in place of areas).
type AreaTotals struct {
	Areas     int     `json:"areas"`
	Cells     int     `json:"cells"`
	Machines  int     `json:"machines"`
	Busy      int     `json:"busy"`
	Down      int     `json:"down"`
	Blocked   int     `json:"blocked"`
	FreeSlots int     `json:"free_slots"`
	Backlog   float64 `json:"backlog"`
}

// CellTotals sums an area's cell summaries (a summary area view's
// observation.area.cell_totals, in place of cells).
type CellTotals struct {
	Cells     int     `json:"cells"`
	Machines  int     `json:"machines"`
	Idle      int     `json:"idle"`
	Busy      int     `json:"busy"`
	Blocked   int     `json:"blocked"`
	Down      int     `json:"down"`
	Waiting   int     `json:"waiting"`
	FreeSlots int     `json:"free_slots"`
	Backlog   float64 `json:"backlog"`
}

// MachineCounts counts a cell's machines by state (a summary cell view's
// observation.cell.machine_states, in place of machines); a state no
// machine is in is left out. What each machine is set up for is not
// shown.
type MachineCounts struct {
	Idle    int `json:"idle,omitempty"`
	Setup   int `json:"setup,omitempty"`
	Busy    int `json:"busy,omitempty"`
	Blocked int `json:"blocked,omitempty"`
	Down    int `json:"down,omitempty"`
}

// Total is the number of machines counted.
func (m MachineCounts) Total() int { return m.Idle + m.Setup + m.Busy + m.Blocked + m.Down }

// CountMachines counts a cell observation's machines by state, from its
// list (a full view) or its machine_states (a summary view).
func (o *CellObservation) CountMachines() MachineCounts {
	if len(o.Machines) == 0 {
		return o.MachineStates
	}
	var n MachineCounts
	for _, m := range o.Machines {
		switch m.State {
		case "idle":
			n.Idle++
		case "setup":
			n.Setup++
		case "busy":
			n.Busy++
		case "blocked":
			n.Blocked++
		case "down":
			n.Down++
		}
	}
	return n
}

// validateViewDetail checks view_detail.
func (m AuthorityMode) validateViewDetail() error {
	switch m.ViewDetail {
	case "", DetailFull, DetailSummary:
		return nil
	}
	return fmt.Errorf("view_detail must be full or summary (got %q)", m.ViewDetail)
}

// summaryViews reports whether the current decision's views are
// summaries: a work item's under the mode that governs it, a release
// decision's under the paradigm's own switches (full under a Go
// ModeSelector, which has none).
func (in *Interpreter) summaryViews() bool {
	if in.item.active {
		return in.item.mode.ViewDetail == DetailSummary
	}
	return in.static.ViewDetail == DetailSummary
}

// compress makes v's observation a summary: each list replaced by its
// totals. The plant's observation is shared (mode rules and selectors
// read it), so a summary plant view gets a copy, in.plantSum.
func (in *Interpreter) compress(v *View) {
	o := &v.Observation
	o.Detail = DetailSummary
	switch {
	case o.Plant != nil:
		s := &in.plantSum
		*s = *o.Plant
		t := AreaTotals{Areas: len(s.Areas)}
		for _, a := range s.Areas {
			t.Cells += a.Cells
			t.Machines += a.Machines
			t.Busy += a.Busy
			t.Down += a.Down
			t.Blocked += a.Blocked
			t.FreeSlots += a.FreeSlots
			t.Backlog += a.Backlog
		}
		t.Backlog = round2(t.Backlog)
		s.Areas, s.AreaTotals = nil, t
		o.Plant = s
	case o.Area != nil:
		a := o.Area
		t := CellTotals{Cells: len(a.Cells)}
		for _, c := range a.Cells {
			t.Machines += c.Machines
			t.Idle += c.Idle
			t.Busy += c.Busy
			t.Blocked += c.Blocked
			t.Down += c.Down
			t.Waiting += c.Waiting
			t.FreeSlots += c.FreeSlots
			t.Backlog += c.Backlog
		}
		t.Backlog = round2(t.Backlog)
		a.Cells, a.CellTotals = a.Cells[:0], t // the list's storage is kept for the next view
	case o.Cell != nil:
		c := o.Cell
		c.MachineStates = c.CountMachines()
		c.Machines = c.Machines[:0]
	}
}
