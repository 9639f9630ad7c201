package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/silo/task"
)

func siloImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import DIR",
		Short: "Check published SILO-BENCH task files against our tasks",
		Long: `Read every published task file in DIR ({case_id}_n{N}.json; the
generator's silo_bench_full.json and benchmark_summary.json are skipped),
recompute each agent's answer from the shards with our task code, and
compare it with the file's expected output; for the published agent
counts, also compare the whole instance with our replay of the official
generator. Exit 0 only if every file loads and every answer agrees. Run a
file with: coordbench silo run --task-file FILE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := filepath.Glob(filepath.Join(args[0], "*.json"))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "FILE\tTASK\tN\tANSWERS\tOFFICIAL REPLAY")
			checked, bad := 0, 0
			for _, f := range files {
				switch filepath.Base(f) {
				case "silo_bench_full.json", "benchmark_summary.json":
					continue
				}
				checked++
				in, err := task.LoadFile(f)
				if err != nil {
					bad++
					fmt.Fprintf(tw, "%s\t\t\terror: %v\t\n", filepath.Base(f), err)
					continue
				}
				answers := "agree"
				if err := in.Verify(); err != nil {
					bad++
					answers = "DISAGREE: " + err.Error()
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", filepath.Base(f), in.Task.ID, in.N, answers, replayStatus(in))
			}
			tw.Flush()
			if checked == 0 {
				return fmt.Errorf("no task files (*.json) in %s", args[0])
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d task files failed", bad, checked)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d task files: every answer agrees with ours\n", checked)
			return nil
		},
	}
}

// replayStatus compares an imported instance with our official replay.
func replayStatus(in *task.Instance) string {
	if !slices.Contains(task.OfficialCounts(), in.N) {
		return "n/a (not a published agent count)"
	}
	off, err := task.Official(in.Task.ID, in.N)
	if err != nil {
		return "error: " + err.Error()
	}
	if sameJSON(off.Shards, in.Shards) && sameJSON(off.Expected, in.Expected) {
		return "identical"
	}
	return "differs (not the published stream)"
}

func sameJSON(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		var x, y bytes.Buffer
		if json.Compact(&x, a[i]) != nil || json.Compact(&y, b[i]) != nil || !bytes.Equal(x.Bytes(), y.Bytes()) {
			return false
		}
	}
	return true
}
