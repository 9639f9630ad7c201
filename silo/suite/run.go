package suite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// Manifest records how a run directory was produced; a later suite run
// keeps the directory only if the manifest matches the case.
type Manifest struct {
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	Case         string `json:"case_id"`
	Task         string `json:"task"`
	N            int    `json:"n"`
	Mode         string `json:"mode"`
	Seed         uint64 `json:"seed"`
	Protocol     string `json:"protocol"`
	Agent        string `json:"agent"`
	MaxRounds    int    `json:"max_rounds"`
	MaxCalls     int    `json:"max_calls_per_turn"`
	ResultSHA256 string `json:"result_sha256"`
	// LLM is set for LLM agents: the model and every setting that changes
	// its replies or the agents' behaviour.
	LLM *LLMManifest `json:"llm,omitempty"`
}

func manifestOf(c Case) Manifest {
	m := Manifest{Tool: "coordbench", Version: Version(), Case: c.ID, Task: c.Task.ID, N: c.N, Mode: c.Mode,
		Seed: c.Seed, Protocol: string(c.Protocol), Agent: c.Players.Label(), MaxRounds: c.Limits.MaxRounds,
		MaxCalls: c.Limits.MaxCallsPerTurn}
	if c.Players.Kind == AgentLLM && c.Players.LLM != nil {
		m.LLM = c.Players.LLM.manifest()
	}
	return m
}

// sameManifest compares two manifests field by field (LLM by value).
func sameManifest(a, b Manifest) bool {
	la, lb := a.LLM, b.LLM
	a.LLM, b.LLM = nil, nil
	if a != b || (la == nil) != (lb == nil) {
		return false
	}
	if la == nil {
		return true
	}
	return string(atomicfs.MarshalLine(la)) == string(atomicfs.MarshalLine(lb))
}

// RunOptions tune how a suite runs; none changes its results.
type RunOptions struct {
	Workers int // cases run at once (default runtime.NumCPU())
	// Progress, if set, is called once before the first case (Last nil),
	// then after every case that ends, always from the same goroutine.
	Progress func(Progress)
}

// Progress is the state of a running suite.
type Progress struct {
	Total, Skipped, ToRun, Done, Failed int
	Elapsed                             time.Duration
	Last                                *CaseResult
}

// CaseResult is one finished (or failed) case.
type CaseResult struct {
	Case    Case
	Result  *round.Result // nil when Err is set
	Err     string
	Skipped bool // finished by an earlier run
}

// Report is what Run did.
type Report struct {
	Dir         string
	Suite       *Suite
	Cases       []CaseResult // the finished cases, in suite order
	Failures    []CaseResult // cases whose run failed (rerun next time)
	Ran, Skip   int
	Interrupted bool // cancelled before every case had run
	Aggregate   []Aggregate
}

// Complete reports whether every case has finished.
func (r *Report) Complete() bool { return len(r.Cases) == len(r.Suite.Cases) }

