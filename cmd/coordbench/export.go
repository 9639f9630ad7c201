package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/export/inspect"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/suiterun"
)

func exportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Write finished runs in other tools' formats",
	}
	c.AddCommand(exportInspectCmd())
	return c
}

// jsonlName is the file --format jsonl writes into an --out directory.
const jsonlName = "runs.jsonl"

func exportInspectCmd() *cobra.Command {
	var out, format, created string
	var force bool
	c := &cobra.Command{
		Use:   "inspect DIR... --out DIR",
		Short: "Write runs as Inspect eval logs (JSON, log format 2), or as flat JSON lines",
		Long: `Read run or suite directories of either benchmark (des run, des suite,
silo run, silo suite; which one is told from the files in each) and write
them as evaluation logs of the Inspect framework into the directory --out:
one JSON log per directory given and controller (des) or agent (silo) and
model, one sample per case (its seeds are the sample's epochs) with the
run's metrics as scores, its transcript as messages (model prompts and
replies; a scripted silo team's tool calls; a note for a built-in
controller) and its token usage. The logs follow Inspect's log-schema.json
(log format version 2) and are named as Inspect names JSON logs, so
"inspect view --log-dir DIR" lists them. See docs/export.md.

--format jsonl writes instead one flat JSON object per run (its ids,
status, every metric as a top-level number, tokens and model calls), a
line each, to --out: a file, or runs.jsonl in --out if it is a directory.

The runs are only read. The same directories give the same bytes; runs
record no wall-clock time, so the logs' created time is --created, by
default the Unix epoch. An --out that exists and is not empty is refused
unless --force, which replaces it.`,
		Example: `  coordbench export inspect runs/a3c9 --out logs/a3c9
  inspect view --log-dir logs/a3c9
  coordbench export inspect runs/a3c9 runs/silo --format jsonl --out runs.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out: give the directory (or, with --format jsonl, the file) to write")
			}
			seen := map[string]string{}
			for _, dir := range args {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return err
				}
				if prev, ok := seen[abs]; ok {
					return fmt.Errorf("%s and %s are one directory: give each directory once", prev, dir)
				}
				seen[abs] = dir
			}
			switch format {
			case "inspect":
				return writeInspect(cmd, args, out, inspect.Options{Created: created}, force)
			case "jsonl":
				return writeJSONL(cmd, args, out, force)
			}
			return fmt.Errorf("--format %q: want inspect or jsonl", format)
		},
	}
	f := c.Flags()
	f.StringVar(&out, "out", "", "output directory of the logs (with --format jsonl: a file, or a directory to hold runs.jsonl); refused if it exists and is not empty, unless --force")
	f.StringVar(&format, "format", "inspect", "inspect (Inspect eval logs, JSON) or jsonl (one flat JSON object per run)")
	f.StringVar(&created, "created", inspect.DefaultCreated, "the eval logs' created time (RFC 3339): runs record none")
	f.BoolVar(&force, "force", false, "replace an existing --out")
	return c
}

// writeInspect writes the eval logs of the runs of dirs into the
// directory out, whole or not at all (runOut). The directories are read
// one at a time (a log never spans two), so that only one directory's
// transcripts are held at once.
func writeInspect(cmd *cobra.Command, dirs []string, out string, opt inspect.Options, force bool) error {
	if err := opt.Check(); err != nil {
		return fmt.Errorf("--created: %w", err)
	}
	ro, err := newRunOut(out, force)
	if err != nil {
		return err
	}
	nlogs, nruns := 0, 0
	for _, dir := range dirs {
		runs, err := inspect.Read(dir)
		if err == nil {
			var logs []inspect.EvalLog
			if logs, err = inspect.Logs(runs, opt); err == nil {
				err = inspect.WriteLogs(ro.tmp, logs)
			}
			nlogs, nruns = nlogs+len(logs), nruns+len(runs)
		}
		if err != nil {
			ro.discard()
			return err
		}
	}
	if err := ro.commit(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d eval logs (%d runs) to %s; open them with: inspect view --log-dir %s\n",
		nlogs, nruns, out, out)
	return nil
}

// writeJSONL writes the records of the runs of dirs to out, or to
// out/runs.jsonl if out is a directory, whole or not at all.
func writeJSONL(cmd *cobra.Command, dirs []string, out string, force bool) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		out = filepath.Join(out, jsonlName)
	}
	if err := checkOut(out, force); err != nil {
		return err
	}
	var b bytes.Buffer
	n := 0
	for _, dir := range dirs {
		runs, err := inspect.Read(dir)
		if err != nil {
			return err
		}
		if err := inspect.WriteJSONL(&b, runs); err != nil {
			return err
		}
		n += len(runs)
	}
	if err := atomicfs.WriteFile(out, suiterun.TmpPrefix, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d runs to %s\n", n, out)
	return nil
}
