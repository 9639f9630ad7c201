// Package rescore recomputes the scores of stored SILO-BENCH runs
// (`coordbench silo rescore`) under a suite.Scorer from what their
// result.json records of each agent (its submission, what it saw and was
// informed of, its model usage) and the instance, rebuilt from the task,
// mode, seed and N: no agent or model is run. A run directory gets a new
// result.json (a suite's run also its manifest's hash and scorer
// version), a suite directory that for each finished run and new
// summary and aggregate files (RCC among them); the old files are kept
// in a backup directory and the difference report, per case and figure,
// goes to rescore.json (docs/silo-rescore.md).
package rescore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/silo/task"
)

// Bounds on what a rescore reads.
const (
	maxJSONFile = 64 << 20 // result.json, manifest.json, silo_suite.json, a summary file
	maxAgents   = 1000     // N of one run (the paper's largest team is 100)
	maxCases    = 1 << 20  // cases of one suite
)

// Options tune a rescore.
type Options struct {
	// Scorer is the scorer to apply (the zero value: suite.CurrentScorer).
	Scorer suite.Scorer
	// DryRun computes and reports the changes but writes nothing.
	DryRun bool
}

// Dir rescores the run or suite directory dir. Scoring stops at ctx's
// end with nothing written; writing is not cut short.
func Dir(ctx context.Context, dir string, opt Options) (*scorediff.Report, error) {
	s := opt.Scorer
	if s.Version == "" {
		s = suite.CurrentScorer()
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give a silo run or suite directory", dir)
	}
	rep := &scorediff.Report{Benchmark: "silo", Dir: dir, Scorer: s.Version, Rules: s.Rules, Was: []string{}, Changes: []scorediff.Change{}, DryRun: opt.DryRun}
	var files []scorediff.File
	switch {
	case exists(filepath.Join(dir, suite.FileConfig)):
		rep.Kind = "suite"
		unlock, err := atomicfs.LockDir(dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if files, err = scoreSuite(ctx, dir, s, rep); err != nil {
			return nil, err
		}
	case exists(filepath.Join(dir, play.FileResult)):
		rep.Kind = "run"
		r, err := scoreRun(ctx, dir, filepath.Base(filepath.Clean(dir)), s)
		if err != nil {
			return nil, err
		}
		files = rep.AddRun("", r.was, r.changes, r.files)
	default:
		return nil, fmt.Errorf("%s is neither a silo run directory (no %s) nor a silo suite directory (no %s)", dir, play.FileResult, suite.FileConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opt.DryRun {
		return rep, nil
	}
	return rep, scorediff.Apply(dir, files, rep)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// scored is one run rescored.
type scored struct {
	was      string
	manifest *suite.Manifest // nil for a "silo run" directory
	result   *round.Result
	files    []scorediff.File
	changes  []scorediff.Change
}

// scoreRun rescores the run in dir; id names it in changes.
func scoreRun(ctx context.Context, dir, id string, s suite.Scorer) (*scored, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resPath := filepath.Join(dir, play.FileResult)
	resB, err := inputfile.Read(resPath, play.FileResult, maxJSONFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a finished run (no %s): it was interrupted or is still running; run it again", dir, play.FileResult)
		}
		return nil, err
	}
	var res round.Result
	if err := readJSON(resPath, resB, &res); err != nil {
		return nil, err
	}
	out := &scored{was: suite.ScorerUnrecorded}
	manPath := filepath.Join(dir, suite.FileManifest)
	var manB []byte
	if exists(manPath) {
		if manB, err = inputfile.Read(manPath, suite.FileManifest, maxJSONFile); err != nil {
			return nil, err
		}
		out.manifest = &suite.Manifest{}
		if err := readJSON(manPath, manB, out.manifest); err != nil {
			return nil, err
		}
		if out.manifest.ResultSHA256 != sha(resB) {
			return nil, fmt.Errorf("%s does not match the SHA-256 its manifest records: the run was changed after it was written; not rescored", resPath)
		}
		out.was = cmp.Or(out.manifest.Scorer, suite.ScorerUnrecorded)
	}
	if res.N < 1 || res.N > maxAgents {
		return nil, fmt.Errorf("%s: N=%d is out of range (1 to %d)", resPath, res.N, maxAgents)
	}
	t, err := task.Lookup(res.Task)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resPath, err)
	}
	if m := out.manifest; m != nil && m.TaskRevision != t.Revision {
		return nil, fmt.Errorf("%s: task %s has changed since the run (revision %d, now %d): its gold answers may differ; rerun it instead",
			dir, t.ID, m.TaskRevision, t.Revision)
	}
	in, err := suite.InstanceOf(suite.Case{Task: t, N: res.N, Mode: res.Mode, Seed: res.Seed, MergedFrom: res.MergedFrom})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resPath, err)
	}
	if err := round.Rescore(&res, in); err != nil {
		return nil, fmt.Errorf("%s: %w", resPath, err)
	}
	out.result = &res
	newRes := atomicfs.MarshalLine(&res)
	if out.changes, err = scorediff.JSONChanges(id, play.FileResult, resB, newRes); err != nil {
		return nil, err
	}
	out.files = []scorediff.File{{Rel: play.FileResult, Old: resB, New: newRes}}
	if m := out.manifest; m != nil {
		m.Scorer, m.ResultSHA256 = s.Version, sha(newRes)
		out.files = append(out.files, scorediff.File{Rel: suite.FileManifest, Old: manB, New: atomicfs.MarshalLine(m)})
	}
	return out, nil
}

