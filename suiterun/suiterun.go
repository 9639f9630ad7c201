// Package suiterun runs the cases of a suite into a directory, for both
// benchmarks (des suite, silo suite) and for the experiment sweeps built on
// them. It owns what makes a suite resumable and interruptible, so that
// each benchmark only says how to run one case and how to recognise one
// that finished earlier:
//
//   - The suite directory is locked while a suite runs: a second suite
//     into the same directory fails at once.
//   - Every case runs in a temporary directory (Layout.CasesDir/.tmp-<id>-*)
//     that is renamed to Layout.CasesDir/<id>/ only once the case has
//     finished, so a case directory is always complete; temporaries that a
//     killed run left behind are removed at the next start, after
//     Options.Leftover has seen those of cases (a sweep counts the money
//     their model calls cost).
//   - A case whose directory the benchmark recognises as finished (its
//     Plan.Finished) is kept, not rerun.
//   - A case that fails goes, with its partial artifacts and error.txt, to
//     failed/<id>/; it runs again on the next invocation, and a later
//     success removes it from failed/.
//   - Cases run on a pool of workers. When ctx is cancelled (the CLI's first
//     Ctrl-C) no new case starts and the cases in flight finish (unless
//     Options.CancelInFlight); the CLI's second Ctrl-C kills the process,
//     which the rules above make safe.
//   - A directory that holds a suite of another configuration is refused
//     (Layout.ConfigFile, Plan.Config): a rerun with other instances,
//     controllers, models or limits would rewrite the summary without the
//     earlier cases and replace those it shares. Options.Force replaces
//     the earlier suite instead: its cases and failed cases are removed.
//     A rerun that only selects other cases of the same suite (Plan.Selection)
//     is the same suite.
//   - Progress is reported from one goroutine, and the benchmark's summary
//     files (Plan.End) are written, under the lock, for the cases that have
//     an outcome, whether or not the suite was interrupted.
package suiterun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
)

// Names in a suite directory that the runner owns.
const (
	// FailedDir holds failed cases, each with ErrorFile.
	FailedDir = "failed"
	// ErrorFile is the error of a failed case, one line.
	ErrorFile = "error.txt"
	// TmpPrefix starts the name of every temporary file or directory.
	TmpPrefix = ".tmp-"
)

// Layout is where a suite's cases go.
type Layout struct {
	Dir string // the suite directory (created if missing)
	// CasesDir is the subdirectory of finished cases (DesCasesDir,
	// SiloCasesDir); it names the kind of suite: Run refuses a Dir that
	// holds the files of another kind.
	CasesDir string
	// ConfigFile, if set, is the file in Dir that records the suite's
	// configuration (Plan.Config).
	ConfigFile string
}

// Plan is what the runner needs to know of a suite of n cases.
type Plan[R any] struct {
	// IDs are the case ids in suite order; each names its directory.
	IDs []string
	// Config, if set, is the suite's configuration, written to
	// Layout.ConfigFile as indented JSON once the directory is locked and
	// found to hold no suite of another configuration.
	Config any
	// Selection are the top-level keys of Config's JSON object that only
	// select which of the suite's cases run (a limit, a list of case ids);
	// a recorded configuration that differs in them only is the same suite.
	Selection []string
	// Begin, if set, runs with the directory locked and cleaned, before any
	// case is looked at (to check what the suite's configuration does not).
	Begin func() error
	// Finished reports whether dir holds case i as finished by an earlier
	// run of this configuration, and its result.
	Finished func(i int, dir string) (R, bool)
	// Run runs case i into dir, an empty directory. A non-nil error fails
	// the case; its result is kept all the same (a partial one may tell
	// what happened). ctx is not cancelled by an interruption: a case
	// that has started finishes (unless Options.CancelInFlight).
	Run func(ctx context.Context, i int, dir string) (R, error)
	// End, if set, runs with the directory still locked once every case
	// has an outcome or the suite was interrupted (to write the summary).
	End func(*Report[R]) error
}

// MaxWorkers bounds Options.Workers. A worker holds a running case's
// engine, files and model calls; far more of them than cases or cores
// only holds memory (a trillion made a suite run out of it at start).
const MaxWorkers = 4096

