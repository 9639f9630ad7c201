package sweep

import (
	"context"
	"io"
	"math"
	"os"
	"runtime"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/suiterun"
)

// RunConfig are the settings of a sweep run on one machine (sweep run):
// the directory, how many cases at once, and the cost limit.
type RunConfig struct {
	// Dir is the suite directory of the run or shard (required).
	Dir string
	// Workers is the number of cases run at once; 0 is the experiment's
	// run.workers, else the number of CPUs, and with model-backed cases
	// at least the models' concurrency (ModelSet.Concurrency), so that the
	// endpoints are kept busy.
	Workers int
	// CostLimit, if set, is in US dollars: no model-backed case starts
	// once the money spent in Dir (earlier runs included) plus the
	// estimates of the cases running and of that case would exceed it.
	CostLimit *float64
	// Force lets the cases of this experiment replace a suite of another
	// configuration in Dir (suiterun.Options.Force); a directory of
	// another experiment or shard (sweep.json) is refused all the same.
	Force bool
}

// Validate checks c: the first bad field, as an *opterr.Error.
func (c RunConfig) Validate() error {
	if c.Dir == "" {
		return opterr.New("Dir", "required: the directory the cases go to")
	}
	if c.Workers < 0 || c.Workers > suiterun.MaxWorkers {
		return opterr.New("Workers", "want 1 to %d cases at once (got %d)", suiterun.MaxWorkers, c.Workers)
	}
	if l := c.CostLimit; l != nil && (*l < 0 || math.IsNaN(*l) || math.IsInf(*l, 0)) {
		return opterr.New("CostLimit", "want an amount of US dollars from 0 (got %v)", *l)
	}
	return nil
}

// Running is a sweep run under way: the suite runner's options to run the
// cases of its Suite with (des: harness.SuiteRunOptions.Options; silo:
// suite.RunOptions), and what Finish needs to close it.
type Running struct {
	// Options are the runner's: workers, and the hooks that record every
	// attempt's cost and enforce the cost limit.
	Options suiterun.Options
	suite   *Suite
	dir     string
	rec     *Recorder
	budget  *Budget
	unlock  func() // releases dir, locked from Start to Finish
}

// Start validates c, marks c.Dir as a directory of the experiment (and
// shard) of s, and prepares the run: its workers, the cost limit's budget
// (from the estimate) and the recorder of attempts. m are the experiment's
// models (BuildModels).
func (s *Suite) Start(ctx context.Context, c RunConfig, m *ModelSet) (*Running, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e := s.Experiment
	workers := c.Workers
	if workers == 0 {
		workers = e.Run.Workers
	}
	if workers == 0 {
		workers = runtime.NumCPU()
		if e.WithLLM() && m != nil { // cases wait on the model: keep the endpoints busy
			workers = min(max(workers, m.Concurrency), suiterun.MaxWorkers)
		}
	}
	// Everything the run writes into c.Dir, from the marker to the cost
	// files, is written under its lock: a run refused by it writes
	// nothing into the directory of the run that holds it.
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := atomicfs.LockDir(c.Dir)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			unlock()
		}
	}()
	if err := Mark(c.Dir, e, s.Shard, s.Cases(), len(s.IDs)); err != nil {
		return nil, err
	}
	r := &Running{suite: s, dir: c.Dir, unlock: unlock, Options: suiterun.Options{Workers: workers, Force: c.Force, LockHeld: true}}
	if c.CostLimit != nil {
		est, err := s.Estimate(ctx)
		if err != nil {
			return nil, err
		}
		if r.budget, err = s.NewBudget(*c.CostLimit, est, c.Dir); err != nil {
			return nil, err
		}
		r.Options.Admit = r.budget.Admit
	}
	// Failed attempts go to the ledger before the budget hears of them; a
	// case's rerun replaces its failed/<id>/.
	rec, err := s.NewRecorder(c.Dir, r.budget)
	if err != nil {
		return nil, err
	}
	r.rec, r.Options.Ended, r.Options.Leftover = rec, rec.Ended, rec.Leftover
	started = true
	return r, nil
}

// Finish closes the run once its cases have run with runErr: it writes
// the cost files and prints their totals to w (WriteCosts), and returns
// the first of: a failure to record an attempt, the cost limit's refusal
// (the cases it kept from starting printed to stderr), runErr. It
// releases the directory's lock, which Start took: call it once after
// every Start that succeeded.
func (r *Running) Finish(w, stderr io.Writer, runErr error) error {
	defer r.unlock()
	if err := r.suite.WriteCosts(w, r.dir); err != nil {
		return err
	}
	if err := r.rec.Err(); err != nil {
		return err
	}
	if r.budget != nil && r.budget.Stopped() {
		return r.budget.Refusal(stderr)
	}
	return runErr
}
