package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/silo/analyze"
	"github.com/coordbench/coordbench/suiterun"
)

func siloAnalyzeCmd() *cobra.Command {
	var out string
	var opt analyze.Options
	c := &cobra.Command{
		Use:   "analyze DIR",
		Short: "Topology, leader emergence, failure-mode co-occurrence, per-task results and context use of a run or a suite",
		Long: `Compute the SILO-BENCH paper's behavioural analyses (§5.1, appendices D, F.1, G)
from a run directory ("silo run --out") or a suite directory ("silo suite
--out"; its finished runs/<case_id>/, failed/ and temporaries ignored),
reading each run's result.json, manifest.json and run.db (read only), and
write into --out (default DIR/analysis):

  runs.csv       one row per run: edges, edge density, mean/max degrees,
                 degree Gini, the hub (degree, peers reached, traffic
                 share, peers reached by its submission) and whether a
                 single leader emerged
  agents.csv     one row per agent: out-/in-degree, peers reached, sent,
                 received, traffic, hub, submitted, correct, its labels
  topology.csv   means by agent × level × N × protocol (merged baselines
                 a row per size), with rounds of successful and failed
                 runs and the leader-emergence rate
  rounds.csv     rounds of successful against failed runs per agent over
                 all multi-agent runs (Table 16 overall)
  tasks.csv      success rate and mean S by agent × task × protocol over
                 the multi-agent runs (Table 10)
  context.csv    prompt tokens per model call from turns.jsonl: mean,
                 percentiles, max (appendix D; LLM runs only)
  leaders.csv    by agent × level × protocol (N >= 3): leader rate and
                 success with and without a leader
  labels.csv     failure labels and label pairs of the multi-agent runs
                 (N = 1 baselines left out, as in G.2): agents and runs,
                 by agent × level × protocol and overall, per label field
  analysis.md    the same as Markdown tables and co-occurrence matrices

Edges: p2p messages, broadcasts (to every other agent), sfs reads of a
file another agent wrote. Definitions: docs/silo-analyze.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.MaxRuns < 1 {
				return fmt.Errorf("--max-runs must be at least 1 (got %d)", opt.MaxRuns)
			}
			rep, err := analyze.Analyze(args[0], opt)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(args[0], analyze.DefaultOutDir)
			}
			if err := rep.Write(out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			rep.WriteSummary(w)
			fmt.Fprintf(w, "wrote %s (%s)\n", out, strings.Join(names(rep.Files()), ", "))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "output directory (default DIR/analysis)")
	c.Flags().IntVar(&opt.MaxRuns, "max-runs", analyze.DefaultMaxRuns, "refuse a suite with more finished runs than this")
	return c
}

// names are the files' names, in order.
func names(files []suiterun.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out
}
