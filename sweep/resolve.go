package sweep

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/suiterun"
)

// Models are the model-backed controllers or agents of an experiment,
// built by the caller from Experiment.ModelList and the llm section (the
// CLI shares its flag code): des, one maker per model and framework;
// silo, one LLM agent configuration per model.
type Models struct {
	DesMakers []harness.ControllerMaker
	SiloLLMs  []*play.LLMAgent
}

// Suite is an experiment resolved by its benchmark's suite: every case,
// and the suite of one shard's cases.
type Suite struct {
	Experiment *Experiment
	// IDs are the ids of every case of the experiment, in suite order.
	IDs []string
	// Shard and its suite: the cases it runs. Exactly one of Des and Silo
	// is set.
	Shard Shard
	Des   *harness.Suite
	Silo  *suite.Suite
}

// Resolve resolves e (read from file, named in errors) with its suite and
// keeps the cases of shard sh. Errors of the matrix name the file's field.
func Resolve(file string, e *Experiment, m Models, sh Shard) (*Suite, error) {
	s := &Suite{Experiment: e, Shard: sh}
	switch e.Benchmark {
	case BenchmarkDes:
		if _, err := e.DesGroupBy(); err != nil {
			return nil, err
		}
		opt := e.DesOptions()
		opt.Makers = m.DesMakers
		full, err := harness.ResolveSuite(opt)
		if err != nil {
			return nil, e.FieldError(file, err)
		}
		for _, c := range full.Cases {
			s.IDs = append(s.IDs, c.ID)
		}
		s.Des = full
		if sh != Whole() {
			ids, err := sh.Select(s.IDs)
			if err != nil {
				return nil, err
			}
			opt.Cases = ids
			if s.Des, err = harness.ResolveSuite(opt); err != nil {
				return nil, e.FieldError(file, err)
			}
		}
	case BenchmarkSilo:
		opt := e.SiloOptions()
		opt.LLMs = m.SiloLLMs
		teams, err := e.SiloTeams(m.SiloLLMs)
		if err != nil {
			return nil, err
		}
		opt.Teams = teams
		full, err := suite.Resolve(opt)
		if err != nil {
			return nil, e.FieldError(file, err)
		}
		for _, c := range full.Cases {
			s.IDs = append(s.IDs, c.ID)
		}
		if sh != Whole() {
			if _, err := sh.Select(s.IDs); err != nil {
				return nil, err
			}
			var kept []suite.Case
			for k, c := range full.Cases {
				if sh.Of(k) == sh.Index {
					kept = append(kept, c)
				}
			}
			full.Cases = kept
		}
		s.Silo = full
	default:
		return nil, &Error{File: file, Field: "benchmark", Msg: fmt.Sprintf("want des or silo (got %q)", e.Benchmark)}
	}
	return s, nil
}

// Cases is the number of cases the shard runs.
func (s *Suite) Cases() int {
	if s.Des != nil {
		return len(s.Des.Cases)
	}
	return len(s.Silo.Cases)
}

// ShardIDs are the ids of the cases the shard runs.
func (s *Suite) ShardIDs() []string {
	var ids []string
	if s.Des != nil {
		for _, c := range s.Des.Cases {
			ids = append(ids, c.ID)
		}
		return ids
	}
	for _, c := range s.Silo.Cases {
		ids = append(ids, c.ID)
	}
	return ids
}

// Summarize writes, into out, the summaries of the whole experiment s
// (resolved with Whole) from the cases Collect copied there, with the
// suite's own code and runner (suiterun RunNone: nothing runs), and marks
// out as the whole experiment. It returns the summary files' paths. Every
// case must have been copied, and be finished as this tool writes it.
func (c *Collected) Summarize(ctx context.Context, s *Suite, out string) ([]string, error) {
	for k, id := range s.IDs {
		if _, ok := c.From[id]; !ok {
			return nil, fmt.Errorf("case %s is in none of the shards (it belongs to shard %d/%d, which has not finished it): rerun that shard's sweep run, then collect into a new directory", id, k%c.Shards, c.Shards)
		}
	}
	if err := Mark(out, s.Experiment, Whole(), len(s.IDs), len(s.IDs)); err != nil {
		return nil, err
	}
	var complete bool
	var files []string
	if s.Des != nil {
		keys, err := s.Experiment.DesGroupBy()
		if err != nil {
			return nil, err
		}
		rep, err := harness.RunSuite(ctx, s.Des, out, harness.SuiteRunOptions{Options: suiterun.Options{RunNone: true}, GroupBy: keys})
		if err != nil {
			return nil, err
		}
		complete = rep.Complete()
		files = []string{harness.FileSuiteSummary, harness.FileSuiteAggregate, harness.FileSuiteAggregateMD}
	} else {
		rep, err := suite.Run(ctx, s.Silo, out, suite.RunOptions{RunNone: true})
		if err != nil {
			return nil, err
		}
		complete = rep.Complete()
		files = siloFiles(s.Silo)
	}
	if !complete {
		return nil, fmt.Errorf("some cases of the shards are not finished as this version of coordbench writes them (run by another version?): rerun their shards' sweep run, then collect into a new directory")
	}
	for i, f := range files {
		files[i] = filepath.Join(out, f)
	}
	return files, nil
}
