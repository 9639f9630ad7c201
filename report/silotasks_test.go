package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/suite"
)

// TestSiloTasks: the silo section has the per-task table (the paper's
// Table 10) over the team runs only, with one failed run made in a copy of
// the suite's summary moving its task's p2p and overall figures, and it
// names the page of differences from the paper.
func TestSiloTasks(t *testing.T) {
	_, silo := suites(t)
	dir := t.TempDir()
	agg, err := os.ReadFile(filepath.Join(silo, suite.FileAggregate))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, suite.FileAggregate), agg, 0o644); err != nil {
		t.Fatal(err)
	}
	col, rows := readAll(t, filepath.Join(silo, suite.FileSummary))
	head := make([]string, len(col))
	for h, i := range col {
		head[i] = h
	}
	rows = append([][]string{head}, rows...)
	failed := "III-23__n5__p2p__reference__seeded-s2"
	i := slices.IndexFunc(rows, func(r []string) bool { return r[col["case_id"]] == failed })
	if i < 0 {
		t.Fatalf("no run %s", failed)
	}
	rows[i][col["success"]], rows[i][col["S"]] = "false", "0.6"
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(rows)
	if err := os.WriteFile(filepath.Join(dir, suite.FileSummary), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	secs, err := Build([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(secs[0].Tables) != 2 {
		t.Fatalf("%d silo tables, want the aggregate and the per-task one", len(secs[0].Tables))
	}
	tt := secs[0].Tables[1]
	want := []string{"level", "task", "agent", "p2p success ↑", "p2p S ↑", "p2p runs", "sfs success ↑", "sfs S ↑", "sfs runs",
		"all success ↑", "all S ↑", "all runs"}
	if !slices.Equal(tt.Head, want) {
		t.Errorf("head %v", tt.Head)
	}
	var got []string
	for _, r := range tt.Rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, c.Text)
		}
		got = append(got, strings.Join(cells, " "))
	}
	// Two team sizes × two seeds per protocol: the merged baselines are
	// not among the runs.
	if w := []string{
		"I I-01 reference 1.0000 1.0000 4 1.0000 1.0000 4 1.0000 1.0000 8",
		"III III-23 reference 0.7500 0.9000 4 1.0000 1.0000 4 0.8750 0.9500 8",
	}; !slices.Equal(got, w) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	var md bytes.Buffer
	if err := Write(&md, []string{dir}, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Success and S by task (the paper's Table 10)", "docs/silo-vs-paper.md"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown report lacks %q", s)
		}
	}
}
