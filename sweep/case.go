package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/suiterun"
)

// ResolveCase resolves e with its suite, as Resolve, and keeps only the
// case id: the suite a distributed sweep's worker runs for one message.
func ResolveCase(file string, e *Experiment, m Models, id string) (*Suite, error) {
	s, err := Resolve(file, e, m, Whole())
	if err != nil {
		return nil, err
	}
	if !slices.Contains(s.IDs, id) {
		return nil, fmt.Errorf("case %s is not a case of experiment %s", id, short(e.ID()))
	}
	if s.Des != nil {
		opt := e.DesOptions()
		opt.Makers = m.DesMakers
		opt.Cases = []string{id}
		if s.Des, err = harness.ResolveSuite(opt); err != nil {
			return nil, e.FieldError(file, err)
		}
		return s, nil
	}
	var kept []suite.Case
	for _, c := range s.Silo.Cases {
		if c.ID == id {
			kept = append(kept, c)
		}
	}
	s.Silo.Cases = kept
	return s, nil
}

// RunOne runs the one case of s (ResolveCase) into the suite directory
// dir, a scratch directory of its own, with the suite's own runner. It
// returns the finished case's directory; a case that failed is an error
// (its partial artifacts stay in dir's failed/). What the case wrote is
// byte for byte what sweep run writes for it. The end of ctx cuts the
// case short (it fails): a distributed worker's abort.
func (s *Suite) RunOne(ctx context.Context, dir string) (string, error) {
	ids := s.ShardIDs()
	if len(ids) != 1 {
		return "", fmt.Errorf("RunOne: the suite has %d cases, want one (ResolveCase)", len(ids))
	}
	var failures []string
	if s.Des != nil {
		keys, err := s.Experiment.DesGroupBy()
		if err != nil {
			return "", err
		}
		rep, err := harness.RunSuite(ctx, s.Des, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 1, CancelInFlight: true}, GroupBy: keys})
		if err != nil {
			return "", err
		}
		for _, o := range rep.Cases {
			if o.Err != "" || o.Status == harness.StatusError {
				failures = append(failures, o.Err)
			}
		}
	} else {
		rep, err := suite.Run(ctx, s.Silo, dir, suite.RunOptions{Workers: 1, CancelInFlight: true})
		if err != nil {
			return "", err
		}
		for _, o := range rep.Failures {
			failures = append(failures, o.Err)
		}
	}
	if len(failures) > 0 {
		return "", errors.New(failures[0])
	}
	caseDir := filepath.Join(dir, CasesDir(s.Experiment.Benchmark), ids[0])
	if _, err := os.Stat(caseDir); err != nil {
		return "", fmt.Errorf("case %s did not run (interrupted before it started): %w", ids[0], cmp.Or(ctx.Err(), err))
	}
	return caseDir, nil
}

// Finished summarises the whole experiment s (resolved with Whole) in
// dir from the cases finished there, with the suite's own code and
// runner (nothing runs), as Collected.Summarize does, and returns the
// ids of the finished cases and the summary files' paths. A distributed
// sweep's coordinator calls it before publishing (to leave out what is
// done) and once every case has an outcome (to write the summaries).
func (s *Suite) Finished(ctx context.Context, dir string) ([]string, []string, error) {
	if err := Mark(dir, s.Experiment, Whole(), len(s.IDs), len(s.IDs)); err != nil {
		return nil, nil, err
	}
	var done, files []string
	if s.Des != nil {
		keys, err := s.Experiment.DesGroupBy()
		if err != nil {
			return nil, nil, err
		}
		rep, err := harness.RunSuite(ctx, s.Des, dir, harness.SuiteRunOptions{Options: suiterun.Options{RunNone: true}, GroupBy: keys})
		if err != nil {
			return nil, nil, err
		}
		for _, o := range rep.Cases {
			if o.Err == "" && o.Status != harness.StatusError {
				done = append(done, o.Case.ID)
			}
		}
		files = []string{harness.FileSuiteSummary, harness.FileSuiteAggregate, harness.FileSuiteAggregateMD}
	} else {
		rep, err := suite.Run(ctx, s.Silo, dir, suite.RunOptions{RunNone: true})
		if err != nil {
			return nil, nil, err
		}
		for _, o := range rep.Cases {
			done = append(done, o.Case.ID)
		}
		files = siloFiles(s.Silo)
	}
	for i, f := range files {
		files[i] = filepath.Join(dir, f)
	}
	return done, files, nil
}

// CaseFinished reports whether the experiment directory dir holds case
// id of s (resolved with Whole) finished, as Finished counts it: by the
// suite's own check of the case's manifest and the hashes it records. A
// case directory of an earlier version, or a torn one, is not finished;
// nor is an id that is no case of s.
func (s *Suite) CaseFinished(dir, id string) bool {
	caseDir := filepath.Join(dir, CasesDir(s.Experiment.Benchmark), id)
	if s.Des != nil {
		for _, c := range s.Des.Cases {
			if c.ID == id {
				return harness.CaseFinished(c, caseDir)
			}
		}
		return false
	}
	for _, c := range s.Silo.Cases {
		if c.ID == id {
			return suite.CaseFinished(c, caseDir)
		}
	}
	return false
}

// siloFiles are the summary files of the silo suite s.
func siloFiles(s *suite.Suite) []string {
	files := []string{suite.FileSummary, suite.FileAggregate, suite.FileAggregateMD}
	if s.HasTeams() {
		files = append(files, suite.FileSummaryModels, suite.FileAggregateModels)
	}
	return files
}
