package rescore

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/suiterun"
)

// Options tune a rescore.
type Options struct {
	// Scorer is the scorer to apply (the zero value: harness.CurrentScorer).
	Scorer harness.Scorer
	// DryRun computes and reports the changes but writes nothing.
	DryRun bool
}

// maxSuiteCases bounds the cases of a suite a rescore reads.
const maxSuiteCases = 1 << 20

// Dir rescores the run or suite directory dir. Scoring stops at ctx's
// end with nothing written; writing (Apply) is not cut short. The
// report is returned with the error of a failed write too.
func Dir(ctx context.Context, dir string, opt Options) (*scorediff.Report, error) {
	s := opt.Scorer
	if s.Version == "" {
		s = harness.CurrentScorer()
	}
	rep := &scorediff.Report{Benchmark: "des", Dir: dir, Scorer: s.Version, Rules: s.Rules, Was: []string{}, Changes: []scorediff.Change{}, DryRun: opt.DryRun}
	var files []scorediff.File
	if _, err := os.Stat(filepath.Join(dir, harness.FileSuiteConfig)); err == nil {
		rep.Kind = "suite"
		unlock, err := atomicfs.LockDir(dir) // no suite runs here meanwhile
		if err != nil {
			return nil, err
		}
		defer unlock()
		if files, err = scoreSuite(ctx, dir, s, rep); err != nil {
			return nil, err
		}
	} else {
		rep.Kind = "run"
		r, err := scoreRun(ctx, dir, filepath.Base(filepath.Clean(dir)), s)
		if err != nil {
			return nil, err
		}
		files = rep.AddRun("", r.was, r.changes, r.files)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opt.DryRun {
		return rep, nil
	}
	return rep, scorediff.Apply(dir, files, rep)
}

// scoreSuite rescores every finished case of the suite in dir and its
// summary and aggregate files; failed cases keep their summary rows.
func scoreSuite(ctx context.Context, dir string, s harness.Scorer, rep *scorediff.Report) ([]scorediff.File, error) {
	cfgB, err := inputfile.Read(filepath.Join(dir, harness.FileSuiteConfig), harness.FileSuiteConfig, maxJSONFile)
	if err != nil {
		return nil, err
	}
	var cfg harness.SuiteConfig
	if err := strictJSONWith(dir, harness.FileSuiteConfig, cfgB, &cfg, atomicfs.MarshalLine); err != nil {
		return nil, err
	}
	rep.AddWas(orUnrecorded(cfg.Scorer))
	sumB, err := inputfile.Read(filepath.Join(dir, harness.FileSuiteSummary), harness.FileSuiteSummary, maxJSONFile)
	if err != nil {
		return nil, fmt.Errorf("%s has no readable summary (%w): resume the suite first", dir, err)
	}
	rows, err := readCSV(dir, harness.FileSuiteSummary, sumB, harness.SummaryHeader())
	if err != nil {
		return nil, err
	}
	if len(rows) != cfg.CaseCount {
		return nil, fmt.Errorf("%s is an incomplete suite (%d of its %d cases ended, per %s): resume it to its end, then rescore it",
			dir, len(rows), cfg.CaseCount, harness.FileSuiteSummary)
	}
	if len(rows) > maxSuiteCases {
		return nil, fmt.Errorf("%s: more than %d cases", dir, maxSuiteCases)
	}
	aggB, err := inputfile.Read(filepath.Join(dir, harness.FileSuiteAggregate), harness.FileSuiteAggregate, maxJSONFile)
	if err != nil {
		return nil, err
	}
	groupBy, err := aggregateKeys(dir, aggB)
	if err != nil {
		return nil, err
	}
	mdB, err := inputfile.Read(filepath.Join(dir, harness.FileSuiteAggregateMD), harness.FileSuiteAggregateMD, maxJSONFile)
	if err != nil {
		return nil, err
	}

	suite := &harness.Suite{Config: cfg}
	sr := &harness.SuiteReport{Dir: dir, Suite: suite, GroupBy: groupBy}
	units := map[string]float64{} // instance label → time unit
	var files []scorediff.File
	newRows := make([][]string, len(rows))
	for i, row := range rows {
		c, err := caseOfRow(row)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", filepath.Join(dir, harness.FileSuiteSummary), i+2, err)
		}
		suite.Cases = append(suite.Cases, c)
		status, errText := row[7], row[len(row)-1]
		if status == harness.StatusError { // a failed case is no result: its row stays
			sr.Cases = append(sr.Cases, harness.CaseResult{Case: c, Status: status, Err: errText})
			sr.Failed++
			newRows[i] = row
			continue
		}
		rel := filepath.Join(harness.SuiteCasesDir, c.ID)
		if err := realDir(filepath.Join(dir, rel)); err != nil {
			return nil, err
		}
		r, err := scoreRun(ctx, filepath.Join(dir, rel), c.ID, s)
		if err != nil {
			return nil, err
		}
		files = append(files, rep.AddRun(rel, r.was, r.changes, r.files)...)
		units[c.Instance.Label] = r.header.TimeUnitS
		cr := harness.CaseResult{Case: c, Status: r.metrics.Status, Metrics: r.metrics}
		sr.Cases = append(sr.Cases, cr)
		newRows[i] = harness.SummaryRow(&cr)
	}
	for _, si := range cfg.Instances {
		if u, ok := units[si.Label]; ok {
			si.Inst = &factory.Instance{TimeUnitS: u}
		}
	}
	sr.Aggregate = harness.Aggregate(suite, groupBy, sr.Cases)
	newFiles := harness.SuiteFiles(sr)
	newFiles[0].Data = suiterun.CSV(harness.SummaryHeader(), newRows) // failed rows as they were
	olds := map[string][]byte{harness.FileSuiteSummary: sumB, harness.FileSuiteAggregate: aggB, harness.FileSuiteAggregateMD: mdB}
	for _, f := range newFiles {
		files = append(files, scorediff.File{Rel: f.Name, Old: olds[f.Name], New: f.Data})
	}
	agg, err := scorediff.CSVChanges("aggregate", harness.FileSuiteAggregate, len(groupBy), aggB, newFiles[1].Data)
	if err != nil {
		return nil, err
	}
	rep.Changes = append(rep.Changes, agg...)
	cfg.Scorer = s.Version
	for _, si := range cfg.Instances {
		si.Inst = nil
	}
	files = append(files, scorediff.File{Rel: harness.FileSuiteConfig, Old: cfgB, New: atomicfs.MarshalLine(cfg)})
	return files, nil
}

