package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/sweep"
)

func sweepCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Run an experiment file, on one machine or in shards (docs/experiments.md)",
	}
	c.AddCommand(sweepPlanCmd(), sweepRunCmd(), sweepCollectCmd(), sweepServeCmd(), sweepStatusDistCmd())
	return c
}

func sweepPlanCmd() *cobra.Command {
	var shardSpec string
	var show int
	c := &cobra.Command{
		Use:   "plan FILE",
		Short: "Print an experiment's cases and, for model-backed ones, an estimate of their model calls",
		Long: `Read the experiment file, resolve its cases as its suite would, and print
how many there are, the first --show case ids and, for cases with a
model-backed controller (des controller llm) or agents (silo agent kind
llm), an estimate of their model calls. Nothing is run and no model is
called; for des the estimate plays each instance × paradigm × seed once
with the rule controller, in memory. With --shard, only that shard's
cases.`,
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
			e := s.Experiment
			est, err := s.Estimate(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			name := e.Name
			if name == "" {
				name = filepath.Base(args[0])
			}
			fmt.Fprintf(w, "experiment %s (%s), id %s\n", name, e.Benchmark, e.ID()[:12])
			if sh == sweep.Whole {
				fmt.Fprintf(w, "cases: %d\n", len(s.IDs))
			} else {
				fmt.Fprintf(w, "cases: %d, of which shard %s runs %d\n", len(s.IDs), sh, s.Cases())
			}
			ids := s.ShardIDs()
			if n := min(show, len(ids)); n > 0 {
				fmt.Fprintf(w, "first %d:\n", n)
				for _, id := range ids[:n] {
					fmt.Fprintf(w, "  %s\n", id)
				}
			}
			switch {
			case est.ModelCases == 0:
				fmt.Fprintln(w, "model calls: none (no model-backed controller or agents)")
			case est.UpperBound:
				fmt.Fprintf(w, "model calls: %d cases with LLM agents, at most %d agent turns (N × max rounds per run), each one model call or more\n", est.ModelCases, est.Calls)
			default:
				fmt.Fprintf(w, "model calls: %d cases with a model-backed controller, about %d calls (one per agent decision, as many as the rule controller takes)\n", est.ModelCases, est.Calls)
			}
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
directory, then merge them with sweep collect.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("--out is required: the directory the cases go to")
			}
			sh, err := sweep.ParseShard(shardSpec)
			if err != nil {
				return err
			}
			if workers < 0 {
				return fmt.Errorf("--workers must be at least 1 (got %d)", workers)
			}
			s, m, closer, err := loadSweep(args[0], sh)
			if err != nil {
				return err
			}
			defer closer()
			e := s.Experiment
			if !cmd.Flags().Changed("workers") {
				workers = e.Run.Workers
			}
			if workers == 0 {
				workers = runtime.NumCPU()
				if e.WithLLM() { // cases wait on the model: keep the endpoint busy
					workers = max(workers, m.concurrency)
				}
			}
			if err := sweep.Mark(out, e, sh, s.Cases(), len(s.IDs)); err != nil {
				return err
			}
			if s.Des != nil {
				keys, err := e.DesGroupBy()
				if err != nil {
					return err
				}
				return runSuite(cmd, s.Des, out, harness.SuiteRunOptions{Workers: workers, GroupBy: keys}, m.status)
			}
			return runSiloSuite(cmd, s.Silo, out, suite.RunOptions{Workers: workers}, m.siloStats)
		},
	}
	f := c.Flags()
	f.StringVar(&out, "out", "", "suite directory of this run or shard (required)")
	f.StringVar(&shardSpec, "shard", "", "run only shard i/N: the cases at positions i, i+N, i+2N, … (i from 0 to N-1)")
	f.IntVar(&workers, "workers", 0, "cases run at once (default: the file's run.workers, else the number of CPUs)")
	return c
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
			e := col.Experiment
			m, closer, err := sweepModels(e)
			if err != nil {
				return err
			}
			defer closer()
			s, err := sweep.Resolve(filepath.Join(dirs[0], sweep.MarkerFile), e, m.Models, sweep.Whole)
			if err != nil {
				return err
			}
			files, err := col.Summarize(cmd.Context(), s, out)
			if err != nil {
				return err
			}
			if _, err := collectCaches(cmd.Context(), dirs, out); err != nil { // distributed runs' response caches
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "collected %d cases from %d shards into %s\n", len(s.IDs), col.Shards, out)
			for _, f := range files {
				fmt.Fprintf(w, "  %s\n", f)
			}
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "the merged suite directory, new or empty (required)")
	return c
}

