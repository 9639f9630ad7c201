package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/suiterun"
)

// suiteDisplay shows a suite's progress on stderr, for either benchmark: a
// progress bar on a terminal, a plain line every few seconds otherwise.
type suiteDisplay struct {
	w       io.Writer
	label   string // "suite", "silo suite"
	unit    string // what a case is called: "cases", "runs"
	workers int
	status  func() string // model endpoint state, nil without a model

	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	last    suiterun.Progress
	printed time.Time
	stop    chan struct{}
	stopped sync.WaitGroup
}

// plainEvery is how often the plain display prints a line.
const plainEvery = 5 * time.Second

// isTerminal: w (under its untrusted.Terminal filter) is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := untrusted.Raw(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newSuiteDisplay(w io.Writer, label, unit string, workers int, status func() string) *suiteDisplay {
	return &suiteDisplay{w: w, label: label, unit: unit, workers: workers, status: status, stop: make(chan struct{})}
}

// describe is the bar's label: failures, and the model endpoint's state
// (calls in flight, retries, cache hits) when a model is used. The bar
// writes past the terminal filter (its redraws are controls): the label
// is made printable here.
func (p *suiteDisplay) describe(failed int) string {
	d := fmt.Sprintf("%s (%d failed)", p.label, failed)
	if p.status != nil {
		d += " " + p.status()
	}
	return untrusted.Printable(d)
}

func (p *suiteDisplay) update(s suiterun.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = s
	if s.Last == "" { // the plan
		w := "workers"
		if p.workers == 1 {
			w = "worker"
		}
		fmt.Fprintf(p.w, "%s: %d %s, %d already done, %d to run on %d %s\n", p.label, s.Total, p.unit, s.Skipped, s.ToRun, p.workers, w)
		p.printed = time.Now()
		if s.ToRun > 0 && isTerminal(p.w) {
			p.startBar(s.ToRun)
		}
		return
	}
	if p.bar != nil {
		p.bar.Describe(p.describe(s.Failed))
		p.bar.Set(s.Done)
		return
	}
	if s.Done == s.ToRun || time.Since(p.printed) >= plainEvery {
		p.printLine(s)
	}
}

// startBar shows the bar and keeps its running time (and the model's
// state) ticking while long cases run.
func (p *suiteDisplay) startBar(n int) {
	p.bar = progressbar.NewOptions(n,
		progressbar.OptionSetWriter(untrusted.Raw(p.w)),
		progressbar.OptionSetDescription(p.describe(0)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
	p.bar.RenderBlank()
	p.stopped.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.mu.Lock()
				p.bar.Describe(p.describe(p.last.Failed))
				p.mu.Unlock()
			case <-p.stop:
				return
			}
		}
	})
}

func (p *suiteDisplay) printLine(s suiterun.Progress) {
	extra := ""
	if p.status != nil {
		extra = "; " + p.status()
	}
	fmt.Fprintf(p.w, "%s: %d/%d done, %d failed, %s%s\n", p.label, s.Done, s.ToRun, s.Failed, s.Elapsed.Round(100*time.Millisecond), extra)
	p.printed = time.Now()
}

// finish ends the display; after an interruption it prints the last state.
func (p *suiteDisplay) finish() {
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed.IsZero() || p.last.Done == p.last.ToRun {
		return
	}
	if p.bar != nil {
		p.bar.Exit()
	}
	p.printLine(p.last)
}

// suiteEnd is what a finished (or interrupted) suite tells its user.
type suiteEnd struct {
	unit        string // "cases", "runs"
	total       int
	ran, kept   int
	finished    int // cases with a result (kept, or run now without failing)
	failed      int // cases run now that failed
	interrupted bool
	dir         string
	files       [][2]string // label and path of each output, printed aligned
	failedHint  string      // where failures are, for the error
}

// print writes the counts and the paths to stdout, and returns the error
// the command exits with: an interruption, or failed cases.
func (e suiteEnd) print(w io.Writer) error {
	fmt.Fprintf(w, "\n%d %s: %d run now, %d already done", e.total, e.unit, e.ran, e.kept)
	if e.failed > 0 {
		fmt.Fprintf(w, ", %d failed", e.failed)
	}
	fmt.Fprintln(w)
	for _, f := range e.files {
		fmt.Fprintf(w, "%-10s %s\n", f[0]+":", f[1])
	}
	if e.interrupted {
		return fmt.Errorf("interrupted: %d of %d %s done, summary written to %s; run the same command again to resume",
			e.finished, e.total, e.unit, e.dir)
	}
	if e.failed > 0 {
		return fmt.Errorf("%d of %d %s failed: %s (they run again on the next run)", e.failed, e.total, e.unit, e.failedHint)
	}
	return nil
}

// dirPath formats a directory for printing, with a trailing separator.
func dirPath(elem ...string) string { return filepath.Join(elem...) + string(filepath.Separator) }

// interruptible returns a context that a first Ctrl-C (or SIGTERM) cancels
// so that a suite stops launching new work and finishes what is in flight
// (what names it: "cases", "runs"); a second Ctrl-C kills the process.
// Call done when the suite has ended.
func interruptible(cmd *cobra.Command, what string) (ctx context.Context, done func()) {
	return onInterrupt(cmd, fmt.Sprintf("finishing the %s in flight (Ctrl-C again to abandon them)", what))
}

// interruptibleRun is interruptible for des run: the episode stops before
// its next decision (harness.Episode.Stop) and its artifacts are written.
func interruptibleRun(cmd *cobra.Command) (ctx context.Context, done func()) {
	return onInterrupt(cmd, "stopping the episode before its next decision and writing its artifacts (Ctrl-C again to abandon the run)")
}

// onInterrupt returns a context that a first Ctrl-C (or SIGTERM) cancels,
// telling the user what now happens (notice); a second Ctrl-C kills the
// process. Call done when the work has ended.
func onInterrupt(cmd *cobra.Command, notice string) (ctx context.Context, done func()) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-finished: // the suite ended first
				return
			default:
			}
			stop() // restore the default: a second Ctrl-C kills the process
			fmt.Fprintf(cmd.ErrOrStderr(), "\ninterrupted: %s\n", notice)
		case <-finished:
		}
	}()
	return ctx, func() { close(finished); stop() }
}
