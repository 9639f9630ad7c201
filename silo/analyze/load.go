package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/silo/task"
	"github.com/coordbench/coordbench/suiterun"
)

// Bounds on what Load reads.
const (
	// DefaultMaxRuns is the default bound on the runs of one directory
	// (Options.MaxRuns); the paper's whole grid is 1,620 runs.
	DefaultMaxRuns = 10000
	// MaxAgents bounds N of one run (the paper's largest team is 100).
	MaxAgents = 1000
	// maxResultBytes bounds one result.json.
	maxResultBytes = 64 << 20
)

// NoAgent is Run.Agent for a run directory without a manifest (written by
// "silo run", which records no agent label).
const NoAgent = "-"

// Options bound what Analyze reads.
type Options struct {
	// MaxRuns: a directory with more finished runs is refused (0:
	// DefaultMaxRuns).
	MaxRuns int
}

// Outcome is one agent's outcome, from result.json.
type Outcome struct {
	Submitted bool
	Correct   bool
	// Labels holds the agent's failure labels by result.json field:
	// "labels", and any other per-agent field named labels_* or *_labels
	// that holds a list of strings (say, a second labelling).
	Labels map[string][]string
}

// Run is one analysed run.
type Run struct {
	ID    string // the manifest's case id, else the directory name
	Task  string
	Level int // 1, 2, 3 (0 if the task id is not a SILO-BENCH one)
	N     int
	// MergedFrom is k for a merged baseline run (N = 1 on the data of an
	// N = k instance), 0 otherwise.
	MergedFrom int
	Protocol   string
	Agent      string // agent label from the manifest; NoAgent without one (a "silo run" directory)
	Mode       string
	Seed       uint64
	Success    bool
	S          float64
	Rounds     int
	Agents     []Outcome // index = agent id
	Topology   Topology
	// Context holds the prompt tokens of each model call, from turns.jsonl
	// (nil without one: scripted agents).
	Context []int64
}

// runDirs returns the run directories of dir and whether dir is a suite.
func runDirs(dir string, maxRuns int) ([]string, bool, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, false, err
	} else if !st.IsDir() {
		return nil, false, fmt.Errorf("%s: not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, play.FileResult)); err == nil {
		return []string{dir}, false, nil
	}
	runs := filepath.Join(dir, suite.RunsDir)
	st, err := os.Stat(runs)
	if err != nil || !st.IsDir() {
		return nil, false, fmt.Errorf("%s: neither a run directory (no %s) nor a suite directory (no %s/); "+
			"give a directory that silo run or silo suite wrote", dir, play.FileResult, suite.RunsDir)
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return nil, true, err
	}
	var out []string
	for _, e := range entries {
		// Temporaries (suiterun.TmpPrefix) and other hidden names are not
		// finished runs; failed runs live in failed/, outside runs/.
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), suiterun.TmpPrefix) {
			continue
		}
		out = append(out, filepath.Join(runs, e.Name()))
		if len(out) > maxRuns {
			return nil, true, opterr.New("MaxRuns", "%s: more than %d runs: raise it to analyse them all", runs, maxRuns)
		}
	}
	if len(out) == 0 {
		return nil, true, fmt.Errorf("%s: no finished runs", runs)
	}
	sort.Strings(out)
	return out, true, nil
}

// resultFile is the part of result.json the analyses use; agents are read
// field by field so that label fields added later are picked up.
type resultFile struct {
	Task       string                       `json:"task"`
	Mode       string                       `json:"mode"`
	Seed       uint64                       `json:"seed"`
	N          int                          `json:"n"`
	MergedFrom int                          `json:"merged_from"`
	Protocol   string                       `json:"protocol"`
	Success    bool                         `json:"success"`
	S          float64                      `json:"S"`
	Rounds     int                          `json:"rounds"`
	Agents     []map[string]json.RawMessage `json:"agents"`
}