// readJSON decodes b (the file at path) into v, refusing keys v would
// drop (a newer build's).
func readJSON(path string, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return scorediff.KeysKept(path, b, atomicfs.MarshalLine(v))
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// scoreSuite rescores every finished run of the suite in dir and its
// summary and aggregate files.
func scoreSuite(ctx context.Context, dir string, s suite.Scorer, rep *scorediff.Report) ([]scorediff.File, error) {
	cfgPath := filepath.Join(dir, suite.FileConfig)
	cfgB, err := inputfile.Read(cfgPath, suite.FileConfig, maxJSONFile)
	if err != nil {
		return nil, err
	}
	var cfg suite.Config
	if err := readJSON(cfgPath, cfgB, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.Cases) > maxCases {
		return nil, fmt.Errorf("%s: more than %d cases", cfgPath, maxCases)
	}
	rep.AddWas(cmp.Or(cfg.Scorer, suite.ScorerUnrecorded))
	olds := map[string][]byte{}
	for _, name := range []string{suite.FileSummary, suite.FileAggregate, suite.FileAggregateMD, suite.FileSummaryModels, suite.FileAggregateModels} {
		b, err := inputfile.Read(filepath.Join(dir, name), name, maxJSONFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		olds[name] = b
	}
	if olds[suite.FileSummary] == nil {
		return nil, fmt.Errorf("%s has no %s: resume the suite first", dir, suite.FileSummary)
	}
	var files []scorediff.File
	var finished []suite.CaseResult
	var cases []suite.Case
	failures := 0
	for _, id := range cfg.Cases {
		if !filepath.IsLocal(id) || filepath.Base(id) != id {
			return nil, fmt.Errorf("%s: case id %q is not a directory name", cfgPath, id)
		}
		rel := filepath.Join(suite.RunsDir, id)
		if st, err := os.Lstat(filepath.Join(dir, rel)); err == nil && !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory (a symbolic link?): not rescored", filepath.Join(dir, rel))
		}
		if !exists(filepath.Join(dir, rel, play.FileResult)) {
			if exists(filepath.Join(dir, "failed", id)) {
				failures++
				cases = append(cases, suite.Case{ID: id})
				continue
			}
			return nil, fmt.Errorf("%s is an incomplete suite (case %s has not run): resume it to its end, then rescore it", dir, id)
		}
		r, err := scoreRun(ctx, filepath.Join(dir, rel), id, s)
		if err != nil {
			return nil, err
		}
		if r.manifest == nil || r.manifest.Case != id {
			return nil, fmt.Errorf("%s: no manifest of case %s", filepath.Join(dir, rel), id)
		}
		c, err := caseOf(r.manifest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rel, suite.FileManifest), err)
		}
		files = append(files, rep.AddRun(rel, r.was, r.changes, r.files)...)
		cases = append(cases, c)
		finished = append(finished, suite.CaseResult{Case: c, Result: r.result})
	}
	baseline, noBaseline := cfg.Baseline, false
	if baseline != suite.BaselineMerged && baseline != suite.BaselineSeeded { // "none": the baseline the aggregate names, if any
		baseline, noBaseline = recordedBaseline(olds[suite.FileAggregate]), true
	}
	st := &suite.Suite{Options: suite.Options{Baseline: baseline, NoBaseline: noBaseline}, Cases: cases}
	sr := suite.NewReport(st, dir, finished, failures, s.Rules)
	for _, f := range suite.Files(sr) {
		files = append(files, scorediff.File{Rel: f.Name, Old: olds[f.Name], New: f.Data})
		if f.Name == suite.FileAggregate {
			agg, err := scorediff.CSVChanges("aggregate", f.Name, 5, olds[f.Name], f.Data)
			if err != nil {
				return nil, err
			}
			rep.Changes = append(rep.Changes, agg...)
		}
	}
	cfg.Scorer = s.Version
	files = append(files, scorediff.File{Rel: suite.FileConfig, Old: cfgB, New: atomicfs.MarshalLine(&cfg)})
	return files, nil
}

// recordedBaseline is the rcc_baseline an aggregate file names (merged
// when none does).
func recordedBaseline(agg []byte) string {
	recs, err := csv.NewReader(bytes.NewReader(agg)).ReadAll()
	if err == nil && len(recs) > 0 {
		if k := slices.Index(recs[0], "rcc_baseline"); k >= 0 {
			for _, r := range recs[1:] {
				if k < len(r) && r[k] != "" {
					return untrusted.CSVValue(r[k])
				}
			}
		}
	}
	return suite.BaselineMerged
}

// caseOf is the case a run's manifest records, as far as the summary
// and aggregate files read it.
func caseOf(m *suite.Manifest) (suite.Case, error) {
	t, err := task.Lookup(m.Task)
	if err != nil {
		return suite.Case{}, err
	}
	c := suite.Case{ID: m.Case, Task: t, N: m.N, Protocol: proto.Protocol(m.Protocol), Agent: m.Agent, Mode: m.Mode, Seed: m.Seed,
		MergedFrom: m.MergedFrom, Players: play.Players{Kind: m.Agent}}
	switch {
	case m.LLM != nil:
		c.Players = play.Players{Kind: play.AgentLLM, LLM: &play.LLMAgent{Model: m.LLM.Model}}
	case m.Team != nil:
		tm := &play.Team{Shares: m.Team.Shares}
		for _, mem := range m.Team.Members {
			tm.Members = append(tm.Members, play.Member{LLM: &play.LLMAgent{Model: mem.Model}, Count: mem.Count})
		}
		c.Players = play.Players{Kind: play.AgentTeam, Team: tm}
	}
	return c, nil
}
