package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/report"
)

func reportCmd() *cobra.Command {
	var opt report.Options
	c := &cobra.Command{
		Use:   "report DIR...",
		Short: "Tables of one or more suite directories, with paired statistics",
		Long: `Read one or more suite directories of either benchmark (written by
"des suite" or "silo suite"; which one is told from the files in each) and
write their tables to standard output:

  des suite    the paradigm matrix (the DESBench paper's Table 3 layout:
               a row per instance × controller × model × framework ×
               paradigm, the 15 metrics in their four families, mean ±
               std, the best value per column marked) and the paired
               differences between paradigms on the same seeds, with 95%
               t and bootstrap intervals
  silo suite   S, success, P, P_paper, D, D_reads and RCC by level × N ×
               protocol × agent

--format csv writes the same data at full precision, one CSV block per
table kind and directory (--table to get one). The HTML report with
figures is planned in issue 15; --format html says so. See docs/report.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return report.Write(cmd.OutOrStdout(), args, opt)
		},
	}
	c.Flags().StringVar(&opt.Format, "format", "md", "output format: "+strings.Join(report.Formats, ", ")+" (html: not yet, planned in issue 15)")
	c.Flags().StringSliceVar(&opt.Tables, "table", nil, "write only these tables (comma list of "+strings.Join(report.SectionKinds, ", ")+"; default all)")
	return c
}
