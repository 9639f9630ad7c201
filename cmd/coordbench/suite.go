package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/suiterun"
)

func desSuiteCmd() *cobra.Command {
	var opt harness.SuiteOptions
	var out, cases, groupBy string
	var workers int
	var force bool
	var lf llmFlags
	var lim *plantLimits
	c := &cobra.Command{
		Use:   "suite",
		Short: "Run a benchmark suite: instances × paradigms × controllers × seeds",
		Long: `Run every case (instance × paradigm × controller × seed) of a suite on a
pool of workers and write, into --out:

  suite.json             the suite's configuration
  suite_summary.csv      one row per case: ids, status and the 15 metrics
  suite_aggregate.csv    mean and std of each metric per group of cases
  suite_aggregate.md     the same as Markdown tables, with a legend
  cases/<case_id>/       each case's artifacts, as 'des run' writes them
  failed/<case_id>/      artifacts and error.txt of a case whose episode failed

Case ids read <instance>__<paradigm>__<controller>__s<seed>, e.g.
A5C12-1__centralized__rule__s1. Running the same command again resumes:
finished cases whose manifest matches are kept, the rest run; --limit and
--cases select cases of the same suite. A suite of another configuration
(instances, paradigms, controllers, models, seeds) is refused in the same
--out, which it would otherwise leave half replaced; --force replaces it. With an LLM
controller, a model call that fails after its retries (endpoint
unreachable, key rejected, quota, replay-cache miss) fails its case
(status aborted in failed/<case_id>/), which the next run reruns. On Ctrl-C no
new case starts, the summary of the finished cases is written, and the
exit code is 1; a second Ctrl-C abandons the cases in flight.

The aggregate (the files and the tables printed at the end) has one row
per instance × controller × model × framework × paradigm, the paper's
Table 3 layout, in the suite's order. --group-by chooses other keys, e.g.
--group-by paradigm pools every instance and controller into one row per
paradigm; a rerun with another --group-by only rewrites the aggregate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkWorkers(workers); err != nil {
				return err
			}
			opt.Suite, opt.Controllers = canon(opt.Suite, instanceNames()...), canon(opt.Controllers, controllerNames()...)
			opt.Builtins = policy.Builtins()
			opt.Paradigms, opt.Seeds = canon(opt.Paradigms, paradigmNames(nil)...), canon(opt.Seeds, "test", "dev")
			keys, err := harness.ParseGroupBy(canon(groupBy, harness.GroupKeys()...))
			if err != nil {
				return err
			}
			opt.Cases = splitList(cases)
			var status func() string
			withLLM := slices.Contains(splitList(opt.Controllers), "llm")
			if err := lf.onlyWith(withLLM, "--controller does not include llm"); err != nil {
				return err
			}
			if withLLM {
				lf.abortOnModelError = true // a model failure fails the case, which reruns next time
				mk, closer, err := lf.maker()
				if err != nil {
					return err
				}
				defer closer()
				opt.Makers = append(opt.Makers, mk)
				status = mk.Status
				if !cmd.Flags().Changed("workers") {
					workers = max(workers, lf.spec.Limits.Concurrency) // episodes wait on the model: keep the endpoint busy
				}
			}
			if command, _ := cmd.Flags().GetString("controller-command"); command != "" {
				if !cmd.Flags().Changed("controller") {
					opt.Controllers = extctl.Name
				} else if !slices.Contains(splitList(opt.Controllers), extctl.Name) {
					// The runner would run no case: say so rather than drop it.
					return fmt.Errorf("--controller-command runs controller %q, which --controller %s leaves out: add it (--controller %s,%s) or drop --controller-command",
						extctl.Name, opt.Controllers, opt.Controllers, extctl.Name)
				}
				sess, err := externalSession(cmd, command)
				if err != nil {
					return err
				}
				defer sess.Close()
				opt.Makers = append(opt.Makers, sess)
			}
			if out == "" {
				out = filepath.Join("runs", "suite_"+suiteDirName(opt.Suite))
			}
			if err := lim.resume(out, cmd.Flags().Changed("plant-limit"), force); err != nil {
				return err
			}
			opt.PlantLimits = &lim.lim
			s, err := harness.ResolveSuite(opt)
			if err != nil {
				return err
			}
			return runSuite(cmd, s, out, harness.SuiteRunOptions{Options: suiterun.Options{Workers: workers, Force: force}, GroupBy: keys}, status)
		},
	}
	f := c.Flags()
	f.StringVar(&opt.Suite, "suite", "A5C12-1", "instances: A5C12, A3C9, all, an instance name, a file, gen:A<n>C<m>, or a comma list")
	f.StringVar(&opt.Paradigms, "paradigm", "all", "paradigms: all (the built-in ones and those of --paradigm-file) or a comma list of ids")
	f.StringArrayVar(&opt.ParadigmFiles, "paradigm-file", nil, "add a custom paradigm from a YAML file to the suite (repeatable)")
	f.StringVar(&opt.Seeds, "seeds", "test", "seeds: test or dev (each instance's split) or a comma list")
	f.StringVar(&opt.Controllers, "controller", "builtin", "controllers: builtin (= rule) or a comma list of: "+strings.Join(policy.Names(), ", ")+", llm")
	f.IntVar(&opt.Limit, "limit", 0, "run only the first N cases (0: all)")
	f.StringVar(&cases, "cases", "", "run only these case ids (comma list)")
	f.IntVar(&workers, "workers", runtime.NumCPU(), "cases run at once")
	f.StringVar(&groupBy, "group-by", strings.Join(harness.GroupKeys(), ","), "the aggregate's rows: a comma list of "+strings.Join(harness.GroupKeys(), ", "))
	f.StringVar(&out, "out", "", "suite directory (default runs/suite_<suite>)")
	lim = addPlantLimits(f)
	f.BoolVar(&force, "force", false, "replace a suite of another configuration in --out (its cases are removed)")
	lf.register(f)
	f.String("controller-command", "", "run an external controller (one process per case) and add it to the suite as controller \"external\" (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer")
	return withTracing(c)
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
func runSuite(cmd *cobra.Command, s *harness.Suite, dir string, opt harness.SuiteRunOptions, status func() string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ctx, done := interruptible(cmd, "cases")
	defer done()
	p := newSuiteDisplay(stderr, "suite", "cases", opt.Workers, status)
	opt.Progress = p.update
	rep, err := harness.RunSuite(ctx, s, dir, opt)
	p.finish()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	harness.WriteAggregateText(stdout, rep)
	for _, r := range rep.Cases {
		if r.Status == harness.StatusError {
			fmt.Fprintf(stderr, "failed: %s: %s\n", r.Case.ID, seeInFlagTerms(cmd, r.Err))
		}
	}
	return suiteEnd{unit: "cases", total: len(s.Cases), ran: rep.Ran, kept: rep.Skip,
		finished: len(rep.Cases) - rep.Failed, failed: rep.Failed, interrupted: rep.Interrupted, dir: dir,
		files: [][2]string{
			{"summary", filepath.Join(dir, harness.FileSuiteSummary)},
			{"aggregate", filepath.Join(dir, harness.FileSuiteAggregate) + " (and .md)"},
			{"cases", dirPath(dir, harness.SuiteCasesDir)}},
		failedHint: fmt.Sprintf("status error in %s, artifacts and error.txt in %s",
			filepath.Join(dir, harness.FileSuiteSummary), dirPath(dir, harness.SuiteFailedDir)),
	}.print(stdout)
}

func desCaseCmd() *cobra.Command {
	var id, out, suiteDir, instance string
	var files []string
	var force bool
	var lf llmFlags
	var lim *plantLimits
	c := &cobra.Command{
		Use:   "case",
		Short: "Re-run one case of a suite by its case id",
		Long: `Re-run one suite case, named by its case id
(<instance>__<paradigm>__<controller>__s<seed>), and write its artifacts
into --out; they are byte-identical to the suite's cases/<case_id>/.

The paradigm is looked up among the built-in ones and those of
--paradigm-file, the instance from the id (a reported name or
gen-<spec>). An instance file cannot be named by an id: give it with
--instance. With
--suite-dir the case is rebuilt from that suite's suite.json instead, with
the paradigm switches and instance recorded there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			paradigms, err := paradigmSet(files)
			if err != nil {
				return err
			}
			var cs harness.Case
			if suiteDir != "" {
				if instance != "" {
					return errors.New("give --instance or --suite-dir, not both")
				}
				if err := lim.resume(suiteDir, cmd.Flags().Changed("plant-limit"), true); err != nil {
					return err
				}
				cs, err = harness.CaseFromSuiteDir(suiteDir, id, policy.Builtins(), lim.lim)
			} else {
				cs, err = harness.CaseFromID(id, instance, paradigms, policy.Builtins(), lim.lim)
			}
			if err != nil {
				return err
			}
			if err := lf.onlyWith(cs.Controller == "llm", fmt.Sprintf("case %s's controller is %s", cs.ID, cs.Controller)); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("runs", cs.ID)
			}
			ro, err := newRunOut(out, force)
			if err != nil {
				return err
			}
			defer ro.discard() // a no-op once moved into place
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
				lf.abortOnModelError = true // as in the suite
				lf.retries = cmd.ErrOrStderr()
				mk, closer, err := lf.maker()
				if err != nil {
					return err
				}
				defer closer()
				if err := cs.UseMaker(mk); err != nil {
					return err
				}
			}
			ctx, done := interruptibleRun(cmd)
			defer done()
			ep, err := cs.EpisodeIn(ctx, ro.tmp)
			if err != nil {
				return err
			}
			ep.Stop = ctx.Done()
			return runEpisode(cmd, ctx, ep, ro, func() error { return cs.EndIn(ep, ro.tmp) })
		},
	}
	f := c.Flags()
	f.StringVar(&id, "case-id", "", "case id, e.g. A5C12-1__centralized__rule__s1 (required)")
	f.StringVar(&out, "out", "", "output directory (default runs/<case_id>); refused if it exists and is not empty, unless --force")
	f.BoolVar(&force, "force", false, "replace an existing --out")
	f.StringVar(&suiteDir, "suite-dir", "", "rebuild the case from this suite directory's suite.json")
	f.StringVar(&instance, "instance", "", "the instance file of a file-<name> case id")
	f.StringArrayVar(&files, "paradigm-file", nil, "add a custom paradigm from a YAML file (repeatable)")
	lim = addPlantLimits(f)
	c.MarkFlagRequired("case-id")
	lf.register(f)
	f.String("controller-command", "", "the external controller of a case run with one (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer")
	return withTracing(c)
}
