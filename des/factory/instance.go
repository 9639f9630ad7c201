package factory

// FormatV1 is the format tag every instance file carries.
const FormatV1 = "coordbench-instance/v1"

// Instance is an instance file as written by users: the fixed plant,
// product routes, arrival process, disturbance profile, budgets and seed
// split of one benchmark instance. Field names are the file's keys; see
// docs/instance-format.md. Compile turns it into a Plant the engine runs.
type Instance struct {
	Format      string   `yaml:"format" json:"format"`
	Name        string   `yaml:"name" json:"name"`
	Profile     string   `yaml:"profile,omitempty" json:"profile,omitempty"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
	Sources     []string `yaml:"sources,omitempty" json:"sources,omitempty"`

	// TimeUnitS is the number of seconds in one simulation time unit.
	TimeUnitS float64 `yaml:"time_unit_s" json:"time_unit_s"`
	// Horizon is the time limit: an episode still running then is truncated.
	Horizon float64 `yaml:"horizon" json:"horizon"`

	Power     PowerSpec     `yaml:"power" json:"power"`
	WIPCap    int           `yaml:"wip_cap" json:"wip_cap"`
	Setup     SetupSpec     `yaml:"setup" json:"setup"`
	Transport TransportSpec `yaml:"transport" json:"transport"`

	// CellDefaults fills every field a cell leaves out.
	CellDefaults CellSpec    `yaml:"cell_defaults,omitempty" json:"cell_defaults"`
	Areas        []AreaSpec  `yaml:"areas" json:"areas"`
	Products     []Product   `yaml:"products" json:"products"`
	Arrivals     ArrivalSpec `yaml:"arrivals" json:"arrivals"`

	// DueSlack: due = arrival + slack × total base work (a product may override).
	DueSlack float64 `yaml:"due_slack" json:"due_slack"`
	// ProcessingNoise is the half-width of the multiplicative uniform noise
	// on processing times (0.1 = ±10%), drawn per job and operation.
	ProcessingNoise float64 `yaml:"processing_noise" json:"processing_noise"`

	Limits LimitSpec `yaml:"limits" json:"limits"`
	Seeds  SeedSpec  `yaml:"seeds" json:"seeds"`
}

// PowerSpec holds the plant's power budget and energy accounting figures.
type PowerSpec struct {
	CapKW          float64 `yaml:"cap_kw" json:"cap_kw"`
	CarbonKgPerKWh float64 `yaml:"carbon_kg_per_kwh" json:"carbon_kg_per_kwh"`
	// TransportKW is drawn by each job while it is being moved.
	TransportKW float64 `yaml:"transport_kw" json:"transport_kw"`
}

// SetupSpec holds sequence-dependent setup times by product family.
type SetupSpec struct {
	// Initial applies to a machine that has not processed any family yet.
	Initial float64 `yaml:"initial" json:"initial"`
	// Change applies between two different families unless Matrix says otherwise.
	Change float64 `yaml:"change" json:"change"`
	// Matrix overrides Change: Matrix[from][to].
	Matrix map[string]map[string]float64 `yaml:"matrix,omitempty" json:"matrix,omitempty"`
}

// TransportSpec holds transport times between cells and from the dock.
type TransportSpec struct {
	// IntraArea is the time between two cells of one area.
	IntraArea float64 `yaml:"intra_area" json:"intra_area"`
	// InterArea is the default time between cells of different areas.
	InterArea float64 `yaml:"inter_area" json:"inter_area"`
	// InterMatrix overrides InterArea: InterMatrix[fromArea][toArea].
	InterMatrix map[string]map[string]float64 `yaml:"inter_matrix,omitempty" json:"inter_matrix,omitempty"`
	// Dock is the default time from the plant dock (where released jobs
	// wait) to any cell; DockMatrix overrides it per area.
	Dock       float64            `yaml:"dock" json:"dock"`
	DockMatrix map[string]float64 `yaml:"dock_matrix,omitempty" json:"dock_matrix,omitempty"`
}

// AreaSpec is one area and its cells.
type AreaSpec struct {
	ID    string     `yaml:"id" json:"id"`
	Cells []CellSpec `yaml:"cells" json:"cells"`
}

// CellSpec is one cell: identical parallel machines behind one finite
// inbound buffer. Zero values are filled from cell_defaults.
type CellSpec struct {
	ID       string `yaml:"id,omitempty" json:"id,omitempty"`
	Machines int    `yaml:"machines,omitempty" json:"machines"`
	// Buffer is the inbound capacity: jobs admitted (in transport to the
	// cell, or waiting in it) that have not started on a machine.
	Buffer int `yaml:"buffer,omitempty" json:"buffer"`
	// Dispatch is the local rule: fifo (default), spt or family.
	Dispatch string `yaml:"dispatch,omitempty" json:"dispatch"`
	// Capabilities maps an operation type to its processing-time factor.
	Capabilities map[string]float64 `yaml:"capabilities,omitempty" json:"capabilities"`
	PowerKW      *MachinePower      `yaml:"power_kw,omitempty" json:"power_kw"`
	// MTBF and MTTR are per machine means (exponential); MTBF 0 = no breakdowns.
	MTBF *float64 `yaml:"mtbf,omitempty" json:"mtbf"`
	MTTR *float64 `yaml:"mttr,omitempty" json:"mttr"`
}

// MachinePower is a machine's draw in each state, in kW.
type MachinePower struct {
	Idle    float64 `yaml:"idle" json:"idle"`
	Setup   float64 `yaml:"setup" json:"setup"`
	Busy    float64 `yaml:"busy" json:"busy"`
	Blocked float64 `yaml:"blocked" json:"blocked"`
	Down    float64 `yaml:"down" json:"down"`
}

// Product is a product type: a family and an ordered route.
type Product struct {
	ID     string `yaml:"id" json:"id"`
	Family string `yaml:"family" json:"family"`
	// Slack overrides the instance's due_slack when positive.
	Slack  float64     `yaml:"slack,omitempty" json:"slack,omitempty"`
	Weight float64     `yaml:"weight,omitempty" json:"weight,omitempty"`
	Route  []Operation `yaml:"route" json:"route"`
}

// Operation is one step of a route: an operation type and its base time.
type Operation struct {
	Op   string  `yaml:"op" json:"op"`
	Time float64 `yaml:"time" json:"time"`
}

// ArrivalSpec is the arrival process: either a seeded Poisson stream of
// Jobs jobs (Initial of them at time 0) with a product mix, or an explicit
// order book.
type ArrivalSpec struct {
	Jobs             int                `yaml:"jobs,omitempty" json:"jobs,omitempty"`
	Initial          int                `yaml:"initial,omitempty" json:"initial,omitempty"`
	MeanInterarrival float64            `yaml:"mean_interarrival,omitempty" json:"mean_interarrival,omitempty"`
	Mix              map[string]float64 `yaml:"mix,omitempty" json:"mix,omitempty"`
	Orders           []Order            `yaml:"orders,omitempty" json:"orders,omitempty"`
}

// Order is one entry of an explicit order book.
type Order struct {
	Product string  `yaml:"product" json:"product"`
	Arrival float64 `yaml:"arrival" json:"arrival"`
	// Due is absolute; 0 means arrival + slack × work.
	Due    float64 `yaml:"due,omitempty" json:"due,omitempty"`
	Weight float64 `yaml:"weight,omitempty" json:"weight,omitempty"`
}

// LimitSpec bounds an episode.
type LimitSpec struct {
	// NoProgressSteps: truncate after this many consecutive decision steps
	// without physical progress.
	NoProgressSteps int `yaml:"no_progress_steps" json:"no_progress_steps"`
	// MaxDecisions: truncate after this many decision steps.
	MaxDecisions int `yaml:"max_decisions" json:"max_decisions"`
}

// SeedSpec is the instance's fixed seed split.
type SeedSpec struct {
	Test []uint64 `yaml:"test" json:"test"`
	Dev  []uint64 `yaml:"dev" json:"dev"`
}
