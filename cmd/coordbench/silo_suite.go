package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/silo/task"
)

func siloSuiteCmd() *cobra.Command {
	var opt suite.Options
	var out string
	var workers int
	var force bool
	var lf siloLLMFlags
	c := &cobra.Command{
		Use:   "suite",
		Short: "Run a SILO-BENCH suite: tasks × N × protocols × agents × seeds",
		Long: `Run every case (task × N × protocol × agent × seed) on a pool of workers
and write, into --out:

  silo_suite.json      the suite's configuration
  summary.csv          one row per run: ids, S, success, P, P_paper (the
                       published P rule) and its crash count, P_fine, rounds,
                       tool calls, messages, bytes, D, D_reads; for LLM
                       agents model, calls, input/output tokens, C, C_code,
                       wasted calls, model errors, max context tokens; then
                       capped turns, agent errors and failures by label
  aggregate.csv        by agent × level × N × protocol: runs, mean S, success
                       rate, mean P and P_paper, runs where the published P
                       rule crashes, mean D and D_reads, RCC (from mean S),
                       RCC_success (from the success rate), rcc_baseline,
                       mean C and C_code
  aggregate.md         the same as a Markdown table (also printed)
  runs/<case_id>/      result.json, run.db, calls.jsonl, manifest.json (and
                       turns.jsonl, timing.jsonl for LLM agents)
  failed/<case_id>/    the partial files and error.txt of a run that failed
                       (a model outage, say); it runs again next time

Case ids read <task>__n<N>__<protocol>__<agent>__seeded-s<seed> (or
__official), e.g. I-01__n10__p2p__reference__seeded-s1; LLM agents are
labelled llm-<model>[+scaffold…][+native] (docs/silo-llm.md), so the runs
of scaffold ablations never share an id and RCC compares a model with
itself (each ablation is a suite of its own: give each its own --out).
Agent kind team plays a mixed team of the models named with
--llm-endpoint (--team a=3,b=2 exact counts, --team-shares a=1,b=1 shares
of every N; labelled llm-mix-a=3-b=2…); such a suite also writes
summary_models.csv and aggregate_models.csv, its runs broken down by
model.
RCC = 1 − S(N)/S(baseline) compares each N with a single agent. The
baseline (--baseline) is merged by default: for each N = k, one agent holds
the merged data of the N = k instances (same mode and seeds; case ids end in
-merged-n<k>); seeded: fresh N = 1 instances (one shard's worth of data;
official mode has none, so they come from --seeds), added when --agents
lacks 1. --no-baseline adds none.
Running the same command again resumes: finished runs whose manifest
matches are kept. The configuration is recorded in silo_suite.json; a
suite of another configuration (other runs, limits or model settings) is
refused in the same --out, which it would otherwise leave half replaced;
--force replaces it. On Ctrl-C no new run starts, the summary of the finished
runs is written, and the exit code is 1; a second Ctrl-C abandons the runs
in flight.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if err := atLeastOne("--max-rounds", opt.MaxRounds); err != nil {
				return err
			}
			opt.Agent, opt.Mode = canon(opt.Agent, slices.Concat(round.TeamNames(), []string{play.AgentLLM, play.AgentTeam})...), canon(opt.Mode, task.ModeSeeded, task.ModeOfficial)
			opt.Baseline, opt.MessageFormat = canon(opt.Baseline, suite.BaselineMerged, suite.BaselineSeeded), canon(opt.MessageFormat, "str", "json")
			opt.MessageOrder = canon(opt.MessageOrder, "random", "fixed")
			models, closer, err := lf.models(opt.Agent)
			if err != nil {
				return err
			}
			defer closer()
			opt.LLMs = models.llms
			if models.team != nil {
				opt.Teams = []*play.Team{models.team}
			}
			if len(models.llms) > 0 && !cmd.Flags().Changed("workers") {
				workers = max(workers, suite.LLMWorkers)
			}
			s, err := suite.Resolve(opt)
			if err != nil {
				return lf.teamError(err)
			}
			if out == "" {
				out = filepath.Join("runs", "silo_suite")
			}
			return runSiloSuite(cmd, s, out, suite.RunOptions{Workers: workers, Force: force}, models.status)
		},
	}
	f := c.Flags()
	f.StringVar(&opt.Levels, "levels", "I,II,III", "task levels: comma list of I, II, III")
	f.StringVar(&opt.Tasks, "tasks", "", "task ids (comma list); replaces --levels")
	f.StringVar(&opt.Agents, "agents", "2,5,10,20,50,100", "team sizes N (comma list)")
	f.StringVar(&opt.Protocols, "protocols", "p2p,broadcast,sfs", "protocols (comma list of p2p, broadcast, sfs)")
	f.StringVar(&opt.Agent, "agent", "reference", "agents (comma list): reference, tree, chain, llm (needs --llm-model and --llm-base-url, or --llm-endpoint), team (a mixed team: --team or --team-shares)")
	f.StringVar(&opt.Mode, "mode", "seeded", "seeded or official (official: N in 2, 5, 10, 20, 50, 100)")
	f.StringVar(&opt.Seeds, "seeds", "1", "seeds of seeded runs (official mode: of a seeded N = 1 baseline): comma list, ranges a-b allowed")
	f.IntVar(&opt.MaxRounds, "max-rounds", round.DefaultMaxRounds, "round cap")
	f.IntVar(&opt.MaxCallsPerTurn, "max-calls-per-turn", round.DefaultMaxCallsPerTurn, "tool calls one turn may execute, 0 = no cap (as published); with a cap, more end the turn (capped_turns)")
	f.StringVar(&opt.MessageFormat, "message-format", string(proto.FormatStr), messageFormatUsage)
	f.StringVar(&opt.MessageOrder, "message-order", string(proto.OrderRandom), messageOrderUsage)
	f.StringVar(&opt.Baseline, "baseline", suite.BaselineMerged, "N = 1 baseline of RCC: merged (one agent holding the merged data of each N = k instance) or seeded (fresh N = 1 instances)")
	f.BoolVar(&opt.NoBaseline, "no-baseline", false, "do not add the N = 1 baseline runs (RCC stays empty)")
	f.IntVar(&workers, "workers", runtime.NumCPU(), fmt.Sprintf("runs at once (with --agent llm at least %d by default; the endpoint's --llm-concurrency bounds the model calls)", suite.LLMWorkers))
	f.StringVar(&out, "out", "", "suite directory (default runs/silo_suite)")
	f.BoolVar(&force, "force", false, "replace a suite of another configuration in --out (its runs are removed)")
	lf.register(f)
	return withTracing(c)
}

func runSiloSuite(cmd *cobra.Command, s *suite.Suite, dir string, opt suite.RunOptions, status func() string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ctx, done := interruptible(cmd, "runs")
	defer done()
	p := newSuiteDisplay(stderr, "silo suite", "runs", opt.Workers, status)
	opt.Progress = p.update
	rep, err := suite.Run(ctx, s, dir, opt)
	p.finish()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	suite.WriteAggregateTable(stdout, rep.Aggregate)
	suite.WriteModelTable(stdout, rep.ModelAggregate)
	for _, f := range rep.Failures {
		fmt.Fprintf(stderr, "failed: %s: %s\n", f.Case.ID, seeInFlagTerms(cmd, f.Err))
	}
	return suiteEnd{unit: "runs", total: len(s.Cases), ran: rep.Ran, kept: rep.Skip,
		finished: len(rep.Cases), failed: len(rep.Failures), interrupted: rep.Interrupted, dir: dir,
		files: [][2]string{
			{"summary", filepath.Join(dir, suite.FileSummary)},
			{"aggregate", filepath.Join(dir, suite.FileAggregate) + " (and .md)"},
			{"runs", dirPath(dir, suite.RunsDir)}},
		failedHint: "partial files and error.txt in " + dirPath(dir, suite.FailedDir),
	}.print(stdout)
}