// loadSweep reads the experiment file, builds its models and resolves
// shard sh of it; the closer releases the models' response cache.
func loadSweep(file string, sh sweep.Shard) (*sweep.Suite, *sweepModelSet, func(), error) {
	e, err := sweep.Load(file)
	if err != nil {
		return nil, nil, nil, err
	}
	m, closer, err := sweepModels(e)
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

// sweepModelSet is an experiment's models, built with the suites' own
// flag code.
type sweepModelSet struct {
	sweep.Models
	concurrency int
	status      func() string
	siloStats   *llm.Stats
}

// sweepModels builds the model-backed controllers or agents of e from its
// llm section, through the --llm-* flags of the suites (so defaults and
// checks are theirs); the closer releases the response cache.
func sweepModels(e *sweep.Experiment) (*sweepModelSet, func(), error) {
	set := &sweepModelSet{}
	if !e.WithLLM() {
		if e.LLM != nil {
			return nil, nil, fmt.Errorf("the experiment has an llm section but no model-backed controller or agents (des controllers: llm; silo agent_kinds: llm)")
		}
		return set, func() {}, nil
	}
	if e.LLM == nil {
		return nil, nil, errors.New("the experiment runs llm controllers or agents: give its llm section (model, base_url, ...; docs/experiments.md)")
	}
	fs := pflag.NewFlagSet("llm", pflag.ContinueOnError)
	var dl llmFlags
	var sl siloLLMFlags
	if e.Benchmark == sweep.BenchmarkDes {
		dl.register(fs)
	} else {
		sl.register(fs)
	}
	l := *e.LLM
	if l.Cache != "" {
		l.Cache = e.Path(l.Cache) // relative to the experiment file, as its other paths
	}
	if err := setLLMFlags(fs, &l); err != nil {
		return nil, nil, err
	}
	if e.Benchmark == sweep.BenchmarkDes {
		dl.abortOnModelError = true // a model failure fails the case, which reruns next time
		mk, closer, err := dl.maker()
		if err != nil {
			return nil, nil, fmt.Errorf("experiment llm section: %w", err)
		}
		set.DesMakers, set.status, set.concurrency = []harness.ControllerMaker{mk}, mk.Status, dl.concurrency
		return set, closer, nil
	}
	agent, closer, err := sl.agent(e.SiloOptions().Agent)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment llm section: %w", err)
	}
	set.SiloLLM, set.siloStats, set.concurrency = agent, sl.stats, max(sl.concurrency, siloLLMWorkers)
	return set, closer, nil
}

// setLLMFlags sets the --llm-* flags of fs from an experiment's llm
// section; an error names the field.
func setLLMFlags(fs *pflag.FlagSet, l *sweep.LLM) error {
	type set struct {
		field, flag, value string
		given              bool
	}
	fl := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	sets := []set{
		{"model", "llm-model", l.Model, true},
		{"base_url", "llm-base-url", l.BaseURL, true},
		{"api_key_env", "llm-api-key-env", l.APIKeyEnv, l.APIKeyEnv != ""},
		{"temperature", "llm-temperature", fl(l.Temperature), l.Temperature != 0},
		{"max_tokens", "llm-max-tokens", strconv.Itoa(l.MaxTokens), l.MaxTokens != 0},
		{"concurrency", "llm-concurrency", strconv.Itoa(l.Concurrency), l.Concurrency != 0},
		{"rpm", "llm-rpm", fl(l.RPM), l.RPM != 0},
		{"cache", "llm-cache", l.Cache, l.Cache != ""},
		{"cache_mode", "llm-cache-mode", l.CacheMode, l.CacheMode != ""},
		{"timeout", "llm-timeout", string(l.Timeout), l.Timeout != ""},
		{"max_attempts", "llm-max-attempts", strconv.Itoa(l.MaxAttempts), l.MaxAttempts != 0},
		{"framework", "framework", l.Framework, l.Framework != ""},
		{"reply_parsing", "reply-parsing", l.ReplyParsing, l.ReplyParsing != ""},
		{"tool_format", "tool-format", l.ToolFormat, l.ToolFormat != ""},
		{"scaffold", "scaffold", strings.Join(l.Scaffold, ","), len(l.Scaffold) > 0},
		{"context_budget", "context-budget", strconv.FormatInt(l.ContextBudget, 10), l.ContextBudget != 0},
		{"reply_reserve", "reply-reserve", strconv.FormatInt(l.ReplyReserve, 10), l.ReplyReserve != 0},
	}
	if l.Seed != nil {
		sets = append(sets, set{"seed", "llm-seed", strconv.FormatInt(*l.Seed, 10), true})
	}
	for _, s := range sets {
		if !s.given {
			continue
		}
		if fs.Lookup(s.flag) == nil {
			return fmt.Errorf("experiment field \"llm.%s\": not a setting of this benchmark", s.field)
		}
		if err := fs.Set(s.flag, s.value); err != nil {
			return fmt.Errorf("experiment field \"llm.%s\": %v", s.field, err)
		}
	}
	return nil
}
