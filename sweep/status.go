package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/suiterun"
)

// Status is the progress of an experiment: which cases are done, failed
// or not started, per model, the money spent and, by estimate, the money
// the rest will take.
type Status struct {
	ExperimentID, Benchmark string
	// Sources name where the progress was read (Progress.Sources): the
	// directories and the shards they hold.
	Sources []string
	// Total is the planned cases; Done, Failed and NotStarted partition it
	// (a case that failed and then finished is done).
	Total, Done, Failed, NotStarted int
	// Models are the per-model counts, in the file's order, then the
	// cases without a model (Model "").
	Models []ModelStatus
	// SpentUSD is the cost of the model calls of the done cases and of
	// the discarded attempts (cached replies cost nothing); RemainingUSD
	// the estimated cost of the failed and not-started cases (Bound: an
	// upper bound, silo).
	SpentUSD, RemainingUSD float64
	Bound                  bool
	// Discarded counts the attempts that spent model calls without giving
	// a case's result (FileAttempts: failed runs, cases a distributed
	// worker handed back); DiscardedUSD is their part of SpentUSD.
	Discarded    int
	DiscardedUSD float64
	// Unfinished counts the model-backed cases whose run has not ended: in
	// flight, or left by a killed run (their temporary directories);
	// UnfinishedUSD is the cost of their calls so far, in no other figure
	// (it moves into SpentUSD when the run ends, or, for a killed run,
	// when the next sweep run in the directory records it). Only the
	// directories of sweep run hold them.
	Unfinished    int
	UnfinishedUSD float64
}

// ModelStatus is one model's part of a Status.
type ModelStatus struct {
	Model                                   string
	Planned, Done, Failed, NotStarted       int
	SpentUSD, RemainingUSD                  float64
	Calls, CachedCalls, InputTok, OutputTok int64 // done cases and discarded attempts
	Discarded                               int
	DiscardedUSD                            float64
}

// CaseState is where a case of an experiment stands.
type CaseState int

// Case states.
const (
	NotStarted CaseState = iota
	Done
	Failed
)

// Progress tells where the cases of an experiment stand. DirProgress
// reads run and shard directories; a distributed sweep can answer from
// its own records.
type Progress interface {
	// Case is the state of case id and, if it ran, the directory of its
	// logs (the model usage is read from them).
	Case(id string) (CaseState, string)
	// Sources name where the progress comes from, for people.
	Sources() []string
	// Discarded are the discarded attempts at the cases of modelOf (case
	// id → model label), as Discarded reads them.
	Discarded(modelOf map[string]string) ([]CaseCost, error)
	// Unfinished are the runs of the cases of modelOf that have not ended
	// (in flight, or left by a killed run), with their usage so far.
	Unfinished(modelOf map[string]string) ([]CaseCost, error)
}

// DirProgress is the progress recorded in sweep run directories (a
// single-machine run's, or shards' of one experiment): a case is done if
// one of them holds it finished, failed if one holds it failed.
type DirProgress struct {
	Benchmark string
	Dirs      []string
}

// Case implements Progress.
func (p DirProgress) Case(id string) (CaseState, string) {
	if d := find(p.Dirs, CasesDir(p.Benchmark), id); d != "" {
		return Done, d
	}
	if d := find(p.Dirs, suiterun.FailedDir, id); d != "" {
		return Failed, d
	}
	return NotStarted, ""
}

// Discarded implements Progress: the discarded attempts recorded in the
// directories, each once.
func (p DirProgress) Discarded(modelOf map[string]string) ([]CaseCost, error) {
	return Discarded(p.Benchmark, p.Dirs, modelOf)
}

