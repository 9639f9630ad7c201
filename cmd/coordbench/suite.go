package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

func desSuiteCmd() *cobra.Command {
	var opt harness.SuiteOptions
	var out, cases string
	var workers int
	var lf llmFlags
	c := &cobra.Command{
		Use:   "suite",
		Short: "Run a benchmark suite: instances × paradigms × controllers × seeds",
		Long: `Run every case (instance × paradigm × controller × seed) of a suite on a
pool of workers and write, into --out:

  suite.json             the suite's configuration
  suite_summary.csv      one row per case: ids, status and the 15 metrics
  suite_aggregate.csv    mean and std of each metric per paradigm
  suite_aggregate.md     the same as a Markdown table (the paper's Table 3 layout)
  cases/<case_id>/       each case's artifacts, as 'des run' writes them
  failed/<case_id>/      artifacts and error.txt of a case whose episode failed

Case ids read <instance>__<paradigm>__<controller>__s<seed>, e.g.
A5C12-1__centralized__rule__s1. Running the same command again resumes:
finished cases whose manifest matches are kept, the rest run. On Ctrl-C no
new case starts, the summary of the finished cases is written, and the
exit code is 1; a second Ctrl-C abandons the cases in flight.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workers < 1 {
				return fmt.Errorf("--workers must be at least 1 (got %d)", workers)
			}
			opt.Cases = splitList(cases)
			var status func() string
			if slices.Contains(splitList(opt.Controllers), "llm") {
				mk, closer, err := lf.maker()
				if err != nil {
					return err
				}
				defer closer()
				opt.Makers = append(opt.Makers, mk)
				status = mk.Status
				if !cmd.Flags().Changed("workers") {
					workers = max(workers, lf.concurrency) // episodes wait on the model: keep the endpoint busy
				}
			}
			if command, _ := cmd.Flags().GetString("controller-command"); command != "" {
				sess, err := externalSession(cmd, command)
				if err != nil {
					return err
				}
				defer sess.Close()
				opt.Makers = append(opt.Makers, sess)
				if !cmd.Flags().Changed("controller") {
					opt.Controllers = extctl.Name
				}
			}
			s, err := harness.ResolveSuite(opt)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("runs", "suite_"+suiteDirName(opt.Suite))
			}
			return runSuite(cmd, s, out, workers, status)
		},
	}
	f := c.Flags()
	f.StringVar(&opt.Suite, "suite", "A5C12-1", "instances: A5C12, A3C9, all, an instance name, a file, gen:A<n>C<m>, or a comma list")
	f.StringVar(&opt.Paradigms, "paradigm", "all", "paradigms: all (every registered one) or a comma list of ids")
	f.StringArrayVar(&opt.ParadigmFiles, "paradigm-file", nil, "register a custom paradigm from a YAML file and add it to the suite (repeatable)")
	f.StringVar(&opt.Seeds, "seeds", "test", "seeds: test or dev (each instance's split) or a comma list")
	f.StringVar(&opt.Controllers, "controller", "builtin", "controllers: builtin (= rule) or a comma list of: "+strings.Join(policy.Names, ", ")+", llm")
	f.IntVar(&opt.Limit, "limit", 0, "run only the first N cases (0: all)")
	f.StringVar(&cases, "cases", "", "run only these case ids (comma list)")
	f.IntVar(&workers, "workers", runtime.NumCPU(), "cases run at once")
	f.StringVar(&out, "out", "", "suite directory (default runs/suite_<suite>)")
	lf.register(f)
	f.String("controller-command", "", "run an external controller (one process per case) and add it to the suite as controller \"external\" (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer")
	return c
}

// splitList splits a comma list, trimming blanks and dropping empty items.
func splitList(s string) []string {
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

func suiteDirName(spec string) string {
	return strings.NewReplacer(":", "-", "/", "-", "\\", "-", ",", "+", " ", "").Replace(spec)
}

// runSuite runs s into dir with a progress display on stderr and Ctrl-C
// handling, then prints the aggregate and where the files are.
func runSuite(cmd *cobra.Command, s *harness.Suite, dir string, workers int, status func() string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ctx, done := interruptible(cmd, "cases")
	defer done()

	p := newSuiteProgress(stderr, workers)
	p.status = status
	rep, err := harness.RunSuite(ctx, s, dir, harness.SuiteRunOptions{Workers: workers, Progress: p.update})
	p.finish()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	harness.WriteAggregateText(stdout, rep)
	fmt.Fprintf(stdout, "\n%d cases: %d run now, %d already done", len(s.Cases), rep.Ran, rep.Skip)
	if rep.Failed > 0 {
		fmt.Fprintf(stdout, ", %d failed", rep.Failed)
	}
	fmt.Fprintf(stdout, "\nsummary:   %s\naggregate: %s (and .md)\ncases:     %s\n",
		filepath.Join(dir, harness.FileSuiteSummary), filepath.Join(dir, harness.FileSuiteAggregate),
		filepath.Join(dir, harness.SuiteCasesDir)+string(filepath.Separator))
	if rep.Interrupted {
		return fmt.Errorf("interrupted: %d of %d cases done, summary written to %s; run the same command again to resume",
			len(rep.Cases), len(s.Cases), dir)
	}
	if rep.Failed > 0 {
		return fmt.Errorf("%d case(s) failed: status error in %s, artifacts and error.txt in %s (they run again on the next run)",
			rep.Failed, filepath.Join(dir, harness.FileSuiteSummary), filepath.Join(dir, harness.SuiteFailedDir))
	}
	return nil
}

// suiteProgress shows a suite's progress on stderr: a progress bar on a
// terminal, a plain line every few seconds otherwise.
type suiteProgress struct {
	w       io.Writer
	workers int
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	last    harness.SuiteProgress
	printed time.Time
	stop    chan struct{}
	stopped sync.WaitGroup
	status  func() string // model endpoint state, nil without a model
}

// plainEvery is how often the plain display prints a line.
const plainEvery = 5 * time.Second

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newSuiteProgress(w io.Writer, workers int) *suiteProgress {
	return &suiteProgress{w: w, workers: workers, stop: make(chan struct{})}
}

// describe is the progress label: failures, and the model endpoint's
// state (calls in flight, retries, cache hits) when a model is used.
func (p *suiteProgress) describe(failed int) string {
	d := fmt.Sprintf("suite (%d failed)", failed)
	if p.status != nil {
		d += " " + p.status()
	}
	return d
}

func (p *suiteProgress) update(s harness.SuiteProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = s
	if s.Last == nil { // the plan
		w := "workers"
		if p.workers == 1 {
			w = "worker"
		}
		fmt.Fprintf(p.w, "suite: %d cases, %d already done, %d to run on %d %s\n", s.Total, s.Skipped, s.ToRun, p.workers, w)
		if s.ToRun == 0 {
			return
		}
		if isTerminal(p.w) {
			p.bar = progressbar.NewOptions(s.ToRun,
				progressbar.OptionSetWriter(p.w),
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
			// Keep the running time ticking while long cases run.
			p.stopped.Add(1)
			go func() {
				defer p.stopped.Done()
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
			}()
		}
		p.printed = time.Now()
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

func (p *suiteProgress) printLine(s harness.SuiteProgress) {
	extra := ""
	if p.status != nil {
		extra = "; " + p.status()
	}
	fmt.Fprintf(p.w, "suite: %d/%d done, %d failed, %s%s\n", s.Done, s.ToRun, s.Failed, s.Elapsed.Round(100*time.Millisecond), extra)
	p.printed = time.Now()
}

// finish ends the display; after an interruption it prints the last state.
func (p *suiteProgress) finish() {
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last.Done == p.last.ToRun {
		return
	}
	if p.bar != nil {
		p.bar.Exit()
	}
	p.printLine(p.last)
}

func desCaseCmd() *cobra.Command {
	var id, out, suiteDir, instance string
	var files []string
	var lf llmFlags
	c := &cobra.Command{
		Use:   "case",
		Short: "Re-run one case of a suite by its case id",
		Long: `Re-run one suite case, named by its case id
(<instance>__<paradigm>__<controller>__s<seed>), and write its artifacts
into --out; they are byte-identical to the suite's cases/<case_id>/.

The paradigm is looked up among the registered ones (--paradigm-file adds
custom ones), the instance from the id (a reported name or gen-<spec>). An
instance file cannot be named by an id: give it with --instance. With
--suite-dir the case is rebuilt from that suite's suite.json instead, with
the paradigm switches and instance recorded there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := loadParadigmFiles(files); err != nil {
				return err
			}
			var cs harness.Case
			var err error
			if suiteDir != "" {
				if instance != "" {
					return errors.New("give --instance or --suite-dir, not both")
				}
				cs, err = harness.CaseFromSuiteDir(suiteDir, id)
			} else {
				cs, err = harness.CaseFromID(id, instance)
			}
			if err != nil {
				return err
			}
			if cs.Controller == extctl.Name {
				command, _ := cmd.Flags().GetString("controller-command")
				if command == "" {
					return fmt.Errorf("case %s ran an external controller: give --controller-command", cs.ID)
				}
				sess, err := externalSession(cmd, command)
				if err != nil {
					return err
				}
				defer sess.Close()
				if err := cs.UseMaker(sess); err != nil {
					return err
				}
			}
			if cs.Controller == "llm" {
				mk, closer, err := lf.maker()
				if err != nil {
					return err
				}
				defer closer()
				if err := cs.UseMaker(mk); err != nil {
					return err
				}
			}
			if out == "" {
				out = filepath.Join("runs", cs.ID)
			}
			ep, err := cs.EpisodeIn(cmd.Context(), out)
			if err != nil {
				return err
			}
			if err := runEpisode(cmd, ep, out); err != nil {
				return err
			}
			return cs.EndIn(ep, out)
		},
	}
	f := c.Flags()
	f.StringVar(&id, "case-id", "", "case id, e.g. A5C12-1__centralized__rule__s1 (required)")
	f.StringVar(&out, "out", "", "output directory (default runs/<case_id>)")
	f.StringVar(&suiteDir, "suite-dir", "", "rebuild the case from this suite directory's suite.json")
	f.StringVar(&instance, "instance", "", "the instance file of a file-<name> case id")
	f.StringArrayVar(&files, "paradigm-file", nil, "register a custom paradigm from a YAML file (repeatable)")
	c.MarkFlagRequired("case-id")
	lf.register(f)
	f.String("controller-command", "", "the external controller of a case run with one (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer")
	return c
}

// interruptible returns a context that a first Ctrl-C (or SIGTERM) cancels
// so that a suite stops launching new work and finishes what is in flight
// (what names it: "cases", "runs"); a second Ctrl-C kills the process.
// Call done when the suite has ended.
func interruptible(cmd *cobra.Command, what string) (ctx context.Context, done func()) {
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
			fmt.Fprintf(cmd.ErrOrStderr(), "\ninterrupted: finishing the %s in flight (Ctrl-C again to abandon them)\n", what)
		case <-finished:
		}
	}()
	return ctx, func() { close(finished); stop() }
}
