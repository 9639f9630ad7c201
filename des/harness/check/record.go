package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Field bits: which keys a trace line carries.
const (
	fT uint32 = 1 << iota
	fEv
	fJob
	fOp
	fCell
	fMachine
	fFrom
	fFromMachine
	fDur
	fKW
	fProduct
	fOps
	fDue
	fPhase
	fStatus
	fInstance
	fSeed
	fTimeUnit
	fCap
	fTransportKW
	fCarbon
	fWIPCap
	fHorizon
	fJobs
	fTotalOps
	fStep
	fMode
	fRule
	fState
	numFields = iota
)

var fieldNames = [numFields]string{
	"t", "ev", "job", "op", "cell", "machine", "from", "from_machine", "dur", "kw", "product", "ops", "due",
	"phase", "status", "instance", "seed", "time_unit_s", "power_cap_kw", "transport_kw", "carbon_kg_per_kwh",
	"wip_cap", "horizon", "jobs", "total_ops", "step", "mode", "rule", "state",
}

// fieldSpec is the set of keys an event must carry and the keys it may
// carry, following factory.Record.AppendJSON.
type fieldSpec struct{ required, optional uint32 }

const (
	jobOp      = fT | fEv | fJob | fOp
	jobOpCell  = jobOp | fCell
	onMachine  = jobOpCell | fMachine
	machineRec = fT | fEv | fCell | fMachine
)

var eventFields = map[string]fieldSpec{
	"episode_start": {fT | fEv | fInstance | fSeed | fTimeUnit | fCap | fTransportKW | fCarbon | fWIPCap | fHorizon | fJobs | fTotalOps, 0},
	"power_change":  {fT | fEv | fKW, 0},
	"arrival":       {fT | fEv | fJob | fProduct | fOps | fDue, 0},
	"release":       {jobOp, 0},
	// stage_release_ready: the operation now awaiting routing.
	"stage_release_ready": {jobOp, 0},
	"route_assigned":      {jobOpCell, 0},
	"admission":           {jobOpCell, 0},
	"transport_start":     {jobOpCell | fFrom | fDur, fFromMachine},
	"transport_complete":  {jobOpCell, 0},
	"blocked":             {jobOpCell, 0},
	"blocking_release":    {jobOpCell, 0},
	"queue_release":       {jobOpCell, 0},
	"setup_start":         {onMachine, 0},
	"setup_complete":      {onMachine, 0},
	"process_start":       {onMachine, 0},
	"process_resume":      {onMachine | fPhase, 0},
	"finish":              {onMachine, 0},
	"breakdown":           {machineRec, fJob | fOp},
	"repair":              {machineRec, fJob | fOp},
	"job_complete":        {fT | fEv | fJob | fCell | fMachine, 0},
	"episode_end":         {fT | fEv | fStatus, 0},
	// mode_selected: an adaptive paradigm's choice for a work item (mode.go).
	"mode_selected": {jobOp | fStep | fMode | fRule | fState, 0},
}

// rawLine is one trace line as decoded; nil pointers are absent keys.
type rawLine struct {
	T           *float64         `json:"t"`
	Ev          *string          `json:"ev"`
	Job         *int64           `json:"job"`
	Op          *int64           `json:"op"`
	Cell        *string          `json:"cell"`
	Machine     *int64           `json:"machine"`
	From        *string          `json:"from"`
	FromMachine *int64           `json:"from_machine"`
	Dur         *float64         `json:"dur"`
	KW          *float64         `json:"kw"`
	Product     *string          `json:"product"`
	Ops         *int64           `json:"ops"`
	Due         *float64         `json:"due"`
	Phase       *string          `json:"phase"`
	Status      *string          `json:"status"`
	Instance    *string          `json:"instance"`
	Seed        *uint64          `json:"seed"`
	TimeUnitS   *float64         `json:"time_unit_s"`
	PowerCapKW  *float64         `json:"power_cap_kw"`
	TransportKW *float64         `json:"transport_kw"`
	Carbon      *float64         `json:"carbon_kg_per_kwh"`
	WIPCap      *int64           `json:"wip_cap"`
	Horizon     *float64         `json:"horizon"`
	Jobs        *int64           `json:"jobs"`
	TotalOps    *int64           `json:"total_ops"`
	Step        *int64           `json:"step"`
	Mode        *string          `json:"mode"`
	Rule        *int64           `json:"rule"`
	State       *json.RawMessage `json:"state"`
}

