package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// formats backs Formats.
var formats = []string{"html", "md", "csv", "latex"}

// Formats returns the output formats of Write.
func Formats() []string { return slices.Clone(formats) }

// Cell is one cell of a displayed table.
type Cell struct {
	Text string
	Best bool // the best value of its column within its block
}

// Table is one displayed table: Markdown and LaTeX write it as it is.
type Table struct {
	Title   string
	Caption string
	Head    []string
	Left    []int // text columns (left-aligned)
	Rows    [][]Cell
	Notes   []string // lines under the table
}

// Section is every table of one kind for one suite directory: the
// displayed tables, and the same data as one machine-readable CSV (full
// precision, one column per number).
type Section struct {
	Suite   string // the directory as given
	Kind    string // "matrix", "paired" or "silo"
	Title   string
	Tables  []Table
	CSVHead []string
	CSVRows [][]string
}

// Sections kinds.
const (
	SectionMatrix = "matrix"
	SectionPaired = "paired"
	SectionSilo   = "silo"
	// SectionScaling is a des suite's tables against plant size, when it
	// holds plants of two sizes or more.
	SectionScaling = "scaling"
)

// sectionKinds backs SectionKinds.
var sectionKinds = []string{SectionMatrix, SectionPaired, SectionScaling, SectionRoles, SectionSilo, SectionSiloPaired, SectionSiloModels, SectionCompare}

// SectionKinds returns the kinds a caller can select (Options.Tables).
func SectionKinds() []string { return slices.Clone(sectionKinds) }

// writeMarkdown writes the sections as Markdown.
func writeMarkdown(w io.Writer, secs []Section) error {
	for i, s := range secs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "# %s\n", mdEscape(s.Title))
		for _, t := range s.Tables {
			fmt.Fprintf(w, "\n## %s\n\n", mdEscape(t.Title))
			if t.Caption != "" {
				fmt.Fprintf(w, "%s\n\n", mdEscape(t.Caption))
			}
			rows := make([][]string, len(t.Rows))
			for r, row := range t.Rows {
				rows[r] = make([]string, len(row))
				for c, cell := range row {
					rows[r][c] = mdEscape(cell.Text)
					if cell.Best {
						rows[r][c] = "**" + rows[r][c] + "**"
					}
				}
			}
			head := make([]string, len(t.Head))
			for c, h := range t.Head {
				head[c] = mdEscape(h)
			}
			mdtable.WriteMarkdown(w, head, rows, t.Left...)
			for _, n := range t.Notes {
				fmt.Fprintf(w, "\n%s\n", mdEscape(n))
			}
		}
	}
	return nil
}

// mdEscape keeps a cell's text from breaking a Markdown table
// (untrusted.MarkdownCell) or turning bold.
func mdEscape(s string) string {
	return strings.ReplaceAll(untrusted.MarkdownCell(s), "*", `\*`)
}

// writeCSV writes each section as a CSV block (header, rows); blocks are
// separated by one empty line. Select one kind of section (Options.Tables)
// to get a single CSV file.
func writeCSV(w io.Writer, secs []Section) error {
	for i, s := range secs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		cw := untrusted.NewCSVWriter(w)
		cw.Write(append([]string{"suite", "table"}, s.CSVHead...))
		for _, r := range s.CSVRows {
			cw.Write(append([]string{s.Suite, s.Kind}, r...))
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return nil
}

// writeLaTeX writes each table as a booktabs tabular, its title and
// caption as comments, the best values in bold.
func writeLaTeX(w io.Writer, secs []Section) error {
	fmt.Fprintln(w, `% coordbench report: needs \usepackage{booktabs}`)
	for _, s := range secs {
		fmt.Fprintf(w, "\n%% %s\n", oneLine(s.Title))
		for _, t := range s.Tables {
			fmt.Fprintf(w, "\n%% %s\n", oneLine(t.Title))
			if t.Caption != "" {
				fmt.Fprintf(w, "%% %s\n", oneLine(t.Caption))
			}
			var spec strings.Builder
			for c := range t.Head {
				if slices.Contains(t.Left, c) {
					spec.WriteByte('l')
				} else {
					spec.WriteByte('r')
				}
			}
			fmt.Fprintf(w, "\\begin{tabular}{%s}\n\\toprule\n", spec.String())
			head := make([]string, len(t.Head))
			for c, h := range t.Head {
				head[c] = untrusted.LaTeX(h)
			}
			fmt.Fprintf(w, "%s \\\\\n\\midrule\n", strings.Join(head, " & "))
			for _, row := range t.Rows {
				cells := make([]string, len(row))
				for c, cell := range row {
					cells[c] = untrusted.LaTeX(cell.Text)
					if cell.Best {
						cells[c] = `\textbf{` + cells[c] + `}`
					}
				}
				fmt.Fprintf(w, "%s \\\\\n", strings.Join(cells, " & "))
			}
			fmt.Fprintln(w, "\\bottomrule\n\\end{tabular}")
			for _, n := range t.Notes {
				fmt.Fprintf(w, "%% %s\n", oneLine(n))
			}
		}
	}
	return nil
}

// oneLine is s for a LaTeX comment line: what ends the line would end
// the comment.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// fnum formats v with d decimals, "–" for NaN, without a negative zero.
func fnum(v float64, d int) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// fcsv formats v at full precision for CSV, "" for NaN.
func fcsv(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
