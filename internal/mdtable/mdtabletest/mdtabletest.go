// Package mdtabletest checks Markdown tables in tests: that no row of a
// table has more or fewer cells than its header, as GitHub-flavoured
// Markdown splits them (untrusted.MarkdownCells).
package mdtabletest

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// RowsMatchHeads checks every line of md that isRow picks against the
// last line before it that isHead picks, and that isRow picks one at
// least.
func RowsMatchHeads(t testing.TB, md string, isHead, isRow func(string) bool) {
	t.Helper()
	head, rows := 0, 0
	for _, l := range strings.Split(md, "\n") {
		switch {
		case isHead(l):
			head = untrusted.MarkdownCells(l)
		case isRow(l):
			rows++
			if n := untrusted.MarkdownCells(l); n != head {
				t.Errorf("a table row has %d cells, its header %d:\n%s", n, head, l)
			}
		}
	}
	if rows == 0 {
		t.Error("no table row to check")
	}
}
