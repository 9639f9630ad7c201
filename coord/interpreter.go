package coord

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/factory"
)

// Bounds of what a payload carries.
const (
	MaxReleaseOptions = 8 // backlog jobs offered per release decision
	RecentEvents      = 8 // event types in context.recent_events
	MemorySize        = 6 // entries of bounded working memory per agent
)

// Source says who produced a committed action (decisions.jsonl "source").
type Source string

// Decision sources, as audited in G_fb and G_llm.
const (
	SourceBuiltin  Source = "builtin"
	SourceLLM      Source = "llm"
	SourceExternal Source = "external"
	SourceFallback Source = "fallback"
)

// Audit is one committed decision of one agent, as logged in decisions.jsonl.
type Audit struct {
	Step      int     `json:"step"`
	Time      float64 `json:"time"`
	AgentID   string  `json:"agent_id"`
	Role      string  `json:"role"`
	Kind      string  `json:"kind"`
	Action    int     `json:"action"`
	Source    Source  `json:"source"`
	Requested *int    `json:"requested,omitempty"` // what the controller asked for, when it was replaced
	Reason    string  `json:"reason,omitempty"`    // why a fallback was used
	Messages  int     `json:"messages"`            // protocol messages this decision caused
	Payload   *View   `json:"payload"`
}

// Message is one protocol-level coordination message.
type Message struct {
	Step     int     `json:"step"`
	Time     float64 `json:"time"`
	Type     string  `json:"type"`
	Sender   string  `json:"sender"`
	Receiver string  `json:"receiver"`
	Job      int     `json:"job"`
}

// Interpreter is I + Γ for one episode: it builds decisions from the
// engine's decision points under an authority mode and commits actions.
// It also listens to the engine's realized events (it is a
// factory.Tracer) to fill the payload's recent events.
type Interpreter struct {
	eng  *factory.Engine
	mode AuthorityMode

	step     int
	recent   [RecentEvents]factory.EventType
	nRecent  int
	memory   map[string][]string
	feedback map[string]string
	cells    []factory.CellInfo // per-decision snapshot of every cell
	// cellAgents are the cells' agent ids ("cell:C01"), by cell index.
	cellAgents []string
	cellIndex  map[string]int

	// Reused payload storage (see Next).
	decision Decision
	views    map[string]*View
	item     WorkItem
	jobOpts  []JobOption
	cellOpts []CellOption

	// Messages is every protocol message so far (G_cm = len).
	Messages []Message
}

// NewInterpreter binds an interpreter to an engine and a paradigm.
func NewInterpreter(eng *factory.Engine, mode AuthorityMode) (*Interpreter, error) {
	if err := mode.Validate(); err != nil {
		return nil, err
	}
	in := &Interpreter{eng: eng, mode: mode, memory: map[string][]string{}, feedback: map[string]string{},
		cellIndex: map[string]int{}, views: map[string]*View{}}
	for c, cell := range eng.P.Cells {
		in.cellAgents = append(in.cellAgents, RoleCell+":"+cell.ID)
		in.cellIndex[cell.ID] = c
	}
	return in, nil
}

// Emit records a realized event type (factory.Tracer).
func (in *Interpreter) Emit(r *factory.Record) {
	if r.Ev == factory.EvPowerChange || r.Ev == factory.EvEpisodeStart {
		return
	}
	in.recent[in.nRecent%RecentEvents] = r.Ev
	in.nRecent++
}

// Steps is the number of decision steps executed so far (G_ds).
func (in *Interpreter) Steps() int { return in.step }

// Next builds the decision the engine waits for, or returns nil if none
// is pending. Work items awaiting a cell go first (oldest first), then the
// release opportunity.
//
// The decision, its views and everything they point to belong to the
// interpreter and are reused by the next call to Next: a controller or
// logger that keeps any of it past Apply must copy it (encoding it to JSON,
// as the runner does, is a copy).
func (in *Interpreter) Next() *Decision {
	e := in.eng
	if !(len(e.RouteQueue()) > 0 || e.ReleasePending()) {
		return nil
	}
	in.cells = in.cells[:0]
	for c := range e.P.Cells {
		in.cells = append(in.cells, e.Cell(c))
	}
	v := in.view(RolePlant, RolePlant)
	if len(e.RouteQueue()) > 0 {
		in.selectCellView(v, e.RouteQueue()[0])
	} else {
		in.releaseView(v)
	}
	in.plantObservation(&v.Observation)
	for i := range v.Options {
		v.Options[i].Index = i
		v.LegalActions = append(v.LegalActions, i)
		v.ActionMask = append(v.ActionMask, true)
	}
	d := &in.decision
	*d = Decision{Version: PayloadVersion, Step: in.step, Time: e.Now(), ActiveAgents: d.ActiveAgents}
	if d.ActiveAgents == nil {
		d.ActiveAgents = map[string]*View{}
	}
	clear(d.ActiveAgents)
	d.ActiveAgents[v.AgentID] = v
	return d
}