// Unfinished implements Progress: the runs in the cases' temporary
// directories that made model calls, but for a killed run's that the
// ledger holds already (recorded by a run about to remove it). A log that
// cannot be read, as a run ends and takes it away, counts as far as it
// was read.
func (p DirProgress) Unfinished(modelOf map[string]string) ([]CaseCost, error) {
	ids := make([]string, 0, len(modelOf))
	for id := range modelOf {
		ids = append(ids, id)
	}
	var out []CaseCost
	for _, d := range p.Dirs {
		un, err := suiterun.Unfinished(filepath.Join(d, CasesDir(p.Benchmark)), ids)
		if err != nil {
			return nil, err
		}
		var recorded map[string]bool
		for _, u := range un {
			if recorded == nil {
				if recorded, err = recordedIDs(d); err != nil {
					return nil, err
				}
			}
			if recorded[LeftoverAttemptID(u.Dir)] {
				continue
			}
			usage, _ := ReadPartialUsage(p.Benchmark, u.Dir)
			if usage.Calls > 0 || usage.CachedCalls > 0 {
				out = append(out, CaseCost{ID: u.ID, Model: modelOf[u.ID], Usage: usage})
			}
		}
	}
	return out, nil
}

// Sources implements Progress: each directory with the shard it holds.
func (p DirProgress) Sources() []string {
	var out []string
	for _, d := range p.Dirs {
		if m, err := ReadMarker(d); err == nil {
			out = append(out, fmt.Sprintf("%s (shard %s)", d, m.Shard))
		} else {
			out = append(out, d)
		}
	}
	return out
}

// StatusOf computes the status of the whole experiment s (resolved with
// Whole) with the estimate est of its cases, from the progress p.
func StatusOf(s *Suite, est Estimate, p Progress) (*Status, error) {
	e := s.Experiment
	st := &Status{ExperimentID: e.ID(), Benchmark: e.Benchmark, Sources: p.Sources(), Total: len(est.Cases)}
	prices := e.modelOf()
	price := func(m string) Price { return prices[m].Price }
	idx := map[string]int{}
	for _, m := range e.ModelList() {
		idx[m.Label()] = len(st.Models)
		st.Models = append(st.Models, ModelStatus{Model: m.Label()})
	}
	for _, c := range est.Cases {
		k, ok := idx[c.Model]
		if !ok {
			idx[c.Model] = len(st.Models)
			k = len(st.Models)
			st.Models = append(st.Models, ModelStatus{Model: c.Model})
		}
		ms := &st.Models[k]
		ms.Planned++
		state, dir := p.Case(c.ID)
		if state == Done && c.Model != "" {
			// A failed case's usage is that of a discarded attempt.
			u, err := ReadUsage(e.Benchmark, dir)
			if err != nil {
				return nil, err
			}
			ms.add(u, UsageCost(u, c.Model, price))
		}
		switch state {
		case Done:
			ms.Done++
			st.Done++
			continue
		case Failed:
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
	modelOf := map[string]string{}
	for _, c := range est.Cases {
		if c.Model != "" {
			modelOf[c.ID] = c.Model
		}
	}
	att, err := p.Discarded(modelOf)
	if err != nil {
		return nil, err
	}
	for _, a := range att {
		ms := &st.Models[idx[a.Model]]
		v := ms.add(a.Usage, UsageCost(a.Usage, a.Model, price))
		ms.Discarded++
		ms.DiscardedUSD += v
	}
	un, err := p.Unfinished(modelOf)
	if err != nil {
		return nil, err
	}
	for _, u := range un {
		st.Unfinished++
		st.UnfinishedUSD += UsageCost(u.Usage, u.Model, price)
	}
	for _, m := range st.Models {
		st.SpentUSD += m.SpentUSD
		st.Discarded += m.Discarded
		st.DiscardedUSD += m.DiscardedUSD
	}
	st.Models = slices.DeleteFunc(st.Models, func(m ModelStatus) bool { return m.Planned == 0 })
	return st, nil
}

// add counts usage u of cost v and returns v.
func (ms *ModelStatus) add(u Usage, v float64) float64 {
	ms.SpentUSD += v
	ms.Calls += u.Calls
	ms.CachedCalls += u.CachedCalls
	ms.InputTok += u.InputTokens
	ms.OutputTok += u.OutputTokens
	return v
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
