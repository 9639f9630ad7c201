package coord

import (
	"iter"
	"strconv"
)

// PayloadVersion tags the public decision payload's schema
// (docs/payload.md, docs/payload.schema.json). It changes whenever a field
// changes meaning.
const PayloadVersion = "coordbench-payload/v2"

// Roles of the Plant → Area → Cell hierarchy.
const (
	RolePlant = "plant"
	RoleArea  = "area"
	RoleCell  = "cell"
	// RoleSelector is the mode_selector agent's role: under an adaptive
	// paradigm with selector agent it chooses each work item's mode.
	RoleSelector = "selector"
	// AgentModeSelector is its agent id.
	AgentModeSelector = "mode_selector"
)

// Decision kinds.
const (
	KindRelease    = "release"     // plant: release a backlog job or defer
	KindSelectArea = "select_area" // plant: pick the area of a work item
	KindSelectCell = "select_cell" // plant (centralized) or area: pick a cell
	KindBid        = "bid"         // cell: bid a value class or decline
	KindAward      = "award"       // plant or area: award among the bids
	KindCommit     = "commit"      // cell: accept or reject a contract
	KindReroute    = "reroute"     // area: after a rejection, try a sibling or escalate
	// KindPlantFallback: the protocol ran out of options for a work item;
	// the plant places it on any capable cell, or declines and leaves it
	// to the contract-safe fallback (an audited harness decision, G_fb).
	KindPlantFallback = "plant_fallback"
	// KindSelectMode: the mode_selector chooses the authority mode of a
	// work item whose routing starts (adaptive paradigms, selector agent).
	KindSelectMode = "select_mode"
)

// Option actions.
const (
	ActRelease  = "release"
	ActDefer    = "defer"
	ActAllocate = "allocate" // select_area: give the item to this area
	ActAssign   = "assign"   // select_cell, award, reroute: give it to this cell
	ActBid      = "bid"
	ActDecline  = "decline"
	ActAccept   = "accept"
	ActReject   = "reject"
	ActEscalate = "escalate" // area: hand the item back to the plant
	ActMode     = "mode"     // select_mode: route the item under this mode
)

// bidClasses are the bid value classes a cell may offer, strongest first.
var bidClasses = []string{"high", "medium", "low"}

// Decision is one decision step: the active agents and their local views.
// A controller returns one legal action index per active agent.
type Decision struct {
	Version      string           `json:"version"`
	Step         int              `json:"step"`
	Time         float64          `json:"time"`
	ActiveAgents map[string]*View `json:"active_agents"`

	answer map[string]int // Answer's map, reused from step to step
	agents []*View        // the interpreter's list of ActiveAgents' views (see Agents)
}

// Agents iterates over the active agents, their ids and views: the
// entries of ActiveAgents. For a decision the interpreter made, they come
// in activation order from its list, checked against the map (a lookup
// per agent is cheaper than starting a walk of the map); for any other
// decision, or one whose map was changed, in the map's order.
func (d *Decision) Agents() iter.Seq2[string, *View] {
	return func(yield func(string, *View) bool) {
		if d.listed() {
			for _, v := range d.agents {
				if !yield(v.AgentID, v) {
					return
				}
			}
			return
		}
		for id, v := range d.ActiveAgents {
			if !yield(id, v) {
				return
			}
		}
	}
}

// listed reports whether d.agents lists exactly the views of
// d.ActiveAgents, each under its own AgentID.
func (d *Decision) listed() bool {
	if d.agents == nil || len(d.agents) != len(d.ActiveAgents) {
		return false
	}
	for _, v := range d.agents {
		if d.ActiveAgents[v.AgentID] != v {
			return false
		}
	}
	return true
}

// Answer returns an empty map for a controller's answer to d (one action
// index per agent id). The map belongs to d: the interpreter reuses its
// decision, so the next Answer on it clears the map again. A controller
// that returns the map must not keep it once Act has returned; the
// interpreter reads it only during ApplyNotes.
func (d *Decision) Answer() map[string]int {
	if d.answer == nil {
		d.answer = make(map[string]int, len(d.ActiveAgents))
	}
	clear(d.answer)
	return d.answer
}

// View is what one active agent sees and may do.
type View struct {
	AgentID         string      `json:"agent_id"`
	Role            string      `json:"role"`
	Kind            string      `json:"kind"`
	Observation     Observation `json:"observation"`
	Context         Context     `json:"context"`
	LegalActions    []int       `json:"legal_actions"`
	Options         []Option    `json:"options"`
	DecisionFactors []string    `json:"decision_factors"`
	ActionMask      []bool      `json:"action_mask"`
}