// loadRun reads one run directory: result.json, manifest.json if present,
// and run.db.
func loadRun(dir string) (Run, error) {
	rf, err := readResult(filepath.Join(dir, play.FileResult))
	if err != nil {
		return Run{}, err
	}
	r := Run{ID: filepath.Base(dir), Agent: NoAgent, Task: rf.Task, Level: levelOf(rf.Task), N: rf.N, MergedFrom: rf.MergedFrom,
		Protocol: rf.Protocol, Mode: rf.Mode, Seed: rf.Seed, Success: rf.Success, S: rf.S, Rounds: rf.Rounds}
	if abs, err := filepath.Abs(dir); err == nil {
		r.ID = filepath.Base(abs)
	}
	var man suite.Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, suite.FileManifest), &man); err == nil {
		r.ID, r.Agent = man.Case, man.Agent
	} else if !errors.Is(err, os.ErrNotExist) {
		return Run{}, err
	}
	for i, a := range rf.Agents {
		o, err := outcomeOf(a)
		if err != nil {
			return Run{}, fmt.Errorf("%s: agent %d: %w", filepath.Join(dir, play.FileResult), i, err)
		}
		r.Agents = append(r.Agents, o)
	}
	db := filepath.Join(dir, play.FileDB)
	if _, err := os.Stat(db); err != nil {
		return Run{}, fmt.Errorf("%s: no %s (every finished run has its run database): %w", dir, play.FileDB, err)
	}
	g, err := readGraph(db, r.Protocol, r.N)
	if err != nil {
		return Run{}, err
	}
	r.Topology = topologyOf(g)
	r.Context, err = readContext(filepath.Join(dir, FileTurnsLog))
	if err != nil {
		return Run{}, err
	}
	return r, nil
}

func readResult(path string) (*resultFile, error) {
	b, err := inputfile.Read(path, "run result", maxResultBytes)
	if err != nil {
		return nil, err
	}
	var rf resultFile
	if err := json.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case rf.N < 1 || rf.N > MaxAgents:
		return nil, fmt.Errorf("%s: n = %d, want 1..%d", path, rf.N, MaxAgents)
	case len(rf.Agents) != rf.N:
		return nil, fmt.Errorf("%s: %d agents for n = %d", path, len(rf.Agents), rf.N)
	case rf.MergedFrom < 0 || rf.MergedFrom > MaxAgents || (rf.MergedFrom > 0 && rf.N != 1):
		return nil, fmt.Errorf("%s: merged_from = %d with n = %d, want 0, or 2..%d with n = 1", path, rf.MergedFrom, rf.N, MaxAgents)
	case rf.Task == "" || rf.Protocol == "":
		return nil, fmt.Errorf("%s: no task or protocol (not a SILO-BENCH result)", path)
	}
	return &rf, nil
}

// isLabelField reports whether a per-agent result field holds labels.
func isLabelField(k string) bool {
	return k == "labels" || strings.HasPrefix(k, "labels_") || strings.HasSuffix(k, "_labels")
}

func outcomeOf(a map[string]json.RawMessage) (Outcome, error) {
	var o Outcome
	if v, ok := a["submitted"]; ok {
		if err := json.Unmarshal(v, &o.Submitted); err != nil {
			return o, fmt.Errorf("submitted: %w", err)
		}
	}
	if v, ok := a["correct"]; ok {
		if err := json.Unmarshal(v, &o.Correct); err != nil {
			return o, fmt.Errorf("correct: %w", err)
		}
	}
	for k, v := range a {
		if !isLabelField(k) {
			continue
		}
		var ls []string
		if json.Unmarshal(v, &ls) != nil {
			continue // not a list of strings: not a labelling
		}
		if o.Labels == nil {
			o.Labels = map[string][]string{}
		}
		o.Labels[k] = dedup(ls)
	}
	return o, nil
}

func dedup(ls []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// levelOf is the task's level, from the task table or the id's prefix.
func levelOf(id string) int {
	if t, err := task.Lookup(id); err == nil {
		return t.Level
	}
	switch {
	case strings.HasPrefix(id, "III-"):
		return 3
	case strings.HasPrefix(id, "II-"):
		return 2
	case strings.HasPrefix(id, "I-"):
		return 1
	}
	return 0
}