// view returns the agent's reusable view, reset, with its protocol
// context (recent events, working memory, feedback) filled in.
func (in *Interpreter) view(id, role string) *View {
	v := in.views[id]
	if v == nil {
		v = &View{}
		in.views[id] = v
	}
	*v = View{
		AgentID: id, Role: role,
		Observation:  Observation{Areas: v.Observation.Areas[:0]},
		Context:      Context{RecentEvents: v.Context.RecentEvents[:0], Memory: append(v.Context.Memory[:0], in.memory[id]...), Feedback: in.feedback[id]},
		Options:      v.Options[:0],
		LegalActions: v.LegalActions[:0],
		ActionMask:   v.ActionMask[:0],
	}
	n := min(in.nRecent, RecentEvents)
	for i := in.nRecent - n; i < in.nRecent; i++ {
		v.Context.RecentEvents = append(v.Context.RecentEvents, in.recent[i%RecentEvents].String())
	}
	return v
}

func (in *Interpreter) plantObservation(o *Observation) {
	e := in.eng
	p := e.P
	*o = Observation{PowerKW: e.PowerKW(), CapKW: p.CapKW(), WIP: e.WIP(), WIPCap: p.Inst.WIPCap,
		Backlog: len(e.Backlog()), Completed: e.Completed(), Jobs: e.NumJobs(), InTransit: e.InTransit(),
		Areas: o.Areas[:0]}
	o.HeadroomKW = round2(o.CapKW - o.PowerKW)
	for _, area := range p.Areas {
		s := AreaSummary{Area: area.ID, Cells: len(area.Cells)}
		var w int64
		for _, c := range area.Cells {
			ci := &in.cells[c]
			s.Machines += p.Cells[c].Machines
			s.Busy += ci.Busy + ci.Setup
			s.Down += ci.Down
			s.Blocked += ci.Blocked
			s.FreeSlots += ci.FreeSlots
			s.Backlog += ci.Backlog
			w += ci.PowerW
		}
		s.Backlog = round2(s.Backlog)
		s.PowerKW = float64(w) / 1000
		o.Areas = append(o.Areas, s)
	}
}

func (in *Interpreter) releaseView(v *View) {
	e := in.eng
	v.Kind, v.DecisionFactors = KindRelease, releaseFactors
	n := min(len(e.Backlog()), MaxReleaseOptions)
	in.jobOpts = slices.Grow(in.jobOpts[:0], n)
	for _, j := range e.Backlog()[:n] {
		info := e.Job(j)
		in.jobOpts = append(in.jobOpts, JobOption{Job: j, Product: info.Product, Family: info.Family,
			Arrival: round2(info.Arrival), Due: round2(info.Due), Work: info.Work})
		v.Options = append(v.Options, Option{Action: "release", Job: &in.jobOpts[len(in.jobOpts)-1]})
	}
	if e.CanDefer() {
		v.Options = append(v.Options, Option{Action: "defer"})
	}
}

func (in *Interpreter) selectCellView(v *View, j int) {
	e := in.eng
	p := e.P
	info := e.Job(j)
	opType, base, _ := e.CurrentOp(j)
	at := "dock"
	if info.At >= 0 {
		at = p.Cells[info.At].ID
	}
	v.Kind, v.DecisionFactors = KindSelectCell, selectCellFactors
	in.item = WorkItem{Job: j, Op: info.Op, Ops: info.Ops, OpType: info.OpType, Product: info.Product,
		Family: info.Family, Base: base, Due: round2(info.Due), Slack: round2(info.Due - e.Now() - info.Work), At: at}
	v.Context.WorkItem = &in.item
	in.cellOpts = slices.Grow(in.cellOpts[:0], len(p.Cells))
	for c := range p.Cells {
		if !p.Capable(c, opType) {
			continue
		}
		ci := &in.cells[c]
		in.cellOpts = append(in.cellOpts, CellOption{
			Cell: p.Cells[c].ID, Area: p.Areas[p.Cells[c].Area].ID, Machines: p.Cells[c].Machines,
			ProcTime: round2(p.ProcTime(c, opType, base)), TransportTime: p.TransportTime(info.At, c),
			FreeSlots: ci.FreeSlots, Backlog: round2(ci.Backlog), Idle: ci.Idle, Down: ci.Down,
			BusyKW: float64(p.Cells[c].PowerW[factory.Busy]) / 1000,
		})
		v.Options = append(v.Options, Option{Action: "assign", Cell: &in.cellOpts[len(in.cellOpts)-1]})
	}
}

