package envcore

import "github.com/coordbench/coordbench/des/factory"

// Progress is what an episode has achieved so far, tallied from the same
// engine records as trace.jsonl: the inputs of per-step rewards for a
// learner (docs/python-env.md). At the end it equals the metrics' G_mk,
// G_cj and G_td.
type Progress struct {
	// Time is the simulation time of the decision (or of the end).
	Time float64 `json:"time"`
	// Completed counts job_complete records (G_cj so far).
	Completed int `json:"completed"`
	// Tardiness is Σ max(0, completion − due) over the completed jobs
	// (G_td so far), summed in completion order.
	Tardiness float64 `json:"tardiness"`
	// Released counts the jobs released into the plant.
	Released int `json:"released"`
}

// Tally is the factory.Tracer behind Progress. It belongs to the
// episode's goroutine; snapshots (At) are copied out.
type Tally struct {
	due map[int32]float64 // of arrived, uncompleted jobs
	p   Progress
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{due: map[int32]float64{}} }

// Reset empties the tally for another episode, keeping its storage.
func (t *Tally) Reset() {
	clear(t.due)
	t.p = Progress{}
}

// Emit implements factory.Tracer.
func (t *Tally) Emit(r *factory.Record) {
	switch r.Ev {
	case factory.EvArrival:
		t.due[r.Job] = r.Due
	case factory.EvRelease:
		t.p.Released++
	case factory.EvJobComplete:
		t.p.Completed++
		if d, ok := t.due[r.Job]; ok {
			if late := r.T - d; late > 0 {
				t.p.Tardiness += late
			}
			delete(t.due, r.Job)
		}
	}
}

// At is the tally at simulation time now.
func (t *Tally) At(now float64) Progress {
	p := t.p
	p.Time = now
	return p
}
