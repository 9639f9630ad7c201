// Package mdtable writes aligned Markdown tables, the form in which the
// suites print their aggregates on a terminal and into *.md files: cells
// padded to the column's width (at least 3, so that a delimiter cell has
// dashes besides its alignment colon), text columns left-aligned and
// number columns right-aligned. Write escapes each cell
// (untrusted.MarkdownCell: names come from files and models).
package mdtable

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// Write writes head and rows as a Markdown table; the columns whose index
// is in left are left-aligned, the others right-aligned. Each cell is
// text, escaped by untrusted.MarkdownCell.
func Write(w io.Writer, head []string, rows [][]string, left ...int) {
	esc := func(r []string) []string {
		out := make([]string, len(r))
		for j, c := range r {
			out[j] = untrusted.MarkdownCell(c)
		}
		return out
	}
	escRows := make([][]string, len(rows))
	for i, r := range rows {
		escRows[i] = esc(r)
	}
	WriteMarkdown(w, esc(head), escRows, left...)
}

// WriteMarkdown is Write for cells that are Markdown already: the caller
// escaped their text (untrusted.MarkdownCell) and added its own markup.
func WriteMarkdown(w io.Writer, head []string, rows [][]string, left ...int) {
	isLeft := make([]bool, len(head))
	for _, j := range left {
		if j >= 0 && j < len(isLeft) {
			isLeft[j] = true
		}
	}
	width := make([]int, len(head))
	for j := range width {
		width[j] = 3
	}
	for _, r := range append([][]string{head}, rows...) {
		for j, c := range r {
			if j < len(width) {
				width[j] = max(width[j], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	line := func(r []string) {
		b.WriteString("|")
		for j := range width {
			c := ""
			if j < len(r) {
				c = r[j]
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if isLeft[j] {
				b.WriteString(" " + c + pad + " |")
			} else {
				b.WriteString(" " + pad + c + " |")
			}
		}
		b.WriteString("\n")
	}
	line(head)
	sep := make([]string, len(head))
	for j := range sep {
		if isLeft[j] {
			sep[j] = strings.Repeat("-", width[j])
		} else {
			sep[j] = strings.Repeat("-", width[j]-1) + ":"
		}
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	fmt.Fprint(w, b.String())
}