var (
	releaseFactors = []string{
		"release the most urgent job (earliest due date) when WIP and power allow",
		"defer under power pressure or when the plant is congested; deferring costs time",
	}
	selectCellFactors = []string{
		"shorter proc_time and transport_time finish the work item sooner",
		"free_slots 0 means the job will block and hold its current machine",
		"high backlog means waiting; busy_kw adds to plant power when the cell works",
	}
)

// Apply validates the controller's actions for decision d, replaces
// missing or illegal ones by the contract-safe fallback, commits them to
// the engine, and returns one audit per active agent (in agent-id order).
// ctrlErr, if the controller failed as a whole, is recorded as the reason
// for every fallback.
func (in *Interpreter) Apply(d *Decision, actions map[string]int, src Source, ctrlErr error) ([]Audit, error) {
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	audits := make([]Audit, 0, len(ids))
	for _, id := range ids {
		v := d.ActiveAgents[id]
		a := Audit{Step: d.Step, Time: d.Time, AgentID: id, Role: v.Role, Kind: v.Kind, Source: src, Payload: v}
		act, ok := actions[id]
		switch {
		case ctrlErr != nil:
			a.Reason = "controller error: " + ctrlErr.Error()
		case !ok:
			a.Reason = "no action for this agent"
		case act < 0 || act >= len(v.ActionMask) || !v.ActionMask[act]:
			a.Reason = "illegal action index " + strconv.Itoa(act)
			r := act
			a.Requested = &r
		}
		if a.Reason != "" {
			act = SafeAction(v)
			a.Source = SourceFallback
			in.feedback[id] = "your last reply was replaced by the fallback: " + a.Reason
		} else {
			delete(in.feedback, id)
		}
		a.Action = act
		n, err := in.commit(d, v, act)
		if err != nil {
			return audits, fmt.Errorf("step %d agent %s: commit %s action %d: %w", d.Step, id, v.Kind, act, err)
		}
		a.Messages = n
		audits = append(audits, a)
	}
	in.step++
	return audits, nil
}

// commit applies one validated action and returns the number of protocol
// messages it caused.
func (in *Interpreter) commit(d *Decision, v *View, act int) (int, error) {
	e := in.eng
	opt := v.Options[act]
	switch v.Kind {
	case KindRelease:
		if opt.Action == "defer" {
			in.remember(v.AgentID, fmt.Sprintf("t=%.1f defer", d.Time))
			return 0, e.Defer()
		}
		in.remember(v.AgentID, fmt.Sprintf("t=%.1f release job %d", d.Time, opt.Job.Job))
		return 0, e.Release(opt.Job.Job)
	case KindSelectCell:
		c, ok := in.cellIndex[opt.Cell.Cell]
		if !ok {
			return 0, fmt.Errorf("no cell %q", opt.Cell.Cell)
		}
		j := v.Context.WorkItem.Job
		in.remember(v.AgentID, fmt.Sprintf("t=%.1f job %d op %d -> %s", d.Time, j, v.Context.WorkItem.Op, opt.Cell.Cell))
		if err := e.Assign(j, c); err != nil {
			return 0, err
		}
		in.send(d, "assign", v.AgentID, in.cellAgents[c], j)
		in.send(d, "accept", in.cellAgents[c], v.AgentID, j)
		return 2, nil
	}
	return 0, fmt.Errorf("unknown decision kind %q", v.Kind)
}

func (in *Interpreter) send(d *Decision, typ, from, to string, job int) {
	in.Messages = append(in.Messages, Message{Step: d.Step, Time: d.Time, Type: typ, Sender: from, Receiver: to, Job: job})
}

func (in *Interpreter) remember(agent, s string) {
	m := append(in.memory[agent], s)
	if len(m) > MemorySize {
		m = m[len(m)-MemorySize:]
	}
	in.memory[agent] = m
}

// round2 rounds a payload figure to two decimals: payloads are read by
// models, and long float tails cost tokens without informing anyone.
func round2(x float64) float64 { return math.Round(x*100) / 100 }
