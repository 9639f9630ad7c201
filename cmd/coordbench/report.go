package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/report"
	"github.com/coordbench/coordbench/suiterun"
)

func reportCmd() *cobra.Command {
	var opt report.Options
	var out string
	var force bool
	var figDir string
	c := &cobra.Command{
		Use:   "report DIR...",
		Short: "One self-contained HTML report (or the tables alone) of suite and run directories, with paired statistics",
		Long: `Read one or more suite directories of either benchmark (written by
"des suite" or "silo suite") or single run directories ("des run --out",
"silo run --out", or a suite's cases/<id>/ and runs/<id>/); which one is
told from the files in each.

By default it writes one self-contained HTML page to report.html (or to
--out FILE.html; --format html alone writes it to standard output):
figures as inline SVG, nothing fetched from a network, the same bytes for
the same inputs.

  des suite    the paradigm matrix (the DESBench paper's Table 3 layout,
               best value per column marked, ↑/↓ directions), the four
               metric families side by side per instance, the paired
               differences between paradigms with 95% t and bootstrap
               intervals, and per case (--cases) a Gantt chart of every
               machine, the plant's power against its cap, the decision
               sources over time and the messages by type
  silo suite   success and partial correctness against N per level and
               protocol (error bars over seeds), RCC and RCC_success
               against N, density and tokens against N, failure modes and
               their co-occurrence, the table, and per run (--cases) the
               communication graph round by round and the transcript as
               "silo show" prints it with each agent's answer and score
  run dir      the per-case section of that run

--compare A B pairs two suites of the same benchmark case by case (the
key whose values differ, e.g. the controller, is the compared one) and
gives per-metric paired differences A − B with their intervals.
--compare-by model (or model=A,B) does the same within one suite, for
the cases of two models (or controllers, frameworks; silo agents).

--format md|csv|latex write the tables alone to standard output (or
--out): csv at full precision, one CSV block per table kind and directory
(--table to get one). See docs/report.md.

--figures DIR also writes each figure of the page on its own into DIR:
fig-ID.svg (the page's drawing) and fig-ID.tex (\caption and \label).

A file that exists (--out, or report.html by default) is refused, as
every command refuses an existing --out; --force replaces it (and writes
into a --figures directory that is not empty).`,
		Example: `  coordbench report runs/suite_A5C12-1
  coordbench report runs/suite_A5C12-1 --out a5c12.html
  coordbench report runs/a3c9 runs/silo --out report.html --cases all
  coordbench report --compare runs/rule runs/greedy --format md
  coordbench report runs/two-models --compare-by model --format md`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if w := report.ScorerWarning(args); w != "" { // in the report too (but csv)
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			if opt.Format == "" {
				opt.Format = "html"
				switch {
				case out == "":
					out = defaultReport
				case !strings.HasSuffix(strings.ToLower(out), ".html"):
					return fmt.Errorf("--out %s: give --format (md, csv, latex or html) for a file not named *.html", out)
				}
			}
			if figDir != "" {
				if err := checkFigures(figDir, force); err != nil { // before the work
					return err
				}
			}
			if out == "" {
				if err := report.Write(cmd.OutOrStdout(), args, opt); err != nil {
					return err
				}
				return writeFigures(cmd, figDir, args, opt)
			}
			if err := checkOut(out, force); err != nil { // before the work
				if !cmd.Flags().Changed("out") {
					return fmt.Errorf("%s (the default --out) already exists: give --out, or --force to replace it", out)
				}
				return err
			}
			var b bytes.Buffer
			if err := report.Write(&b, args, opt); err != nil {
				return err
			}
			if err := atomicfs.WriteFile(out, suiterun.TmpPrefix, b.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes)\n", out, b.Len())
			return writeFigures(cmd, figDir, args, opt)
		},
	}
	c.Flags().StringVar(&opt.Format, "format", "", "output format: "+strings.Join(report.Formats(), ", ")+" (default html, into --out or "+defaultReport+")")
	c.Flags().StringVar(&out, "out", "", "write to this file (default: html into "+defaultReport+"; md, csv, latex to standard output)")
	c.Flags().StringSliceVar(&opt.Tables, "table", nil, "md, csv, latex: write only these tables (comma list of "+strings.Join(report.SectionKinds(), ", ")+"; default all)")
	c.Flags().StringSliceVar(&opt.Cases, "cases", nil, fmt.Sprintf("html: the cases (des case ids, silo run ids) with a section of their own: a comma list, all or none (default: each des group's first incomplete episode, else its first seed; per silo level × protocol × agent a run at the largest N, a failed one first; at most %d)", report.DefaultCases))
	c.Flags().BoolVar(&force, "force", false, "replace an existing --out (or "+defaultReport+")")
	c.Flags().StringVar(&figDir, "figures", "", "also write each figure of the page into this directory: fig-ID.svg and a LaTeX caption stub fig-ID.tex")
	c.Flags().BoolVar(&opt.Compare, "compare", false, "compare two suites A B of the same benchmark, paired case by case")
	c.Flags().StringVar(&opt.CompareBy, "compare-by", "", "compare within one suite the cases of two values of a key, paired case by case: KEY or KEY=A,B (des: controller, model, framework; silo: agent, model)")
	return c
}

// defaultReport is the file the HTML report goes to without --out.
const defaultReport = "report.html"

// checkFigures refuses a --figures path that is a file, or a directory
// that is not empty unless force.
func checkFigures(dir string, force bool) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--figures: %w", err)
	case !st.IsDir():
		return fmt.Errorf("--figures %s is a file: give a directory", dir)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 && !force {
		return fmt.Errorf("--figures %s already exists and is not empty: give another directory, or --force to write into it", dir)
	}
	return nil
}

// writeFigures writes the figures of the page into dir, when given.
func writeFigures(cmd *cobra.Command, dir string, args []string, opt report.Options) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--figures: %w", err)
	}
	names, err := report.WriteFigures(dir, args, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d figures into %s (an SVG and a LaTeX caption stub each)\n", len(names)/2, dir)
	return nil
}
