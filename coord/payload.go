package coord

// PayloadVersion tags the public decision payload's schema
// (docs/payload.md). It changes whenever a field changes meaning.
const PayloadVersion = "coordbench-payload/v1"

// Roles of the Plant → Area → Cell hierarchy.
const (
	RolePlant = "plant"
	RoleArea  = "area"
	RoleCell  = "cell"
)

// Decision kinds.
const (
	KindRelease    = "release"
	KindSelectCell = "select_cell"
)

// Decision is one decision step: the active agents and their local views.
// A controller returns one legal action index per active agent.
type Decision struct {
	Version      string           `json:"version"`
	Step         int              `json:"step"`
	Time         float64          `json:"time"`
	ActiveAgents map[string]*View `json:"active_agents"`
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

// Observation is an agent's local view of the plant. The plant sees
// plant-level figures and area summaries.
type Observation struct {
	PowerKW    float64       `json:"power_kw"`
	CapKW      float64       `json:"power_cap_kw"`
	HeadroomKW float64       `json:"power_headroom_kw"`
	WIP        int           `json:"wip"`
	WIPCap     int           `json:"wip_cap"`
	Backlog    int           `json:"backlog"`
	Completed  int           `json:"completed"`
	Jobs       int           `json:"jobs"`
	InTransit  int           `json:"in_transit"`
	Areas      []AreaSummary `json:"areas,omitempty"`
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

// Context is the protocol context of a decision.
type Context struct {
	WorkItem     *WorkItem `json:"work_item,omitempty"`
	RecentEvents []string  `json:"recent_events"`
	Feedback     string    `json:"feedback,omitempty"`
	Memory       []string  `json:"working_memory"`
}

// WorkItem is a job's operation being decided on.
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
}

// Option summarizes one candidate action: a job for release options, a
// cell for routing options, neither for defer.
type Option struct {
	Index  int         `json:"index"`
	Action string      `json:"action"` // release, defer, assign
	Job    *JobOption  `json:"job,omitempty"`
	Cell   *CellOption `json:"cell,omitempty"`
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

// CellOption describes a candidate cell for the work item.
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
}
