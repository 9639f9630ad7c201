package mdtable_test

import (
	"os"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/mdtable"
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
