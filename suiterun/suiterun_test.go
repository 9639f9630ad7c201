package suiterun_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/suiterun"
)

// plan is a suite of n cases whose Run writes out.txt holding the case's
// id and Finished reads it back; fail decides which cases fail.
func plan(n int, fail func(i int) bool, runs *atomic.Int32) suiterun.Plan[string] {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%02d", i)
	}
	return suiterun.Plan[string]{
		IDs: ids,
		Finished: func(i int, dir string) (string, bool) {
			b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
			return string(b), err == nil && string(b) == ids[i]
		},
		Run: func(_ context.Context, i int, dir string) (string, error) {
			runs.Add(1)
			if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte(ids[i]), 0o644); err != nil {
				return "", err
			}
			if fail != nil && fail(i) {
				return "partial", errors.New("boom " + ids[i])
			}
			return ids[i], nil
		},
	}
}

func TestRunResumeAndFailures(t *testing.T) {
	dir := t.TempDir()
	l := suiterun.Layout{Dir: dir, CasesDir: "cases"}
	// Leftovers of a killed run are removed at start.
	for _, d := range []string{filepath.Join(dir, "cases", ".tmp-c00-1"), filepath.Join(dir, "failed", ".tmp-old-2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var runs atomic.Int32
	failing := true
	p := plan(6, func(i int) bool { return failing && i%3 == 0 }, &runs)
	var ended *suiterun.Report[string]
	p.End = func(r *suiterun.Report[string]) error { ended = r; return nil }
	var progress []suiterun.Progress
	rep, err := suiterun.Run(context.Background(), l, p, suiterun.Options{Workers: 3,
		Progress: func(pr suiterun.Progress) { progress = append(progress, pr) }})
	if err != nil {
		t.Fatal(err)
	}
	if ended != rep || rep.Ran != 6 || rep.Failed != 2 || rep.Skipped != 0 || !rep.Complete() || rep.Interrupted {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Outcomes) != 6 || len(rep.Failures()) != 2 || len(rep.Finished()) != 4 {
		t.Fatalf("outcomes %+v", rep.Outcomes)
	}
	for i, o := range rep.Outcomes {
		if o.Index != i || o.ID != p.IDs[i] {
			t.Fatalf("outcome %d out of order: %+v", i, o)
		}
		failed := i%3 == 0
		_, inCases := os.Stat(filepath.Join(dir, "cases", o.ID, "out.txt"))
		msg, inFailed := os.ReadFile(filepath.Join(dir, "failed", o.ID, suiterun.ErrorFile))
		partial, _ := os.ReadFile(filepath.Join(dir, "failed", o.ID, "out.txt"))
		if failed != o.Failed() || failed != (inCases != nil) || failed != (inFailed == nil) {
			t.Fatalf("%s: failed %v, outcome %+v, in cases %v, in failed %v", o.ID, failed, o, inCases, inFailed)
		}
		if failed && (o.Result != "partial" || string(msg) != "boom "+o.ID+"\n" || string(partial) != o.ID) {
			t.Fatalf("%s: result %q, error.txt %q, partial files %q", o.ID, o.Result, msg, partial)
		}
	}
	if len(progress) != 7 || progress[0].Last != "" || progress[0].ToRun != 6 || progress[6].Done != 6 || progress[6].Failed != 2 {
		t.Fatalf("progress %+v", progress)
	}
	for _, pr := range progress[1:] {
		if pr.Last == "" || (pr.LastErr != "") != slices.Contains([]string{"c00", "c03"}, pr.Last) {
			t.Fatalf("progress %+v", pr)
		}
	}
	for _, d := range []string{"cases", "failed"} {
		ents, _ := os.ReadDir(filepath.Join(dir, d))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), suiterun.TmpPrefix) {
				t.Fatalf("temporary %s/%s left behind", d, e.Name())
			}
		}
	}

	// The next run keeps the finished cases and reruns the failed ones; a
	// success removes the case from failed/.
	failing = false
	runs.Store(0)
	rep, err = suiterun.Run(context.Background(), l, p, suiterun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 2 || rep.Ran != 2 || rep.Skipped != 4 || rep.Failed != 0 || !rep.Complete() {
		t.Fatalf("rerun: %d runs, report %+v", runs.Load(), rep)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "failed")); len(ents) != 0 {
		t.Fatalf("failed/ still holds %d entries", len(ents))
	}
	for _, o := range rep.Outcomes {
		if o.Skipped == (o.ID == "c00" || o.ID == "c03") || o.Result != o.ID {
			t.Fatalf("rerun outcome %+v", o)
		}
	}
}

