package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/suiterun"
)

// Shard is one of Count static shards of a sweep: the cases whose
// position in suite order is Index modulo Count. Index is 0-based, as
// Kubernetes' JOB_COMPLETION_INDEX is (and as a Slurm array --array=0-<N-1>
// gives SLURM_ARRAY_TASK_ID).
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole is the shard of a sweep that is not cut: every case.
func Whole() Shard { return Shard{Index: 0, Count: 1} }

// ParseShard parses "i/N" (0 <= i < N); "" is Whole. Its errors, and
// Select's, are *opterr.Error values of option "Shard".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Whole(), nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || ierr != nil || nerr != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, opterr.New("Shard", "%q: want i/N with 0 <= i < N, e.g. 0/4 (shards are numbered from 0)", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Of is the shard case number k (in suite order) belongs to.
func (s Shard) Of(k int) int { return k % s.Count }

// Select returns the ids of the shard's cases, in suite order. A shard
// with no case is an error: the sweep has fewer cases than shards.
func (s Shard) Select(ids []string) ([]string, error) {
	if s.Count > len(ids) {
		return nil, opterr.New("Shard", "%s: the experiment has %d cases, fewer than %d shards: use at most %d shards", s, len(ids), s.Count, len(ids))
	}
	var out []string
	for k := s.Index; k < len(ids); k += s.Count {
		out = append(out, ids[k])
	}
	return out, nil
}

// MarkerFile marks a directory as a shard of an experiment.
const MarkerFile = "sweep.json"

// maxMarkerSize bounds sweep.json.
const maxMarkerSize = 4 << 20

// Marker is MarkerFile: which experiment and shard a directory holds.
type Marker struct {
	Tool      string `json:"tool"`
	Benchmark string `json:"benchmark"`
	// ExperimentID is Experiment.ID; Experiment its canonical JSON.
	ExperimentID string          `json:"experiment_id"`
	Experiment   json.RawMessage `json:"experiment"`
	// ExperimentDir is where the experiment file's relative paths were
	// read from (not part of the identity).
	ExperimentDir string `json:"experiment_dir,omitempty"`
	Shard         Shard  `json:"shard"`
	// Cases are the shard's cases; TotalCases the experiment's.
	Cases      int `json:"cases"`
	TotalCases int `json:"total_cases"`
	// Prices are the models' prices by label (not part of the identity:
	// sweep collect and sweep status price the cases with them).
	Prices map[string]Price `json:"prices,omitempty"`
}

// Mark records in dir that it holds shard sh of e, with cases of total
// cases. A directory that holds another experiment or another shard is
// refused: their cases would mix.
func Mark(dir string, e *Experiment, sh Shard, cases, total int) error {
	m := Marker{Tool: "coordbench", Benchmark: e.Benchmark, ExperimentID: e.ID(), Experiment: e.Canonical(),
		ExperimentDir: e.Dir, Shard: sh, Cases: cases, TotalCases: total}
	for _, x := range e.ModelList() {
		if x.Price != (Price{}) {
			if m.Prices == nil {
				m.Prices = map[string]Price{}
			}
			m.Prices[x.Label()] = x.Price
		}
	}
	prev, err := ReadMarker(dir)
	switch {
	case err == nil:
		if prev.ExperimentID != m.ExperimentID {
			return fmt.Errorf("%s holds shard %s of another experiment (%s, not %s): use a new directory", dir, prev.Shard, short(prev.ExperimentID), short(m.ExperimentID))
		}
		if prev.Shard != sh {
			return fmt.Errorf("%s holds shard %s of this experiment, not %s: use a new directory per shard", dir, prev.Shard, sh)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfs.WriteFile(filepath.Join(dir, MarkerFile), suiterun.TmpPrefix, atomicfs.MarshalLine(m))
}

func short(id string) string { return id[:min(12, len(id))] }

// ReadMarker reads dir's MarkerFile; the error wraps os.ErrNotExist if
// there is none.
func ReadMarker(dir string) (*Marker, error) {
	path := filepath.Join(dir, MarkerFile)
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	data, err := inputfile.Read(path, "sweep marker", maxMarkerSize)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Marker
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: not a sweep marker: %v", path, err)
	}
	if m.Shard.Count < 1 || m.Shard.Index < 0 || m.Shard.Index >= m.Shard.Count {
		return nil, fmt.Errorf("%s: shard %s is not i/N with 0 <= i < N", path, m.Shard)
	}
	return &m, nil
}

// ExperimentOf rebuilds the experiment a marker records, checking that it
// is the one its id names.
func (m *Marker) ExperimentOf() (*Experiment, error) {
	dec := json.NewDecoder(bytes.NewReader(m.Experiment))
	dec.DisallowUnknownFields()
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("sweep marker: experiment: %v", err)
	}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("sweep marker: experiment: %v", err)
	}
	if e.ID() != m.ExperimentID {
		return nil, fmt.Errorf("sweep marker: the experiment does not match its id %s (written by another version of coordbench?)", short(m.ExperimentID))
	}
	e.Dir = m.ExperimentDir
	e.setPrices(m.Prices)
	return &e, nil
}

