package harness

import (
	"context"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
)

// SuiteRunOptions tune how a suite runs; none changes its results.
type SuiteRunOptions struct {
	// Workers is the number of cases run at once (default runtime.NumCPU()).
	Workers int
	// Progress, if set, is called once before the first case with the
	// counts of the plan, then after every case that ends, always from the
	// same goroutine.
	Progress func(SuiteProgress)

	// runEpisode replaces RunToDir in tests.
	runEpisode func(Episode, string) (Result, error)
}

// SuiteProgress is the state of a running suite.
type SuiteProgress struct {
	Total   int           // cases in the suite
	Skipped int           // finished in an earlier run, not rerun
	ToRun   int           // Total - Skipped
	Done    int           // of ToRun, ended (including failures)
	Failed  int           // of Done, episode or I/O failure
	Elapsed time.Duration // since the suite started
	Last    *CaseResult   // the case that just ended (nil on the first call)
}

// CaseResult is one row of the summary.
type CaseResult struct {
	Case Case
	// Status is the episode's status (done, deadlock, ...), or "error" when
	// the episode or writing its artifacts failed.
	Status  string
	Err     string
	Metrics Metrics
	// Skipped: finished in an earlier run with the same configuration.
	Skipped bool
}

// SuiteReport is what RunSuite did.
type SuiteReport struct {
	Dir    string
	Suite  *Suite
	Cases  []CaseResult // the finished cases, in suite order
	Ran    int          // cases run now
	Skip   int          // cases finished earlier and kept
	Failed int          // finished cases with status error
	// Interrupted: the context was cancelled before every case had run.
	Interrupted bool
	Aggregate   []ParadigmAggregate
}

// Complete reports whether every case of the suite has finished.
func (r *SuiteReport) Complete() bool { return len(r.Cases) == len(r.Suite.Cases) }