// A cancelled context starts no new case; the cases in flight finish, with
// a context that is not cancelled; End still describes them.
func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	var runs atomic.Int32
	p := plan(20, nil, &runs)
	ctx, cancel := context.WithCancel(context.Background())
	run := p.Run
	p.Run = func(ctx context.Context, i int, dir string) (string, error) {
		cancel() // the user presses Ctrl-C while the first cases run
		if ctx.Err() != nil {
			return "", errors.New("a case in flight saw the interruption")
		}
		return run(ctx, i, dir)
	}
	var ended bool
	p.End = func(*suiterun.Report[string]) error { ended = true; return nil }
	rep, err := suiterun.Run(ctx, suiterun.Layout{Dir: dir, CasesDir: "runs"}, p, suiterun.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ended || !rep.Interrupted || rep.Complete() || rep.Ran == 0 || rep.Ran > 2 || rep.Failed != 0 || len(rep.Outcomes) != rep.Ran {
		t.Fatalf("ended %v, report %+v", ended, rep)
	}
}

// A second suite into a directory in use fails at once, and names it.
func TestRunLocked(t *testing.T) {
	dir := t.TempDir()
	var runs atomic.Int32
	p := plan(1, nil, &runs)
	inner := plan(1, nil, &runs)
	var innerErr error
	p.Begin = func() error {
		_, innerErr = suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, inner, suiterun.Options{})
		return nil
	}
	if _, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, p, suiterun.Options{}); err != nil {
		t.Fatal(err)
	}
	if innerErr == nil || !strings.Contains(innerErr.Error(), dir) {
		t.Fatalf("a second suite into a locked directory: %v", innerErr)
	}
	if runs.Load() != 1 {
		t.Fatalf("%d runs, want 1", runs.Load())
	}
}

// An error of Begin or End is the suite's error; End's comes with the report.
func TestRunHookErrors(t *testing.T) {
	var runs atomic.Int32
	p := plan(2, nil, &runs)
	p.Begin = func() error { return errors.New("bad config") }
	if _, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: t.TempDir(), CasesDir: "cases"}, p, suiterun.Options{}); err == nil || runs.Load() != 0 {
		t.Fatalf("Begin's error: %v after %d runs", err, runs.Load())
	}
	p.Begin = nil
	p.End = func(*suiterun.Report[string]) error { return errors.New("disk full") }
	rep, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: t.TempDir(), CasesDir: "cases"}, p, suiterun.Options{})
	if err == nil || rep == nil || rep.Ran != 2 {
		t.Fatalf("End's error: %v, report %+v", err, rep)
	}
}

func TestFilesAndCSV(t *testing.T) {
	dir := t.TempDir()
	data := suiterun.CSV([]string{"a", "b"}, [][]string{{"1", "x,y"}, {"2", `q"`}})
	if want := "a,b\n1,\"x,y\"\n2,\"q\"\"\"\n"; string(data) != want {
		t.Fatalf("CSV %q, want %q", data, want)
	}
	if err := suiterun.WriteFiles(dir, suiterun.File{Name: "s.csv", Data: data}, suiterun.File{Name: "t.md", Data: []byte("# t\n")}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("%d entries, want 2", len(ents))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s.csv")); string(b) != string(data) {
		t.Fatalf("s.csv %q", b)
	}
}

