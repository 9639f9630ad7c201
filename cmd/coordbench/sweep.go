package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

func sweepCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Run an experiment file, on one machine or in shards (docs/experiments.md)",
	}
	c.AddCommand(sweepPlanCmd(), sweepRunCmd(), sweepCollectCmd(), sweepServeCmd(), sweepStatusCmd())
	for _, sub := range c.Commands() {
		experimentCmd(sub)
	}
	return c
}

func sweepPlanCmd() *cobra.Command {
	var shardSpec string
	var show int
	c := &cobra.Command{
		Use:   "plan FILE",
		Short: "Print an experiment's cases and an estimate of their model calls, tokens and cost",
		Long: `Read the experiment file, resolve its cases as its suite would, and print
how many there are, the first --show case ids with their estimates, and,
per model and in total, an estimate of the model calls, input and output
tokens and cost of the cases with a model-backed controller (des
controller llm) or agents (silo agent kind llm). Nothing is run and no
model is called. For des the estimate plays each instance × paradigm ×
seed × framework once, in memory, with the LLM controller against a model
that answers as the rule controller does, counting one token per 4 bytes;
for silo it is an upper bound on the calls (N agents × the round cap) at a
documented number of tokens per call (docs/experiments.md, "Cost"). With
--shard, only that shard's cases.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sh, err := sweep.ParseShard(shardSpec)
			if err != nil {
				return err
			}
			if show < 0 {
				return fmt.Errorf("--show must not be negative (got %d)", show)
			}
			s, _, closer, err := loadSweep(args[0], sh)
			if err != nil {
				return err
			}
			defer closer()
			est, err := s.Estimate(cmd.Context())
			if err != nil {
				return err
			}
			s.RenderPlan(cmd.OutOrStdout(), args[0], est, show)
			return nil
		},
	}
	c.Flags().StringVar(&shardSpec, "shard", "", "only shard i/N's cases (i from 0 to N-1)")
	c.Flags().IntVar(&show, "show", 10, "how many case ids to print")
	return c
}

func sweepRunCmd() *cobra.Command {
	var out, shardSpec string
	var workers int
	var costLimit float64
	var force bool
	c := &cobra.Command{
		Use:   "run FILE",
		Short: "Run an experiment file's cases, or one shard's, into a suite directory",
		Long: `Run the cases of the experiment file into --out, in the layout of its
benchmark's suite (des: suite.json, suite_summary.csv, suite_aggregate.csv
and .md, cases/, failed/; silo: silo_suite.json, summary.csv,
aggregate.csv and .md, runs/, failed/) plus sweep.json, which records the
experiment and the shard. It resumes as the suites do: running it again
keeps the finished cases and reruns the failed ones.

--shard i/N runs only the cases whose position in suite order is i modulo N
(i from 0 to N-1): run the N shards anywhere, each into its own
directory, then merge them with sweep collect.

The cost of the model calls, at each model's price in the file, goes to
cost.csv (per case) and cost_summary.csv (per model, and the total) beside
the summaries; replies replayed from the response cache cost nothing and
are counted apart. --cost-limit USD starts no model-backed case once the money spent in
the directory (earlier runs included) plus the estimates of the cases
running plus that case's estimate (as sweep plan prints it) would exceed
the limit: the cases running finish, the command names the cases not
started and exits with an error; rerun with a higher limit to resume.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sh, err := sweep.ParseShard(shardSpec)
			if err != nil {
				return err
			}
			rc := sweep.RunConfig{Dir: out, Workers: workers, Force: force}
			if cmd.Flags().Changed("cost-limit") {
				rc.CostLimit = &costLimit
			}
			if err := rc.Validate(); err != nil { // before the models are built
				return err
			}
			s, m, closer, err := loadSweep(args[0], sh)
			if err != nil {
				return err
			}
			defer closer()
			var keys []string
			if s.Des != nil {
				if keys, err = s.Experiment.DesGroupBy(); err != nil {
					return err
				}
			}
			run, err := s.Start(cmd.Context(), rc, m)
			if err != nil {
				return err
			}
			var runErr error
			if s.Des != nil {
				runErr = runSuite(cmd, s.Des, out, harness.SuiteRunOptions{Options: run.Options, GroupBy: keys}, m.Status)
			} else {
				runErr = runSiloSuite(cmd, s.Silo, out, run.Options, m.Status)
			}
			return run.Finish(cmd.OutOrStdout(), cmd.ErrOrStderr(), runErr)
		},
	}
	f := c.Flags()
	f.StringVar(&out, "out", "", "suite directory of this run or shard (required)")
	f.StringVar(&shardSpec, "shard", "", "run only shard i/N: the cases at positions i, i+N, i+2N, … (i from 0 to N-1)")
	f.IntVar(&workers, "workers", 0, "cases run at once (0, the default: the file's run.workers, else the number of CPUs)")
	f.Float64Var(&costLimit, "cost-limit", 0, "US dollars: start no model-backed case once the money spent in --out plus the estimates of the running cases and of that case would exceed it (unset: no limit)")
	f.BoolVar(&force, "force", false, "replace a suite of another configuration in --out (its cases are removed); a directory of another experiment or shard is refused all the same")
	return withTracing(c)
}

func sweepCollectCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "collect DIR...",
		Short: "Merge the shard directories of one experiment into one suite directory",
		Long: `Copy the cases of the shard directories (the --out of each sweep run
--shard i/N) into --out, a new directory, and write its summaries with the
suite's own code: suite_summary.csv, suite_aggregate.csv and .md (des) or
summary.csv, aggregate.csv and .md (silo), byte-identical to those of a
single-machine run of the experiment. Every shard must be given, each
once, all of the same experiment and cut the same way; a shard with failed
cases is refused (rerun its sweep run, which retries them). Nothing is
run and no model is called.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if out == "" {
				return errors.New("--out is required: the directory to merge the shards into")
			}
			col, err := sweep.Collect(out, dirs)
			if err != nil {
				return err
			}
			s, closer, err := resolveRecorded(col.Experiment, dirs[0])
			if err != nil {
				return err
			}
			defer closer()
			files, err := col.Summarize(cmd.Context(), s, out)
			if err != nil {
				return err
			}
			if _, err := jetstream.CollectCaches(cmd.Context(), dirs, out); err != nil { // distributed runs' response caches
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "collected %d cases from %d shards into %s\n", len(s.IDs), col.Shards, out)
			for _, f := range files {
				fmt.Fprintf(w, "  %s\n", f)
			}
			return s.WriteCosts(w, out)
		},
	}
	c.Flags().StringVar(&out, "out", "", "the merged suite directory, new or empty (required)")
	return c
}

func sweepStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status DIR...",
		Short: "Print an experiment's progress from its run or shard directories: cases, per model, cost",
		Long: `Read the directories of one experiment (the --out of sweep run, one or
several shards; give every shard for the whole picture) and print how many
of its cases are planned, done, failed and not started, per model and in
total, the money spent on model calls (cached replies cost nothing; runs
that failed, were killed, were handed back or ran twice count too, named
apart) and, by estimate (as sweep plan prints it), the money the failed
and not-started cases will take. For the directory of a distributed sweep
(sweep serve, whose coordinator rewrites DIR/dist_status.json as results
come in) it first prints its state and how many cases are pending, running
on a worker, done, failed and dead-lettered. Nothing is run and no model
is called.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if err := sweepDirs(dirs); err != nil {
				return err
			}
			served := false
			for _, d := range dirs {
				found, err := distStatus(cmd.OutOrStdout(), d)
				if err != nil {
					return err
				}
				served = served || found
			}
			e, err := sweep.ExperimentOfDirs(dirs)
			if errors.Is(err, os.ErrNotExist) && served {
				return nil // a serve directory before its first case is stored
			}
			if err != nil {
				return err
			}
			s, closer, err := resolveRecorded(e, dirs[0])
			if err != nil {
				return err
			}
			defer closer()
			est, err := s.Estimate(cmd.Context())
			if err != nil {
				return err
			}
			st, err := sweep.StatusOf(s, est, sweep.DirProgress{Benchmark: e.Benchmark, Dirs: dirs})
			if err != nil {
				return err
			}
			return st.Render(cmd.OutOrStdout())
		},
	}
	return c
}

// sweepDirs refuses an argument that is not a directory: sweep status
// reads what sweep run wrote, not the experiment file.
func sweepDirs(dirs []string) error {
	for _, d := range dirs {
		st, err := os.Stat(d)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such directory: give the directories sweep run or serve wrote (their --out)", d)
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is a file, not a directory: sweep status reads the directories sweep run or serve wrote (their --out); for an experiment file's cases and cost estimate, run coordbench sweep plan %s", d, d)
		}
	}
	return nil
}

// resolveRecorded resolves the whole experiment e recorded in the sweep
// directory dir (its marker names errors); the closer releases the
// models' response cache.
func resolveRecorded(e *sweep.Experiment, dir string) (*sweep.Suite, func(), error) {
	m, closer, err := sweep.BuildModels(e, sweep.ModelOptions{Stubs: stubPolicies()})
	if err != nil {
		return nil, nil, err
	}
	s, err := sweep.Resolve(filepath.Join(dir, sweep.MarkerFile), e, m.Models, sweep.Whole())
	if err != nil {
		closer()
		return nil, nil, err
	}
	return s, closer, nil
}

// loadSweep reads the experiment file, builds its models and resolves
// shard sh of it; the closer releases the models' response cache.
func loadSweep(file string, sh sweep.Shard) (*sweep.Suite, *sweep.ModelSet, func(), error) {
	e, err := sweep.Load(file)
	if err != nil {
		return nil, nil, nil, err
	}
	m, closer, err := sweep.BuildModels(e, sweep.ModelOptions{Stubs: stubPolicies()})
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := sweep.Resolve(file, e, m.Models, sh)
	if err != nil {
		closer()
		return nil, nil, nil, err
	}
	return s, m, closer, nil
}