// Observation is an agent's local view. Every role sees the plant's power
// headroom (the shared budget); beyond that, exactly one of Plant, Area,
// Cell is set, by role.
type Observation struct {
	// Detail is "summary" when the observation's lists are replaced by
	// their totals (view_detail summary, compress.go); absent otherwise.
	Detail     string            `json:"detail,omitempty"`
	HeadroomKW float64           `json:"power_headroom_kw"`
	Plant      *PlantObservation `json:"plant,omitempty"`
	Area       *AreaObservation  `json:"area,omitempty"`
	Cell       *CellObservation  `json:"cell,omitempty"`
}

// PlantObservation: plant-level figures and one summary per area.
type PlantObservation struct {
	PowerKW   float64       `json:"power_kw"`
	CapKW     float64       `json:"power_cap_kw"`
	WIP       int           `json:"wip"`
	WIPCap    int           `json:"wip_cap"`
	Backlog   int           `json:"backlog"`
	Completed int           `json:"completed"`
	Jobs      int           `json:"jobs"`
	InTransit int           `json:"in_transit"`
	Areas     []AreaSummary `json:"areas,omitempty"` // never empty in a full view
	// AreaTotals replaces Areas in a summary view.
	AreaTotals AreaTotals `json:"area_totals,omitzero"`
}

// AreaSummary is the plant's aggregate view of one area.
type AreaSummary struct {
	Area      string  `json:"area"`
	Cells     int     `json:"cells"`
	Machines  int     `json:"machines"`
	Busy      int     `json:"busy"`
	Down      int     `json:"down"`
	Blocked   int     `json:"blocked"`
	FreeSlots int     `json:"free_slots"`
	Backlog   float64 `json:"backlog"`
	PowerKW   float64 `json:"power_kw"`
}

// AreaObservation: an area's own cells.
type AreaObservation struct {
	Area    string        `json:"area"`
	PowerKW float64       `json:"power_kw"`
	Cells   []CellSummary `json:"cells,omitempty"` // never empty in a full view
	// CellTotals replaces Cells in a summary view.
	CellTotals CellTotals `json:"cell_totals,omitzero"`
}

// CellSummary is an area's view of one of its cells.
type CellSummary struct {
	Cell      string  `json:"cell"`
	Machines  int     `json:"machines"`
	Idle      int     `json:"idle"`
	Busy      int     `json:"busy"`
	Blocked   int     `json:"blocked"`
	Down      int     `json:"down"`
	Waiting   int     `json:"waiting"`
	FreeSlots int     `json:"free_slots"`
	Backlog   float64 `json:"backlog"`
	PowerKW   float64 `json:"power_kw"`
}

// CellObservation: a cell's own machines, queue and buffer.
type CellObservation struct {
	Cell     string         `json:"cell"`
	Area     string         `json:"area"`
	Machines []MachineState `json:"machines,omitempty"` // never empty in a full view
	// MachineStates replaces Machines in a summary view.
	MachineStates MachineCounts `json:"machine_states,omitzero"`
	Waiting       int           `json:"waiting"`
	Incoming      int           `json:"incoming"`
	Buffer        int           `json:"buffer"`
	FreeSlots     int           `json:"free_slots"`
	AdmitQueue    int           `json:"blocked_for_admission"`
	Backlog       float64       `json:"backlog"`
	PowerKW       float64       `json:"power_kw"`
}

// MachineState is one machine as its cell sees it.
type MachineState struct {
	State  string `json:"state"`
	Family string `json:"family,omitempty"`
}

// Context is the protocol context of a decision.
type Context struct {
	// Trigger says why the agent is active: the realized event or
	// protocol object behind the activation.
	Trigger  string    `json:"trigger"`
	WorkItem *WorkItem `json:"work_item,omitempty"`
	// Authority, under an adaptive paradigm only, says which mode governs
	// the work item and why (the rule the harness applied).
	Authority *Authority `json:"authority,omitempty"`
	// ModeState, in select_mode views only, is the state an adaptive
	// paradigm's rules would read (the trace's mode_selected state).
	ModeState    *ModeState `json:"mode_state,omitempty"`
	Contract     *Contract  `json:"contract,omitempty"`
	Alarms       []string   `json:"alarms,omitempty"`
	RecentEvents []string   `json:"recent_events"`
	Feedback     string     `json:"feedback,omitempty"`
	Memory       []string   `json:"working_memory"`
}

