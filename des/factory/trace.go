package factory

import (
	"math"
	"strconv"
)

// EventType names a realized event in the trace.
type EventType uint8

// The events of the design notes, in the order they are listed there, plus
// the episode_start header.
const (
	EvArrival EventType = iota
	EvRelease
	EvStageReleaseReady
	EvRouteAssigned
	EvAdmission
	EvTransportStart
	EvTransportComplete
	EvBlocked
	EvBlockingRelease
	EvSetupStart
	EvSetupComplete
	EvProcessStart
	EvProcessResume
	EvFinish
	EvBreakdown
	EvRepair
	EvPowerChange
	EvJobComplete
	EvEpisodeEnd
	EvEpisodeStart
	NumEventTypes
)

var eventNames = [NumEventTypes]string{
	"arrival", "release", "stage_release_ready", "route_assigned", "admission",
	"transport_start", "transport_complete", "blocked", "blocking_release",
	"setup_start", "setup_complete", "process_start", "process_resume", "finish",
	"breakdown", "repair", "power_change", "job_complete", "episode_end", "episode_start",
}

func (e EventType) String() string {
	if e < NumEventTypes {
		return eventNames[e]
	}
	return "unknown"
}

// ParseEventType maps a trace name back to its EventType.
func ParseEventType(s string) (EventType, bool) {
	for i, n := range eventNames {
		if n == s {
			return EventType(i), true
		}
	}
	return 0, false
}

// Record is one realized event. Integer fields are -1 when they do not
// apply; see docs/trace-format.md for which fields each event carries.
type Record struct {
	T       float64
	Ev      EventType
	Job     int32
	Op      int32
	Cell    int32 // destination or location cell
	Machine int32 // index within the cell
	From    int32 // transport origin cell; -1 = the dock
	KW      float64
	Due     float64
	Dur     float64
	Phase   MachineState // process_resume: setup or busy
	Status  Status
	Ops     int32 // arrival: route length
	Product int32 // arrival: product index
	Seed    uint64
}

// Tracer receives every realized event. The record is reused: copy what
// you keep. A nil Tracer disables tracing.
type Tracer interface {
	Emit(r *Record)
}

// AppendJSON appends r as one JSON object (no newline). Names are resolved
// through the plant; the field order is fixed so traces are byte-stable.
func (r *Record) AppendJSON(b []byte, p *Plant) []byte {
	b = append(b, `{"t":`...)
	b = AppendFloat(b, r.T)
	b = append(b, `,"ev":"`...)
	b = append(b, eventNames[r.Ev]...)
	b = append(b, '"')
	if r.Job >= 0 && r.Ev != EvEpisodeStart {
		b = append(b, `,"job":`...)
		b = strconv.AppendInt(b, int64(r.Job), 10)
	}
	if r.Op >= 0 {
		b = append(b, `,"op":`...)
		b = strconv.AppendInt(b, int64(r.Op), 10)
	}
	switch r.Ev {
	case EvArrival:
		b = append(b, `,"product":"`...)
		b = append(b, p.Products[r.Product].ID...)
		b = append(b, `","ops":`...)
		b = strconv.AppendInt(b, int64(r.Ops), 10)
		b = append(b, `,"due":`...)
		b = AppendFloat(b, r.Due)
	case EvTransportStart:
		b = append(b, `,"from":"`...)
		if r.From < 0 {
			b = append(b, "dock"...)
		} else {
			b = append(b, p.Cells[r.From].ID...)
		}
		b = append(b, '"')
		if r.Machine >= 0 {
			b = append(b, `,"from_machine":`...)
			b = strconv.AppendInt(b, int64(r.Machine), 10)
		}
		b = append(b, `,"dur":`...)
		b = AppendFloat(b, r.Dur)
	case EvPowerChange:
		b = append(b, `,"kw":`...)
		b = AppendFloat(b, r.KW)
	case EvEpisodeStart:
		in := p.Inst
		b = append(b, `,"instance":`...)
		b = strconv.AppendQuote(b, in.Name)
		b = append(b, `,"seed":`...)
		b = strconv.AppendUint(b, r.Seed, 10)
		b = append(b, `,"time_unit_s":`...)
		b = AppendFloat(b, in.TimeUnitS)
		b = append(b, `,"power_cap_kw":`...)
		b = AppendFloat(b, p.CapKW())
		b = append(b, `,"transport_kw":`...)
		b = AppendFloat(b, float64(p.transW)/1000)
		b = append(b, `,"carbon_kg_per_kwh":`...)
		b = AppendFloat(b, in.Power.CarbonKgPerKWh)
		b = append(b, `,"wip_cap":`...)
		b = strconv.AppendInt(b, int64(in.WIPCap), 10)
		b = append(b, `,"horizon":`...)
		b = AppendFloat(b, in.Horizon)
		b = append(b, `,"jobs":`...)
		b = strconv.AppendInt(b, int64(r.Job), 10)
		b = append(b, `,"total_ops":`...)
		b = strconv.AppendInt(b, int64(r.Ops), 10)
	case EvEpisodeEnd:
		b = append(b, `,"status":"`...)
		b = append(b, r.Status...)
		b = append(b, '"')
	}
	if r.Cell >= 0 {
		b = append(b, `,"cell":"`...)
		b = append(b, p.Cells[r.Cell].ID...)
		b = append(b, '"')
		if r.Machine >= 0 && r.Ev != EvTransportStart {
			b = append(b, `,"machine":`...)
			b = strconv.AppendInt(b, int64(r.Machine), 10)
		}
	}
	if r.Ev == EvProcessResume {
		b = append(b, `,"phase":"`...)
		b = append(b, r.Phase.String()...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// AppendFloat formats like encoding/json: the shortest representation that
// parses back to the same float64, so traces round-trip exactly.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