// A directory that holds another kind of suite is refused, untouched,
// whichever of the other kind's names it holds; a layout is never foreign
// to itself.
func TestRunForeign(t *testing.T) {
	for _, c := range []struct{ mine, theirs string }{
		{suiterun.SiloCasesDir, suiterun.DesCasesDir}, {suiterun.SiloCasesDir, suiterun.DesSummaryFile},
		{suiterun.SiloCasesDir, suiterun.DesConfigFile}, {suiterun.DesCasesDir, suiterun.SiloCasesDir},
		{suiterun.DesCasesDir, suiterun.SiloSummaryFile}, {suiterun.DesCasesDir, suiterun.SiloConfigFile},
	} {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, c.theirs), 0o755); err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		_, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: c.mine}, plan(1, nil, &runs), suiterun.Options{})
		if err == nil || !strings.Contains(err.Error(), "another kind of suite (it has "+c.theirs+")") || runs.Load() != 0 {
			t.Fatalf("%s in a %s suite: err %v after %d runs", c.theirs, c.mine, err, runs.Load())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("the directory was changed: %d entries", len(ents))
		}
	}
	dir := t.TempDir()
	var runs atomic.Int32
	l := suiterun.Layout{Dir: dir, CasesDir: suiterun.DesCasesDir, ConfigFile: suiterun.DesConfigFile}
	for range 2 {
		if _, err := suiterun.Run(context.Background(), l, plan(1, nil, &runs), suiterun.Options{}); err != nil {
			t.Fatalf("a suite refused its own directory: %v", err)
		}
	}
}