// CasesDir is the subdirectory of finished cases of a benchmark's suites.
func CasesDir(benchmark string) string {
	if benchmark == BenchmarkSilo {
		return "runs"
	}
	return "cases"
}

// Collected is what Collect assembled.
type Collected struct {
	Experiment *Experiment
	Shards     int
	// From maps each case id copied to the shard directory it came from.
	From map[string]string
}

// Collect copies the finished cases of the shard directories dirs, all
// shards of one experiment, into out (which must be empty or absent),
// and returns the experiment. It refuses shards of different experiments,
// a shard given twice or missing, and shards with failed cases (rerun
// the shard first: sweep run retries them). The caller then writes the
// summaries with the suite's own runner over out (suiterun RunNone). An
// out that is not empty is an *opterr.Error of option "out".
func Collect(out string, dirs []string) (*Collected, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no shard directory given")
	}
	var first *Marker
	byIndex := map[int]string{}
	for _, d := range dirs {
		m, err := ReadMarker(d)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a sweep directory (no %s): give the directories sweep run wrote", d, MarkerFile)
		}
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = m
		} else if m.ExperimentID != first.ExperimentID {
			return nil, fmt.Errorf("%s and %s hold different experiments (%s and %s): collect the shards of one experiment", dirs[0], d, short(first.ExperimentID), short(m.ExperimentID))
		} else if m.Shard.Count != first.Shard.Count {
			return nil, fmt.Errorf("%s is shard %s and %s shard %s: the shards of one collect are cut the same way", dirs[0], first.Shard, d, m.Shard)
		} else if !maps.Equal(m.Prices, first.Prices) {
			// Prices are not part of the experiment's identity; one cost
			// file cannot price the shards two ways.
			return nil, fmt.Errorf("%s and %s were run with different model prices: collect shards run with the same prices", dirs[0], d)
		}
		if prev, dup := byIndex[m.Shard.Index]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %s", prev, d, m.Shard)
		}
		byIndex[m.Shard.Index] = d
	}
	var missing []string
	for i := range first.Shard.Count {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shards %s of %d are missing: give every shard's directory", strings.Join(missing, ", "), first.Shard.Count)
	}
	e, err := first.ExperimentOf()
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return nil, opterr.New("out", "%s is not empty: collect into a new directory", out)
	}
	casesDir := CasesDir(e.Benchmark)
	for _, d := range dirs {
		if failed := entries(filepath.Join(d, suiterun.FailedDir)); len(failed) > 0 {
			return nil, fmt.Errorf("shard %s has %d failed cases (%s): rerun its sweep run, which retries them, then collect",
				d, len(failed), strings.Join(failed[:min(3, len(failed))], ", "))
		}
	}
	if err := os.MkdirAll(filepath.Join(out, casesDir), 0o755); err != nil {
		return nil, err
	}
	c := &Collected{Experiment: e, Shards: first.Shard.Count, From: map[string]string{}}
	for _, d := range dirs {
		for _, id := range entries(filepath.Join(d, casesDir)) {
			if prev, dup := c.From[id]; dup {
				return nil, fmt.Errorf("case %s is in both %s and %s", id, prev, d)
			}
			if err := CopyTree(filepath.Join(d, casesDir, id), filepath.Join(out, casesDir, id), 0); err != nil {
				return nil, err
			}
			c.From[id] = d
		}
	}
	// The shards' discarded attempts spent money too: their ledgers go
	// into one, in shard order.
	var log *AttemptLog
	for i := range first.Shard.Count {
		att, err := ReadAttempts(byIndex[i])
		if err != nil {
			return nil, err
		}
		for _, a := range att {
			if log == nil {
				if log, err = OpenAttemptLog(out); err != nil {
					return nil, err
				}
			}
			if err := log.Append(a); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// entries are the names in dir, temporaries left out, sorted; none if dir
// is absent.
func entries(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), suiterun.TmpPrefix) && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// ExperimentOfDirs returns the experiment recorded in the sweep
// directories dirs (the --out of sweep run, one or several shards), which
// must all hold the same one. A directory without a marker is an error
// wrapping os.ErrNotExist.
func ExperimentOfDirs(dirs []string) (*Experiment, error) {
	var first *Marker
	for _, d := range dirs {
		m, err := ReadMarker(d)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a sweep directory (no %s): give the directories sweep run wrote: %w", d, MarkerFile, err)
		}
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = m
		} else if m.ExperimentID != first.ExperimentID {
			return nil, fmt.Errorf("%s and %s hold different experiments: give the directories of one experiment", dirs[0], d)
		}
	}
	if first == nil {
		return nil, errors.New("no sweep directory given")
	}
	return first.ExperimentOf()
}