func (l *rawLine) present() uint32 {
	var m uint32
	set := func(ok bool, bit uint32) {
		if ok {
			m |= bit
		}
	}
	set(l.T != nil, fT)
	set(l.Ev != nil, fEv)
	set(l.Job != nil, fJob)
	set(l.Op != nil, fOp)
	set(l.Cell != nil, fCell)
	set(l.Machine != nil, fMachine)
	set(l.From != nil, fFrom)
	set(l.FromMachine != nil, fFromMachine)
	set(l.Dur != nil, fDur)
	set(l.KW != nil, fKW)
	set(l.Product != nil, fProduct)
	set(l.Ops != nil, fOps)
	set(l.Due != nil, fDue)
	set(l.Phase != nil, fPhase)
	set(l.Status != nil, fStatus)
	set(l.Instance != nil, fInstance)
	set(l.Seed != nil, fSeed)
	set(l.TimeUnitS != nil, fTimeUnit)
	set(l.PowerCapKW != nil, fCap)
	set(l.TransportKW != nil, fTransportKW)
	set(l.Carbon != nil, fCarbon)
	set(l.WIPCap != nil, fWIPCap)
	set(l.Horizon != nil, fHorizon)
	set(l.Jobs != nil, fJobs)
	set(l.TotalOps != nil, fTotalOps)
	set(l.Step != nil, fStep)
	set(l.Mode != nil, fMode)
	set(l.Rule != nil, fRule)
	set(l.State != nil, fState)
	return m
}

func fieldList(mask uint32) string {
	var s []string
	for i := 0; i < numFields; i++ {
		if mask&(1<<i) != 0 {
			s = append(s, fieldNames[i])
		}
	}
	return strings.Join(s, ", ")
}

// rec is a validated trace record. Integer fields are -1 when absent;
// cell indices are resolved against instance.json (-1 also means "dock"
// for From).
type rec struct {
	line     int
	t        float64
	ev       string
	job, op  int
	cell     int
	machine  int
	from     int
	fromMach int
	dur      float64
	kw       float64
	product  string
	ops      int
	due      float64
	phase    string
	status   string
	raw      *rawLine
}

// decodeLine decodes one trace line. A syntax or type error is returned
// (the file is malformed); unknown keys are reported as problems.
func decodeLine(b []byte) (*rawLine, []string, error) {
	var l rawLine
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(&l)
	if err == nil {
		if rest := bytes.TrimSpace(b[d.InputOffset():]); len(rest) > 0 {
			return nil, nil, fmt.Errorf("data after the JSON object: %.20q", rest)
		}
		return &l, nil, nil
	}
	// Slow path: a decoding error, or unknown keys to name.
	l = rawLine{}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, nil, err
	}
	var unknown []string
	for k := range keys {
		if !knownField[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return &l, unknown, nil
}

var knownField = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range fieldNames {
		m[n] = true
	}
	return m
}()

func popcount(m uint32) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func i64(p *int64) int {
	if p == nil {
		return -1
	}
	v := *p
	if v < 0 || v > math.MaxInt32 {
		return -2 // out of range: reported by the caller
	}
	return int(v)
}

func describe(r *rec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", r.ev)
	if r.job >= 0 {
		fmt.Fprintf(&b, " job %d", r.job)
	}
	if r.op >= 0 {
		fmt.Fprintf(&b, " op %d", r.op)
	}
	fmt.Fprintf(&b, " at t=%v", r.t)
	return b.String()
}