// A suite of another configuration is refused in a directory, which it
// leaves untouched; one that only selects other cases is the same suite;
// Force replaces the earlier suite (issue 14: a rerun with another
// configuration rewrote the configuration and orphaned the old cases).
func TestRunOtherConfig(t *testing.T) {
	dir := t.TempDir()
	l := suiterun.Layout{Dir: dir, CasesDir: "cases", ConfigFile: "suite.json"}
	type config struct {
		Controllers []string `json:"controllers"`
		Limit       int      `json:"limit,omitempty"`
	}
	var runs atomic.Int32
	withConfig := func(n int, c config) suiterun.Plan[string] {
		p := plan(n, nil, &runs)
		p.Config, p.Selection = c, []string{"limit"}
		return p
	}
	if _, err := suiterun.Run(context.Background(), l, withConfig(3, config{Controllers: []string{"rule"}}), suiterun.Options{}); err != nil {
		t.Fatal(err)
	}
	// Another selection of the same suite: kept, nothing reruns.
	if rep, err := suiterun.Run(context.Background(), l, withConfig(2, config{Controllers: []string{"rule"}, Limit: 2}), suiterun.Options{}); err != nil || rep.Skipped != 2 || runs.Load() != 3 {
		t.Fatalf("another selection: %v, %d runs", err, runs.Load())
	}
	recorded := string(mustRead(t, filepath.Join(dir, "suite.json")))
	other := withConfig(1, config{Controllers: []string{"greedy"}})
	other.IDs = []string{"x00"}
	_, err := suiterun.Run(context.Background(), l, other, suiterun.Options{})
	if err == nil || !strings.Contains(err.Error(), "holds a suite of another configuration (controllers differ from its suite.json)") ||
		!strings.Contains(err.Error(), "(see Force)") || runs.Load() != 3 {
		t.Fatalf("another configuration: %v, %d runs", err, runs.Load())
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "cases")); len(ents) != 3 {
		t.Errorf("the refused suite changed cases/: %d entries", len(ents))
	}
	if string(mustRead(t, filepath.Join(dir, "suite.json"))) != recorded {
		t.Error("the refused suite rewrote suite.json")
	}
	rep, err := suiterun.Run(context.Background(), l, other, suiterun.Options{Force: true})
	if err != nil || rep.Ran != 1 {
		t.Fatalf("--force: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "cases")); len(ents) != 1 || ents[0].Name() != "x00" {
		t.Errorf("after --force, cases/ holds %v, want only the new suite's case", ents)
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(dir, "suite.json"))), "greedy") {
		t.Error("--force did not record the new configuration")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RunNone runs nothing: the finished cases are reported, the others have
// no outcome, and End still writes the summary of the finished ones.
func TestRunNone(t *testing.T) {
	dir := t.TempDir()
	l := suiterun.Layout{Dir: dir, CasesDir: "cases"}
	var runs atomic.Int32
	p := plan(4, nil, &runs)
	for _, id := range []string{"c01", "c03"} {
		if err := os.MkdirAll(filepath.Join(dir, "cases", id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cases", id, "out.txt"), []byte(id), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A killed run's temporary, for the next run that runs cases.
	left := filepath.Join(dir, "cases", ".tmp-c00-42")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	var ended *suiterun.Report[string]
	p.End = func(r *suiterun.Report[string]) error { ended = r; return nil }
	rep, err := suiterun.Run(context.Background(), l, p, suiterun.Options{RunNone: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); err != nil {
		t.Errorf("RunNone removed a case's temporary: %v", err)
	}
	if runs.Load() != 0 || ended != rep || rep.Ran != 0 || rep.Skipped != 2 || len(rep.Outcomes) != 2 || !rep.Interrupted || rep.Complete() {
		t.Fatalf("%d runs, report %+v", runs.Load(), rep)
	}
	if rep.Outcomes[0].ID != "c01" || rep.Outcomes[1].ID != "c03" {
		t.Fatalf("outcomes %+v", rep.Outcomes)
	}
}

// Ended is told where a case's artifacts really are: failed/<id>/ once
// moved there, and never an earlier failure's failed/<id>/ when this
// run's artifacts could not be moved (a sweep's ledger would count that
// earlier failure twice and lose this one).
func TestEndedGetsTheArtifactsOfThisRun(t *testing.T) {
	dir := t.TempDir()
	l := suiterun.Layout{Dir: dir, CasesDir: "cases"}
	var runs atomic.Int32
	p := plan(1, func(int) bool { return true }, &runs)
	var got []string
	opt := suiterun.Options{Workers: 1, Ended: func(_ int, d string, failed bool) {
		if !failed {
			t.Errorf("case ended in %s not failed", d)
		}
		got = append(got, d)
	}}
	if _, err := suiterun.Run(context.Background(), l, p, opt); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, suiterun.FailedDir, "c00")
	if len(got) != 1 || got[0] != old {
		t.Fatalf("first run ended in %v, want %s", got, old)
	}
	// The second run's artifacts cannot be kept: its directory is gone
	// before error.txt can be written.
	p.Run = func(_ context.Context, _ int, d string) (string, error) {
		os.RemoveAll(d)
		return "", errors.New("boom again")
	}
	got = nil
	if _, err := suiterun.Run(context.Background(), l, p, opt); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] == old {
		t.Errorf("second run ended in %v: the earlier failure's directory", got)
	}
}

// TestLeftoverSeesUnfinishedCases: the temporaries a killed run left are
// shown to Options.Leftover (case temporaries only, with their files)
// before they are removed; an error from it stops the run before any case.
func TestLeftoverSeesUnfinishedCases(t *testing.T) {
	dir := t.TempDir()
	l := suiterun.Layout{Dir: dir, CasesDir: "cases"}
	var runs atomic.Int32
	p := plan(3, nil, &runs)
	p.IDs[1] = "c-01" // an id with a dash: the random suffix is cut at the last one
	for _, d := range []string{".tmp-c-01-123", ".tmp-c00-77", ".tmp-gone-5", ".tmp-x"} {
		if err := os.MkdirAll(filepath.Join(dir, "cases", d), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "cases", d, "log.jsonl"), []byte(d+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "cases", ".tmp-c02-9"), nil, 0o644) // a file, not a case's directory

	boom := errors.New("ledger unwritable")
	var seen []string
	opt := suiterun.Options{Workers: 1, Leftover: func(id, d string) error {
		b, err := os.ReadFile(filepath.Join(d, "log.jsonl"))
		if err != nil {
			t.Errorf("%s: the leftover's files are gone: %v", id, err)
		}
		seen = append(seen, id+"="+strings.TrimSpace(string(b)))
		return boom
	}}
	if _, err := suiterun.Run(context.Background(), l, p, opt); !errors.Is(err, boom) || !strings.Contains(err.Error(), "c-01") {
		t.Fatalf("a failing Leftover: %v", err)
	}
	if runs.Load() != 0 || len(seen) != 1 {
		t.Fatalf("after a failing Leftover: %d cases ran, %v seen", runs.Load(), seen)
	}
	seen = nil
	opt.Leftover = func(id, d string) error {
		b, _ := os.ReadFile(filepath.Join(d, "log.jsonl"))
		seen = append(seen, id+"="+strings.TrimSpace(string(b)))
		return nil
	}
	if _, err := suiterun.Run(context.Background(), l, p, opt); err != nil {
		t.Fatal(err)
	}
	want := []string{"c-01=.tmp-c-01-123", "c00=.tmp-c00-77"}
	if !slices.Equal(seen, want) {
		t.Errorf("Leftover saw %v, want %v", seen, want)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "cases"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), suiterun.TmpPrefix) {
			t.Errorf("%s not removed", e.Name())
		}
	}
	seen = nil
	if _, err := suiterun.Run(context.Background(), l, p, opt); err != nil || len(seen) != 0 {
		t.Errorf("a rerun saw leftovers again: %v %v", seen, err)
	}
}

// A worker count beyond MaxWorkers (a trillion once made a suite run out
// of memory at start) or below 0 is refused before anything runs.
func TestRunWorkersBounded(t *testing.T) {
	var runs atomic.Int32
	for _, w := range []int{-1, suiterun.MaxWorkers + 1, 1_000_000_000_000} {
		dir := t.TempDir()
		_, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, plan(2, nil, &runs), suiterun.Options{Workers: w})
		if err == nil || !strings.HasPrefix(err.Error(), "Workers: want 1 to ") {
			t.Errorf("Workers %d: %v", w, err)
		}
	}
	if runs.Load() != 0 {
		t.Errorf("%d cases ran", runs.Load())
	}
	if _, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: t.TempDir(), CasesDir: "cases"}, plan(2, nil, &runs), suiterun.Options{Workers: suiterun.MaxWorkers}); err != nil {
		t.Errorf("Workers %d: %v", suiterun.MaxWorkers, err)
	}
}