// RunSuite runs the cases of s into dir that are not already there.
//
// Resume: a case is written into dir/cases/.tmp-<id>-<random>/ and renamed
// to dir/cases/<id>/ only once RunToDir has returned, so a case directory
// is always complete; temporaries left by a killed run are removed at
// start. A case whose directory exists and whose manifest.json matches the
// case (instance hash, seed, paradigm with every switch, controller, tool,
// payload and trace versions) is not rerun; any other is, and replaces it.
// A case whose episode failed goes to dir/failed/<id>/ (with error.txt)
// and is retried by the next run.
//
// When ctx is cancelled, no new case starts; cases in flight finish. The
// summary and aggregate files always describe the finished cases.
func RunSuite(ctx context.Context, s *Suite, dir string, opt SuiteRunOptions) (*SuiteReport, error) {
	start := time.Now()
	casesDir, failedDir := filepath.Join(dir, SuiteCasesDir), filepath.Join(dir, SuiteFailedDir)
	for _, d := range []string{casesDir, failedDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	unlock, err := atomicfs.LockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	for _, d := range []struct{ dir, prefix string }{
		{casesDir, suiteTmpPrefix}, {failedDir, suiteTmpPrefix}, {dir, suiteTmpPrefix + "suite"},
	} {
		if err := atomicfs.RemoveTemps(d.dir, d.prefix); err != nil {
			return nil, err
		}
	}
	// A directory that holds an external runner's cases stays tied to
	// that runner: their manifests cannot tell two commands apart.
	var prev SuiteConfig
	if atomicfs.ReadJSON(filepath.Join(dir, FileSuiteConfig), &prev) == nil && len(prev.ControllerIdentities) > 0 &&
		len(s.Config.ControllerIdentities) > 0 && !slices.Equal(prev.ControllerIdentities, s.Config.ControllerIdentities) {
		return nil, opterr.New("dir", "%s holds the results of %v, not %v: use a new directory", dir, prev.ControllerIdentities, s.Config.ControllerIdentities)
	}
	if err := atomicfs.WriteFile(filepath.Join(dir, FileSuiteConfig), suiteTmpPrefix, atomicfs.MarshalLine(s.Config)); err != nil {
		return nil, err
	}

	rep := &SuiteReport{Dir: dir, Suite: s}
	results := make([]*CaseResult, len(s.Cases))
	var todo []int
	for i, c := range s.Cases {
		if r, ok := finishedCase(c, filepath.Join(casesDir, c.ID)); ok {
			results[i] = &r
			rep.Skip++
		} else {
			todo = append(todo, i)
		}
	}
	prog := SuiteProgress{Total: len(s.Cases), Skipped: rep.Skip, ToRun: len(todo)}
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
	run := opt.runEpisode
	if run == nil {
		run = RunToDir
	}
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
					continue // handed out just as the suite was stopped
				}
				out <- done{i, runCase(s.Cases[i], casesDir, failedDir, run)}
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
		results[d.i] = &d.r
		rep.Ran++
		prog.Done++
		if d.r.Status == StatusError {
			prog.Failed++
		}
		report(&d.r)
	}
	for _, r := range results {
		if r != nil {
			rep.Cases = append(rep.Cases, *r)
			if r.Status == StatusError {
				rep.Failed++
			}
		}
	}
	rep.Interrupted = !rep.Complete()
	rep.Aggregate = Aggregate(s.Config.Paradigms, rep.Cases)
	if err := writeSuiteFiles(dir, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// runCase runs one case into a temporary directory and moves it into place.
func runCase(c Case, casesDir, failedDir string, run func(Episode, string) (Result, error)) CaseResult {
	r := CaseResult{Case: c}
	fail := func(err error) CaseResult {
		r.Status, r.Err = StatusError, err.Error()
		return r
	}
	tmp, err := os.MkdirTemp(casesDir, suiteTmpPrefix+c.ID+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	ep, err := c.EpisodeIn(tmp)
	if err != nil {
		return fail(err)
	}
	res, err := run(ep, tmp)
	r.Metrics, r.Status = res.Metrics, res.Metrics.Status
	if err == nil {
		err = res.Err
	}
	if eerr := c.EndIn(ep, tmp); err == nil {
		err = eerr
	}
	if err != nil {
		r.Status, r.Err = StatusError, err.Error()
		if werr := os.WriteFile(filepath.Join(tmp, FileCaseError), []byte(r.Err+"\n"), 0o644); werr != nil {
			return r
		}
		if merr := atomicfs.MoveIntoPlace(tmp, filepath.Join(failedDir, c.ID), failedDir, suiteTmpPrefix); merr != nil {
			r.Err += "; " + merr.Error()
		}
		return r
	}
	if err := atomicfs.MoveIntoPlace(tmp, filepath.Join(casesDir, c.ID), casesDir, suiteTmpPrefix); err != nil {
		return fail(err)
	}
	// A success supersedes an earlier failure of the same case.
	os.RemoveAll(filepath.Join(failedDir, c.ID))
	return r
}

// finishedCase reports whether dir holds case c as this tool would write
// it now, and returns its summary row.
func finishedCase(c Case, dir string) (CaseResult, bool) {
	var man Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, FileManifest), &man); err != nil {
		return CaseResult{}, false
	}
	if !ManifestMatches(man, c) {
		return CaseResult{}, false
	}
	for name := range man.Files {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return CaseResult{}, false
		}
	}
	mpath := filepath.Join(dir, FileMetrics)
	if h, err := fileSHA256(mpath); err != nil || h != man.Files[FileMetrics] {
		return CaseResult{}, false
	}
	var m Metrics
	if err := atomicfs.ReadJSON(mpath, &m); err != nil {
		return CaseResult{}, false
	}
	return CaseResult{Case: c, Status: m.Status, Metrics: m, Skipped: true}, true
}

// ManifestMatches reports whether man records case c run by this tool:
// same tool version, instance (by hash), seed, paradigm with every switch,
// controller (with its models and framework), payload and trace formats.
func ManifestMatches(man Manifest, c Case) bool {
	return man.Tool == "coordbench" && man.Version == Version() &&
		man.PayloadVersion == coord.PayloadVersion && man.TraceFormat == TraceFormat &&
		man.Instance == c.Instance.Name && man.InstanceSHA256 == c.Instance.SHA256 &&
		man.Seed == c.Seed && man.Controller == c.Controller && sameModel(man, c) &&
		reflect.DeepEqual(man.Paradigm, c.Paradigm)
}

// sameModel compares the models and framework a manifest records with the
// case's. A case whose controller names them only when it runs (an
// external runner reports its own) leaves them empty and matches any: its
// suite directory is tied to one runner by suite.json instead.
func sameModel(man Manifest, c Case) bool {
	if _, ok := c.maker.(DirControllerMaker); ok && c.Model == "" && c.Framework == "" {
		return true
	}
	return man.Model == c.Model && man.Framework == c.Framework
}