// realDir refuses a case directory that is missing or not a directory
// of its own (a symbolic link would lead the rescore's writes elsewhere).
func realDir(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("a finished case has no directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (a symbolic link?): not rescored", path)
	}
	return nil
}

func orUnrecorded(v string) string {
	if v == "" {
		return harness.ScorerUnrecorded
	}
	return v
}

// strictJSONWith is strictJSON for a file written by enc.
func strictJSONWith(dir, name string, b []byte, v any, enc func(any) []byte) error {
	path := filepath.Join(dir, name)
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return scorediff.KeysKept(path, b, enc(v))
}

// readCSV reads a CSV file whose header must be head.
func readCSV(dir, name string, b []byte, head []string) ([][]string, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], head) {
		return nil, fmt.Errorf("%s does not have the columns this build writes: not rescored", filepath.Join(dir, name))
	}
	for _, r := range recs[1:] {
		untrusted.CSVValues(r)
	}
	return recs[1:], nil
}

// aggregateKeys are the group keys of suite_aggregate.csv: its columns
// before "cases".
func aggregateKeys(dir string, b []byte) ([]string, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("%s: not an aggregate file (%v)", filepath.Join(dir, harness.FileSuiteAggregate), err)
	}
	i := slices.Index(recs[0], "cases")
	keys := recs[0][:max(i, 0)]
	if i < 0 || !slices.Equal(recs[0], harness.AggregateHeader(keys)) {
		return nil, fmt.Errorf("%s does not have the columns this build writes: not rescored", filepath.Join(dir, harness.FileSuiteAggregate))
	}
	if _, err := harness.ParseGroupBy(strings.Join(keys, ",")); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, harness.FileSuiteAggregate), err)
	}
	return keys, nil
}

// caseOfRow is the case of a summary row, as far as the summary and the
// aggregate read it.
func caseOfRow(row []string) (harness.Case, error) {
	seed, err := strconv.ParseUint(row[6], 10, 64)
	if err != nil {
		return harness.Case{}, fmt.Errorf("seed %q: %w", row[6], err)
	}
	id := row[0]
	if !filepath.IsLocal(id) || filepath.Base(id) != id {
		return harness.Case{}, fmt.Errorf("case id %q is not a directory name", id)
	}
	return harness.Case{ID: id, Instance: &harness.SuiteInstance{Label: row[1]}, Paradigm: coord.AuthorityMode{ID: row[2]},
		Controller: row[3], Model: row[4], Framework: row[5], Seed: seed}, nil
}