// A failed case's error that names its files (a runner's stderr) names
// them where they are once the case is in failed/, not under the
// temporary directory that was renamed there.
func TestFailedErrorNamesFinalDir(t *testing.T) {
	dir := t.TempDir()
	p := suiterun.Plan[string]{IDs: []string{"c0"},
		Finished: func(int, string) (string, bool) { return "", false },
		Run: func(_ context.Context, _ int, d string) (string, error) {
			return "", fmt.Errorf("runner failed (see %s)", filepath.Join(d, "stderr.txt"))
		}}
	rep, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, p, suiterun.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "runner failed (see " + filepath.Join(dir, suiterun.FailedDir, "c0", "stderr.txt") + ")"
	if got := rep.Outcomes[0].Err; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if got := string(mustRead(t, filepath.Join(dir, suiterun.FailedDir, "c0", suiterun.ErrorFile))); got != want+"\n" {
		t.Errorf("error.txt %q, want %q", got, want)
	}
}

// With LockHeld the caller's lock stands for the run's: the run takes
// none (it would refuse the caller's own), and another run is refused.
func TestRunLockHeld(t *testing.T) {
	dir := t.TempDir()
	unlock, err := atomicfs.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var runs atomic.Int32
	if _, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, plan(1, nil, &runs), suiterun.Options{}); !errors.Is(err, atomicfs.ErrLocked) {
		t.Fatalf("a run into a directory locked by another: %v", err)
	}
	if _, err := suiterun.Run(context.Background(), suiterun.Layout{Dir: dir, CasesDir: "cases"}, plan(1, nil, &runs), suiterun.Options{LockHeld: true}); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 {
		t.Fatalf("%d runs, want 1", runs.Load())
	}
}
