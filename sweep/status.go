package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/suiterun"
)

// Status is the progress of an experiment from the directories it runs
// into (a single-machine run's, or its shards'): which cases are done,
// failed or not started, per model, the money spent and, by estimate,
// the money the rest will take.
type Status struct {
	ExperimentID, Benchmark string
	// Dirs are the directories read; Shards the shards they hold
	// ("0/2", ...), in the order given.
	Dirs, Shards []string
	// Total is the planned cases; Done, Failed and NotStarted partition it
	// (a case that failed and then finished is done).
	Total, Done, Failed, NotStarted int
	// Models are the per-model counts, in the file's order, then the
	// cases without a model (Model "").
	Models []ModelStatus
	// SpentUSD is the cost of the done and failed cases' model calls
	// (cached replies cost nothing); RemainingUSD the estimated cost of
	// the failed and not-started ones (Bound: an upper bound, silo).
	SpentUSD, RemainingUSD float64
	Bound                  bool
}

// ModelStatus is one model's part of a Status.
type ModelStatus struct {
	Model                                   string
	Planned, Done, Failed, NotStarted       int
	SpentUSD, RemainingUSD                  float64
	Calls, CachedCalls, InputTok, OutputTok int64
}

// StatusOf computes the status of the whole experiment s (resolved with
// Whole) with the estimate est of its cases, from the directories dirs,
// each a sweep run's --out of this experiment (checked by the caller).
func StatusOf(s *Suite, est Estimate, dirs []string) (*Status, error) {
	e := s.Experiment
	st := &Status{ExperimentID: e.ID(), Benchmark: e.Benchmark, Dirs: dirs, Total: len(est.Cases)}
	for _, d := range dirs {
		m, err := ReadMarker(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		st.Shards = append(st.Shards, m.Shard.String())
	}
	prices := e.modelOf()
	idx := map[string]int{}
	for _, m := range e.ModelList() {
		idx[m.Label()] = len(st.Models)
		st.Models = append(st.Models, ModelStatus{Model: m.Label()})
	}
	casesDir := CasesDir(e.Benchmark)
	for _, c := range est.Cases {
		k, ok := idx[c.Model]
		if !ok {
			idx[c.Model] = len(st.Models)
			k = len(st.Models)
			st.Models = append(st.Models, ModelStatus{Model: c.Model})
		}
		ms := &st.Models[k]
		ms.Planned++
		done, failed := find(dirs, casesDir, c.ID), ""
		if done == "" {
			failed = find(dirs, suiterun.FailedDir, c.ID)
		}
		spentIn := done + failed
		if spentIn != "" && c.Model != "" {
			u, err := ReadUsage(e.Benchmark, spentIn)
			if err != nil {
				return nil, err
			}
			v := u.Cost(prices[c.Model].Price)
			ms.SpentUSD += v
			st.SpentUSD += v
			ms.Calls += u.Calls
			ms.CachedCalls += u.CachedCalls
			ms.InputTok += u.InputTokens
			ms.OutputTok += u.OutputTokens
		}
		switch {
		case done != "":
			ms.Done++
			st.Done++
			continue
		case failed != "":
			ms.Failed++
			st.Failed++
		default:
			ms.NotStarted++
			st.NotStarted++
		}
		ms.RemainingUSD += c.CostUSD
		st.RemainingUSD += c.CostUSD
		st.Bound = st.Bound || c.Bound
	}
	st.Models = slices.DeleteFunc(st.Models, func(m ModelStatus) bool { return m.Planned == 0 })
	return st, nil
}

// find is the directory <d>/<sub>/<id> of the first of dirs that has it,
// "" if none.
func find(dirs []string, sub, id string) string {
	for _, d := range dirs {
		p := filepath.Join(d, sub, id)
		if _, err := os.Stat(p); err == nil {
			return p
		} else if !errors.Is(err, os.ErrNotExist) {
			return ""
		}
	}
	return ""
}