// Options tune how a suite runs; none changes its results.
type Options struct {
	// Workers is the number of cases run at once (default
	// runtime.NumCPU()), at most MaxWorkers.
	Workers int
	// Force lets a suite of another configuration replace the one in the
	// directory: the earlier suite's cases and failed cases are removed.
	Force bool
	// Progress, if set, is called once before the first case (Last empty),
	// then after every case that ends, always from the same goroutine.
	Progress func(Progress)
	// RunNone runs no case: the cases finished in the directory are kept
	// and the summary written for them; the others have no outcome, as if
	// the suite had been interrupted before they started. Sweep collect
	// uses it to summarise a suite assembled from the cases of its shards
	// with the benchmark's own summary code.
	RunNone bool
	// Admit, if set, is asked by the worker about to start case i (a
	// position in Plan.IDs); false leaves the case without an outcome,
	// as an interruption would (a sweep's cost limit). It is called from
	// the workers' goroutines.
	Admit func(i int) bool
	// Ended, if set, is told by the worker that ran case i, before it
	// takes another, where the case's artifacts are: its directory under
	// Layout.CasesDir, or under FailedDir when failed; a temporary
	// directory, still there while Ended runs, when moving it into place
	// failed (the case failed); "" when the case never ran.
	Ended func(i int, dir string, failed bool)
	// CancelInFlight passes ctx itself to the cases in flight, so that its
	// end cuts them short (they fail) instead of letting them finish: a
	// distributed worker told to hand its cases back.
	CancelInFlight bool
	// LockHeld: the caller holds the lock of Layout.Dir (atomicfs.LockDir)
	// for longer than the run, Run takes none. A sweep run writes its
	// ledger and cost files under the same lock as the cases.
	LockHeld bool
	// Leftover, if set, is shown the partial artifacts of every case that
	// an earlier run left unfinished in Layout.CasesDir (its process was
	// killed, or crashed, while the case ran): the case's id and its
	// temporary directory, with the suite directory locked, before the
	// temporaries are removed. An error stops the run before any case.
	Leftover func(id, dir string) error
}

// Validate checks o: the first bad field, as an *opterr.Error.
func (o Options) Validate() error {
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return opterr.New("Workers", "want 1 to %d cases at once (got %d)", MaxWorkers, o.Workers)
	}
	return nil
}

// Progress is the state of a running suite.
type Progress struct {
	Total   int           // cases in the suite
	Skipped int           // finished in an earlier run, kept
	ToRun   int           // Total - Skipped
	Done    int           // of ToRun, ended (including failures)
	Failed  int           // of Done, failed
	Elapsed time.Duration // since the suite started
	Last    string        // id of the case that just ended ("" on the first call)
	LastErr string        // its error, if it failed
}

// Outcome is what became of one case.
type Outcome[R any] struct {
	Index   int    // position in Plan.IDs
	ID      string // case id
	Result  R
	Err     string // non-empty if the case failed
	Skipped bool   // finished by an earlier run, kept
}

// Failed reports whether the case failed.
func (o *Outcome[R]) Failed() bool { return o.Err != "" }

// Report is what Run did.
type Report[R any] struct {
	Layout Layout
	Total  int // cases in the suite
	// Outcomes are the cases that have one (kept, run now, or failed), in
	// suite order; cases not started because of an interruption are absent.
	Outcomes []Outcome[R]
	Ran      int // cases run now, failures included
	Skipped  int // cases finished earlier and kept
	Failed   int // cases run now that failed
	// Interrupted: ctx was cancelled before every case had an outcome.
	Interrupted bool
}

// Finished returns the outcomes of the cases that did not fail.
func (r *Report[R]) Finished() []Outcome[R] { return r.filter(false) }

// Failures returns the outcomes of the cases that failed.
func (r *Report[R]) Failures() []Outcome[R] { return r.filter(true) }

func (r *Report[R]) filter(failed bool) []Outcome[R] {
	var out []Outcome[R]
	for _, o := range r.Outcomes {
		if o.Failed() == failed {
			out = append(out, o)
		}
	}
	return out
}

// Complete reports whether every case has an outcome (failures included):
// the suite was not interrupted.
func (r *Report[R]) Complete() bool { return len(r.Outcomes) == r.Total }