// Run runs the cases of s into dir that are not there already.
//
// Each case is written into dir/runs/.tmp-<id>-<random>/ and renamed to
// dir/runs/<id>/ (result.json, run.db, calls.jsonl, manifest.json) once
// complete; temporaries of a killed run are removed at start. A case whose
// directory holds a manifest matching the case (tool version, task, N,
// mode, seed, protocol, agent, round cap) and an intact result.json is
// not rerun. A failed case leaves no directory and runs again next time.
// When ctx is cancelled no new case starts; cases in flight finish. The
// summary and aggregates always describe the finished cases. The directory
// is locked while the suite runs: a second suite into it fails at once.
func Run(ctx context.Context, s *Suite, dir string, opt RunOptions) (*Report, error) {
	start := time.Now()
	runsDir := filepath.Join(dir, RunsDir)
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{runsDir, dir} {
		if err := atomicfs.RemoveTemps(d, tmpPrefix); err != nil {
			return nil, err
		}
	}
	unlock, err := atomicfs.LockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep := &Report{Dir: dir, Suite: s}
	results := make([]*CaseResult, len(s.Cases))
	var todo []int
	for i, c := range s.Cases {
		if r, ok := finishedCase(c, filepath.Join(runsDir, c.ID)); ok {
			results[i] = &r
			rep.Skip++
		} else {
			todo = append(todo, i)
		}
	}
	prog := Progress{Total: len(s.Cases), Skipped: rep.Skip, ToRun: len(todo)}
	report := func(last *CaseResult) {
		if opt.Progress != nil {
			prog.Elapsed, prog.Last = time.Since(start), last
			opt.Progress(prog)
		}
	}
	report(nil)

	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	runCtx := context.WithoutCancel(ctx) // cases in flight finish
	type done struct {
		i int
		r CaseResult
	}
	jobs, out := make(chan int), make(chan done)
	var wg sync.WaitGroup
	for range min(workers, max(len(todo), 1)) {
		wg.Go(func() {
			for i := range jobs {
				if ctx.Err() != nil {
					continue
				}
				out <- done{i, runCase(runCtx, s.Cases[i], runsDir)}
			}
		})
	}
	go func() {
		defer close(jobs)
		for _, i := range todo {
			if ctx.Err() != nil {
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()
	for d := range out {
		rep.Ran++
		prog.Done++
		if d.r.Err != "" {
			prog.Failed++
			rep.Failures = append(rep.Failures, d.r)
		} else {
			results[d.i] = &d.r
		}
		report(&d.r)
	}
	for _, r := range results {
		if r != nil {
			rep.Cases = append(rep.Cases, *r)
		}
	}
	rep.Interrupted = ctx.Err() != nil && len(rep.Cases)+len(rep.Failures) < len(s.Cases)
	rep.Aggregate = Aggregates(rep.Cases)
	if err := writeFiles(dir, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// RunInto plays one run of instance in with the given players into dir
// (which must exist and hold no run): the run database (FileDB), the
// tool-call log (FileCalls), for LLM agents the turn log (turns.jsonl,
// timing.jsonl), and result.json (FileResult), whose bytes it returns with
// the result. coordbench silo run and every suite case use it.
func RunInto(ctx context.Context, in *task.Instance, p proto.Protocol, players Players, lim Limits, dir string) (*round.Result, []byte, error) {
	agents, teamLog, err := players.team(in, p, dir)
	if err != nil {
		return nil, nil, err
	}
	writeLog := func(st *proto.Store) error {
		if teamLog != nil {
			if err := teamLog(st); err != nil {
				return err
			}
		}
		entries, err := st.Log()
		if err != nil {
			return err
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		for i := range entries {
			if err := enc.Encode(&entries[i]); err != nil {
				return err
			}
		}
		return os.WriteFile(filepath.Join(dir, FileCalls), []byte(b.String()), 0o644)
	}
	res, err := round.Run(ctx, round.Config{Instance: in, Protocol: p, MaxRounds: lim.MaxRounds, MaxCallsPerTurn: lim.MaxCallsPerTurn,
		DB: filepath.Join(dir, FileDB), OnEnd: writeLog}, agents)
	if err != nil {
		return nil, nil, err
	}
	b := atomicfs.MarshalLine(res)
	if err := os.WriteFile(filepath.Join(dir, FileResult), b, 0o644); err != nil {
		return nil, nil, err
	}
	return res, b, nil
}

// runCase runs one case into a temporary directory and moves it into place.
func runCase(ctx context.Context, c Case, runsDir string) CaseResult {
	r := CaseResult{Case: c}
	fail := func(err error) CaseResult {
		r.Result, r.Err = nil, err.Error()
		return r
	}
	tmp, err := os.MkdirTemp(runsDir, tmpPrefix+c.ID+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	var in *task.Instance
	if c.Mode == task.ModeOfficial {
		in, err = task.Official(c.Task.ID, c.N)
	} else {
		in, err = task.Seeded(c.Task.ID, c.N, c.Seed)
	}
	if err != nil {
		return fail(err)
	}
	players := c.Players
	if players.LLM != nil { // a model failure fails the case (llmagent.Config.AbortOnModelError)
		l := *players.LLM
		l.Config.AbortOnModelError = true
		players.LLM = &l
	}
	res, b, err := RunInto(ctx, in, c.Protocol, players, c.Limits, tmp)
	if err != nil {
		return fail(err)
	}
	man := manifestOf(c)
	man.ResultSHA256 = sha(b)
	if err := os.WriteFile(filepath.Join(tmp, FileManifest), atomicfs.MarshalLine(man), 0o644); err != nil {
		return fail(err)
	}
	if err := atomicfs.MoveIntoPlace(tmp, filepath.Join(runsDir, c.ID), runsDir, tmpPrefix); err != nil {
		return fail(err)
	}
	r.Result = res
	return r
}

// finishedCase reports whether dir holds case c as this tool writes it.
func finishedCase(c Case, dir string) (CaseResult, bool) {
	var man Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, FileManifest), &man); err != nil {
		return CaseResult{}, false
	}
	want := manifestOf(c)
	want.ResultSHA256 = man.ResultSHA256
	if !sameManifest(man, want) {
		return CaseResult{}, false
	}
	for _, f := range []string{FileDB, FileCalls} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return CaseResult{}, false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, FileResult))
	if err != nil || sha(b) != man.ResultSHA256 {
		return CaseResult{}, false
	}
	var res round.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return CaseResult{}, false
	}
	return CaseResult{Case: c, Result: &res, Skipped: true}, true
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
