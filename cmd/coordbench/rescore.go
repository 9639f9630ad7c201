package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/rescore"
	"github.com/coordbench/coordbench/internal/scorediff"
	silorescore "github.com/coordbench/coordbench/silo/rescore"
)

// rescoreFlags are the flags of des rescore and silo rescore.
type rescoreFlags struct {
	dryRun, asJSON bool
}

func (f *rescoreFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "report what would change, write nothing")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print the difference report as JSON (rescore.json's content) instead of the table")
}

// run rescores with score under Ctrl-C: an interruption while scoring
// leaves the directory as it was; the writing, once started, finishes.
func (f *rescoreFlags) run(cmd *cobra.Command, score func(ctx context.Context, dryRun bool) (*scorediff.Report, error)) error {
	ctx, done := onInterrupt(cmd, "stopping: nothing is written (if the files were being written, that finishes first)")
	defer done()
	rep, err := score(ctx, f.dryRun)
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted before anything was written: the directory is as it was")
	}
	if rep != nil {
		w := cmd.OutOrStdout()
		if f.asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				return err
			}
		} else {
			rep.WriteTable(w)
		}
	}
	return err
}

func desRescoreCmd() *cobra.Command {
	var f rescoreFlags
	c := &cobra.Command{
		Use:   "rescore DIR",
		Short: "Recompute the metrics of a stored run or suite under the current scoring rules",
		Long: `Recompute metrics.json of a run directory, or of every finished case of a
suite directory and its suite_summary.csv and suite_aggregate.csv/.md, from
the runs' artifacts alone (trace.jsonl, decisions.jsonl, messages.jsonl),
under this build's scoring rules: no episode is played, no controller or
model is asked. Prints per case and metric what changed (old → new), or
"no change", and writes the same as rescore.json in DIR. Files that change
are replaced in place; their old versions are kept in DIR/rescore-backup/
(a rescore refuses to run while an earlier one's backup is there). A run
that was interrupted or aborted, an incomplete suite, a file that does not
match its manifest's hash are refused. See docs/rescore.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, dryRun bool) (*scorediff.Report, error) {
				return rescore.Dir(ctx, args[0], rescore.Options{DryRun: dryRun})
			})
		},
	}
	f.add(c)
	return c
}

func siloRescoreCmd() *cobra.Command {
	var f rescoreFlags
	c := &cobra.Command{
		Use:   "rescore DIR",
		Short: "Recompute the scores of a stored silo run or suite under the current scoring rules",
		Long: `Recompute result.json of a silo run directory, or of every finished run of
a silo suite directory and its summary and aggregate files (RCC among
them), from what each result.json records of its agents (answers, the
shards they saw and were informed of, model usage) and the instance,
rebuilt from the task, mode, seed and N, under this build's scoring rules:
no agent or model is run. Prints per case and figure what changed (old →
new), or "no change", and writes the same as rescore.json in DIR. Files
that change are replaced in place; their old versions are kept in
DIR/rescore-backup/. An incomplete suite, a result.json that does not match
its manifest's hash, a run of a task changed since are refused. See
docs/rescore.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, dryRun bool) (*scorediff.Report, error) {
				return silorescore.Dir(ctx, args[0], silorescore.Options{DryRun: dryRun})
			})
		},
	}
	f.add(c)
	return c
}