// WorkItem is a job's operation being routed.
type WorkItem struct {
	Job     int     `json:"job"`
	Op      int     `json:"op"`
	Ops     int     `json:"ops"`
	OpType  string  `json:"op_type"`
	Product string  `json:"product"`
	Family  string  `json:"family"`
	Base    float64 `json:"base_time"`
	Due     float64 `json:"due"`
	Slack   float64 `json:"slack"` // due − now − base work left
	At      string  `json:"at"`    // cell holding the job, or "dock"
	// BlockedOn is the cell the item waits at and left when it was offered
	// to routing again (a re-route; "" otherwise): the full cell it was
	// blocked on, or the broken cell in whose buffer it waited.
	BlockedOn string `json:"blocked_on,omitempty"`
}

// Contract is the protocol object a cell or area answers: who offers the
// item, in which round, what the cell would need, and what failed before.
type Contract struct {
	From          string   `json:"from"`
	Round         int      `json:"round"`
	ProcTime      float64  `json:"proc_time,omitempty"`
	TransportTime float64  `json:"transport_time,omitempty"`
	Rejected      []string `json:"rejected,omitempty"` // cells that refused the item so far
	Escalated     []string `json:"escalated,omitempty"`
	// Invitation, in bid views under bid_invitations only, is the round's
	// cut: which candidate cells were invited and which passed over, by
	// which figures (activation.go).
	Invitation *Invitation `json:"invitation,omitempty"`
}

// Option summarizes one candidate action: a job for release options, a
// cell for assign options, an area for allocate options, a bid class for
// bid options; none for defer, decline, accept, reject, escalate.
type Option struct {
	Index  int         `json:"index"`
	Action string      `json:"action"`
	Job    *JobOption  `json:"job,omitempty"`
	Cell   *CellOption `json:"cell,omitempty"`
	Area   *AreaOption `json:"area,omitempty"`
	Bid    string      `json:"bid,omitempty"`
	Mode   *ModeOption `json:"mode,omitempty"`
}

// ModeOption is an authority mode the mode_selector may choose: its id and
// switches.
type ModeOption struct {
	ID                      string `json:"mode_id"`
	RoutingAuthorityMode    string `json:"routing_authority_mode"`
	CellContractActions     string `json:"cell_contract_actions"`
	AreaLocalRerouteEnabled bool   `json:"area_local_reroute_enabled"`
	PlantRerouteRequired    bool   `json:"plant_reroute_required"`
	MediatedBidRoundEnabled bool   `json:"mediated_bid_round_enabled"`
}

// Target names what the option is about: the job number, the area or cell
// id, or the bid class ("" for defer, decline, accept, reject, escalate).
func (o Option) Target() string {
	switch {
	case o.Job != nil:
		return strconv.Itoa(o.Job.Job)
	case o.Area != nil:
		return o.Area.Area
	case o.Cell != nil:
		return o.Cell.Cell
	case o.Mode != nil:
		return o.Mode.ID
	}
	return o.Bid
}

// JobOption describes a job in the order backlog.
type JobOption struct {
	Job     int     `json:"job"`
	Product string  `json:"product"`
	Family  string  `json:"family"`
	Arrival float64 `json:"arrival"`
	Due     float64 `json:"due"`
	Work    float64 `json:"work"`
}

// CellOption describes a candidate cell for the work item. Bid is the
// cell's bid class in award options.
type CellOption struct {
	Cell          string  `json:"cell"`
	Area          string  `json:"area"`
	Machines      int     `json:"machines"`
	ProcTime      float64 `json:"proc_time"`
	TransportTime float64 `json:"transport_time"`
	FreeSlots     int     `json:"free_slots"`
	Backlog       float64 `json:"backlog"`
	Idle          int     `json:"idle"`
	Down          int     `json:"down"`
	BusyKW        float64 `json:"busy_kw"`
	Bid           string  `json:"bid,omitempty"`

	index int // the cell's index, when the interpreter made the option (see Interpreter.cellOf)
}

// AreaOption describes a candidate area: aggregates over its cells that
// can do the work item.
type AreaOption struct {
	Area          string  `json:"area"`
	CapableCells  int     `json:"capable_cells"`
	Machines      int     `json:"machines"`
	FreeSlots     int     `json:"free_slots"`
	Backlog       float64 `json:"backlog"`
	MinProcTime   float64 `json:"min_proc_time"`
	TransportTime float64 `json:"transport_time"`
	Down          int     `json:"down"`
}