// Run runs the cases of p that are not finished in l.Dir; see the package
// comment for the guarantees. The error is about the suite directory
// itself (it cannot be created, locked or written); a case that fails is
// an outcome, not an error.
func Run[R any](ctx context.Context, l Layout, p Plan[R], opt Options) (*Report[R], error) {
	start := time.Now()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	casesDir, failedDir := filepath.Join(l.Dir, l.CasesDir), filepath.Join(l.Dir, FailedDir)
	if name := foreign(l); name != "" {
		return nil, opterr.New("dir", "%s holds another kind of suite (it has %s): use a new directory", l.Dir, name)
	}
	for _, d := range []string{casesDir, failedDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if !opt.LockHeld {
		unlock, err := atomicfs.LockDir(l.Dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	// Only now, with the lock held: the temporaries are no other run's.
	if opt.Leftover != nil {
		if err := leftovers(casesDir, p.IDs, opt.Leftover); err != nil {
			return nil, err
		}
	}
	// A run that runs no case removes no temporaries: a killed run's
	// partial logs wait for the next run that runs cases (and its
	// Leftover), and what another process (a distributed worker) is
	// moving into place is not cut.
	if !opt.RunNone {
		for _, d := range []string{casesDir, failedDir, l.Dir} {
			if err := atomicfs.RemoveTemps(d, TmpPrefix); err != nil {
				return nil, err
			}
		}
	}
	if p.Begin != nil {
		if err := p.Begin(); err != nil {
			return nil, err
		}
	}
	if err := takeConfig(l, p.Config, p.Selection, opt.Force); err != nil {
		return nil, err
	}

	rep := &Report[R]{Layout: l, Total: len(p.IDs)}
	outcomes := make([]*Outcome[R], len(p.IDs))
	var todo []int
	for i, id := range p.IDs {
		if r, ok := p.Finished(i, filepath.Join(casesDir, id)); ok {
			outcomes[i] = &Outcome[R]{Index: i, ID: id, Result: r, Skipped: true}
			rep.Skipped++
		} else {
			todo = append(todo, i)
		}
	}
	if opt.RunNone {
		todo = nil
	}
	prog := Progress{Total: len(p.IDs), Skipped: rep.Skipped, ToRun: len(todo)}
	report := func(last *Outcome[R]) {
		if opt.Progress == nil {
			return
		}
		prog.Elapsed, prog.Last, prog.LastErr = time.Since(start), "", ""
		if last != nil {
			prog.Last, prog.LastErr = last.ID, last.Err
		}
		opt.Progress(prog)
	}
	report(nil)

	runCtx := context.WithoutCancel(ctx) // cases in flight finish
	if opt.CancelInFlight {
		runCtx = ctx
	}
	for o := range pool(ctx, todo, opt.Workers, func(i int) (Outcome[R], bool) {
		if opt.Admit != nil && !opt.Admit(i) {
			return Outcome[R]{}, false
		}
		var ended func(string, bool)
		if opt.Ended != nil {
			ended = func(dir string, failed bool) { opt.Ended(i, dir, failed) }
		}
		return runCase(runCtx, p, i, casesDir, failedDir, ended), true
	}) {
		outcomes[o.Index] = &o
		prog.Done++
		if o.Failed() {
			prog.Failed++
		}
		report(&o)
	}
	rep.Ran, rep.Failed = prog.Done, prog.Failed
	for _, o := range outcomes {
		if o != nil {
			rep.Outcomes = append(rep.Outcomes, *o)
		}
	}
	rep.Interrupted = !rep.Complete()
	if p.End != nil {
		if err := p.End(rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// pool runs do on each of todo with up to workers goroutines and sends the
// outcomes, in the order they end, on the returned channel, which is closed
// once every started case has ended. Once ctx is cancelled no new case
// starts. A case do declines (false) has no outcome.
func pool[R any](ctx context.Context, todo []int, workers int, do func(int) (Outcome[R], bool)) <-chan Outcome[R] {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	jobs, out := make(chan int), make(chan Outcome[R])
	var wg sync.WaitGroup
	for range min(workers, max(len(todo), 1)) {
		wg.Go(func() {
			for i := range jobs {
				if ctx.Err() != nil {
					continue // handed out just as the suite was stopped
				}
				if o, ok := do(i); ok {
					out <- o
				}
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
	return out
}

// runCase runs case i into a temporary directory and moves it into place:
// cases/<id>/ when it finished, failed/<id>/ (with error.txt) when not.
// ended, if set, is told where the case's artifacts are once it has
// ended, before the temporary directory is removed: the directory moved
// into place, or the temporary one when the move failed (its artifacts
// are still there to read), or "" when the case never ran.
func runCase[R any](ctx context.Context, p Plan[R], i int, casesDir, failedDir string, ended func(dir string, failed bool)) Outcome[R] {
	id := p.IDs[i]
	o := Outcome[R]{Index: i, ID: id}
	tell := func(dir string) {
		if ended != nil {
			ended(dir, o.Failed())
		}
	}
	tmp, err := os.MkdirTemp(casesDir, TmpPrefix+id+"-")
	if err != nil {
		o.Err = err.Error()
		tell("")
		return o
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	o.Result, err = p.Run(ctx, i, tmp)
	if err != nil {
		final := filepath.Join(failedDir, id)
		// The error may name the case's files (a runner's stderr): by
		// where they are about to be, not by the temporary name.
		o.Err = strings.ReplaceAll(err.Error(), tmp, final)
		if werr := os.WriteFile(filepath.Join(tmp, ErrorFile), []byte(o.Err+"\n"), 0o644); werr != nil {
			o.Err = err.Error() + "; " + werr.Error()
			tell(tmp)
			return o
		}
		if merr := atomicfs.MoveIntoPlace(tmp, final, failedDir, TmpPrefix); merr != nil {
			o.Err = err.Error() + "; " + merr.Error()
			tell(tmp)
			return o
		}
		tell(final)
		return o
	}
	if err := atomicfs.MoveIntoPlace(tmp, filepath.Join(casesDir, id), casesDir, TmpPrefix); err != nil {
		o.Err = err.Error()
		tell(tmp)
		return o
	}
	// A success supersedes an earlier failure of the same case.
	os.RemoveAll(filepath.Join(failedDir, id))
	tell(filepath.Join(casesDir, id))
	return o
}

// takeConfig records config in l.ConfigFile, unless the directory holds a
// suite of another configuration: then it refuses, or with force removes
// that suite's cases and failed cases first. Keys of selection may differ.
func takeConfig(l Layout, config any, selection []string, force bool) error {
	if l.ConfigFile == "" || config == nil {
		return nil
	}
	path := filepath.Join(l.Dir, l.ConfigFile)
	data := atomicfs.MarshalLine(config)
	prev, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err == nil {
		if diff := configDiff(prev, data, selection); len(diff) > 0 {
			if !force {
				return &opterr.Error{Option: "dir", See: []string{"Force"}, Err: fmt.Errorf(
					"%s holds a suite of another configuration (%s differ from its %s): running this one there would drop or replace its results; use a new directory, rerun with the options recorded in %s, or force to replace that suite",
					l.Dir, strings.Join(diff, ", "), l.ConfigFile, l.ConfigFile)}
			}
			for _, d := range []string{l.CasesDir, FailedDir} {
				if err := removeContents(filepath.Join(l.Dir, d)); err != nil {
					return err
				}
			}
		}
	}
	return atomicfs.WriteFile(path, TmpPrefix, data)
}

// configDiff lists the top-level keys whose values differ between two
// JSON objects, leaving out ignore; an unreadable a differs as a whole.
func configDiff(a, b []byte, ignore []string) []string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return []string{"the whole file"}
	}
	var diff []string
	for _, m := range []map[string]json.RawMessage{ma, mb} {
		for k := range m {
			if !slices.Contains(ignore, k) && !slices.Contains(diff, k) && !bytes.Equal(compact(ma[k]), compact(mb[k])) {
				diff = append(diff, k)
			}
		}
	}
	slices.Sort(diff)
	return diff
}

// compact is raw without insignificant spaces (nil for an absent key).
func compact(raw json.RawMessage) []byte {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// removeContents removes every entry of dir.
func removeContents(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// leftovers shows f the unfinished cases of casesDir among ids.
func leftovers(casesDir string, ids []string, f func(id, dir string) error) error {
	un, err := Unfinished(casesDir, ids)
	if err != nil {
		return err
	}
	for _, u := range un {
		if err := f(u.ID, u.Dir); err != nil {
			return fmt.Errorf("the unfinished case %s left by an earlier run: %w", u.ID, err)
		}
	}
	return nil
}

// UnfinishedCase is the temporary directory of a case that has not ended:
// one in flight, or one a killed run left.
type UnfinishedCase struct{ ID, Dir string }

// Unfinished lists the temporary case directories of casesDir (each named
// TmpPrefix + id + "-" + a random suffix, see runCase) whose id is one of
// ids, in name order; none if casesDir does not exist.
func Unfinished(casesDir string, ids []string) ([]UnfinishedCase, error) {
	ents, err := os.ReadDir(casesDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	var out []UnfinishedCase
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), TmpPrefix)
		k := strings.LastIndexByte(rest, '-')
		if ok && e.IsDir() && k >= 0 && known[rest[:k]] {
			out = append(out, UnfinishedCase{ID: rest[:k], Dir: filepath.Join(casesDir, e.Name())})
		}
	}
	return out, nil
}
