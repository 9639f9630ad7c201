package mdtable_test

import (
	"os"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/internal/mdtable/mdtabletest"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	mdtable.Write(&b, []string{"name", "n", "kind", "mean ± std"},
		[][]string{{"centralized", "10", "x", "1.0 ± 0.5"}, {"ab", "2", "long kind", "–"}}, 0, 2)
	want := "" +
		"| name        |   n | kind      | mean ± std |\n" +
		"| ----------- | --: | --------- | ---------: |\n" +
		"| centralized |  10 | x         |  1.0 ± 0.5 |\n" +
		"| ab          |   2 | long kind |          – |\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func ExampleWrite() {
	mdtable.Write(os.Stdout, []string{"paradigm", "G_mk"}, [][]string{{"centralized", "588.1"}}, 0)
	// Output:
	// | paradigm    |  G_mk |
	// | ----------- | ----: |
	// | centralized | 588.1 |
}

// A cell's pipe, backslash or line end breaks no row: Write escapes each
// cell (WriteMarkdown leaves it to the caller).
func TestWriteEscapes(t *testing.T) {
	var b strings.Builder
	mdtable.Write(&b, []string{"name", "n"}, [][]string{{`a|b\|c` + "\nd\x1b[2J", "1"}}, 0)
	mdtabletest.RowsMatchHeads(t, b.String(), func(l string) bool { return strings.HasPrefix(l, "| name") },
		func(l string) bool { return strings.HasPrefix(l, "| a") })
	if strings.ContainsAny(b.String(), "\x1b") || strings.Count(b.String(), "\n") != 3 {
		t.Errorf("a control or a line end is left:\n%q", b.String())
	}
}
