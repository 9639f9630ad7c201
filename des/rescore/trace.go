package rescore

// Reading a run's trace into the scorer's tally.

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// traceLine holds the keys of a trace line that the scoring rules read
// (docs/trace-format.md); pointers tell an absent key from a zero.
type traceLine struct {
	T      *float64 `json:"t"`
	Ev     string   `json:"ev"`
	Job    *int32   `json:"job"`
	Cell   *string  `json:"cell"`
	KW     *float64 `json:"kw"`
	Due    *float64 `json:"due"`
	Status *string  `json:"status"`
	// episode_start
	Jobs      *int32   `json:"jobs"`
	TotalOps  *int32   `json:"total_ops"`
	TimeUnitS *float64 `json:"time_unit_s"`
	CapKW     *float64 `json:"power_cap_kw"`
	Carbon    *float64 `json:"carbon_kg_per_kwh"`
	WIPCap    *int     `json:"wip_cap"`
	Horizon   *float64 `json:"horizon"`
}

// traceReader feeds a Tally with trace lines, in order.
type traceReader struct {
	tally   *harness.Tally
	cells   map[string]int32 // cell names, numbered as they come (the rules only compare them)
	started bool
	ended   bool
	rec     factory.Record
}

func newTraceReader(t *harness.Tally) *traceReader {
	return &traceReader{tally: t, cells: map[string]int32{}}
}

var errNoStart = errors.New("the trace does not start with episode_start")

// line reads one trace line (the caller adds its file and line number
// to an error).
func (r *traceReader) line(b []byte) error {
	var l traceLine
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l.Ev == harness.EvModeSelected {
		return nil
	}
	ev, ok := factory.ParseEventType(l.Ev)
	if !ok {
		return fmt.Errorf("unknown event %q", l.Ev)
	}
	if r.ended {
		return fmt.Errorf("%s after episode_end", l.Ev)
	}
	if !r.started && ev != factory.EvEpisodeStart {
		return errNoStart
	}
	if l.T == nil {
		return fmt.Errorf("%s without t", l.Ev)
	}
	rec := &r.rec
	*rec = factory.Record{T: *l.T, Ev: ev, Job: -1, Op: -1, Cell: -1, Machine: -1, From: -1}
	need := func(name string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s without %s", l.Ev, name)
		}
		return nil
	}
	var err error
	switch ev {
	case factory.EvEpisodeStart:
		if r.started {
			return errors.New("a second episode_start")
		}
		if err = need("jobs, total_ops, time_unit_s, power_cap_kw, carbon_kg_per_kwh, wip_cap and horizon",
			l.Jobs != nil && l.TotalOps != nil && l.TimeUnitS != nil && l.CapKW != nil && l.Carbon != nil && l.WIPCap != nil && l.Horizon != nil); err != nil {
			return err
		}
		r.started = true
		r.tally.Reset(harness.TallyHeader{TimeUnitS: *l.TimeUnitS, CapKW: *l.CapKW, CarbonKgPerKWh: *l.Carbon, WIPCap: *l.WIPCap, Horizon: *l.Horizon})
		rec.Job, rec.Ops = *l.Jobs, *l.TotalOps
	case factory.EvArrival:
		if err = need("job and due", l.Job != nil && l.Due != nil); err == nil {
			rec.Job, rec.Due = *l.Job, *l.Due
		}
	case factory.EvBlocked, factory.EvBlockingRelease, factory.EvQueueRelease:
		if err = need("job and cell", l.Job != nil && l.Cell != nil); err == nil {
			rec.Job, rec.Cell = *l.Job, r.cell(*l.Cell)
		}
	case factory.EvStageReleaseReady, factory.EvAdmission, factory.EvJobComplete:
		if err = need("job", l.Job != nil); err == nil {
			rec.Job = *l.Job
		}
	case factory.EvPowerChange:
		if err = need("kw", l.KW != nil); err == nil {
			rec.KW = *l.KW
		}
	case factory.EvEpisodeEnd:
		if err = need("status", l.Status != nil); err == nil {
			rec.Status = factory.Status(*l.Status)
			r.ended = true
		}
	}
	if err != nil {
		return err
	}
	r.tally.Record(rec)
	return nil
}

// cell numbers a cell name.
func (r *traceReader) cell(name string) int32 {
	if c, ok := r.cells[name]; ok {
		return c
	}
	c := int32(len(r.cells))
	r.cells[name] = c
	return c
}

// end reports a trace that stopped short.
func (r *traceReader) end() error {
	switch {
	case !r.started:
		return errNoStart
	case !r.ended:
		return errors.New("the trace has no episode_end: the run was cut short")
	}
	return nil
}
