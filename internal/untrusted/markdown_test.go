package untrusted

import (
	"strings"
	"testing"
)

func TestMarkdownCell(t *testing.T) {
	for _, in := range []string{"plain", "a|b", `a\|b`, `a\\|b\`, "line\nbreak|x", "r\r\n|", "\x1b[2J|"} {
		c := MarkdownCell(in)
		row := "| " + c + " | 2 |"
		if n := MarkdownCells(row); n != 2 || strings.ContainsAny(row, "\n\r\x1b") {
			t.Errorf("MarkdownCell(%q) = %q: the row %q has %d cells, want 2", in, c, row, n)
		}
	}
	if got := MarkdownCell(`a|b\c`); got != `a\|b\\c` {
		t.Errorf("got %q", got)
	}
}

func FuzzMarkdownCell(f *testing.F) {
	f.Add(`a\|b|c`)
	f.Fuzz(func(t *testing.T, s string) {
		row := "| " + MarkdownCell(s) + " | x |"
		if n := MarkdownCells(row); n != 2 || strings.ContainsAny(row, "\n\r") {
			t.Fatalf("%q: row %q has %d cells", s, row, n)
		}
	})
}
