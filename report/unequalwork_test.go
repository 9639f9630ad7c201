package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
)

// csvRecords reads a report's CSV and indexes its head.
func csvRecords(t *testing.T, dirs []string, opt Options) (rows [][]string, col func(string) int) {
	t.Helper()
	opt.Format = "csv"
	var b bytes.Buffer
	if err := Write(&b, dirs, opt); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	return recs[1:], func(name string) int {
		i := slices.Index(head, name)
		if i < 0 {
			t.Fatalf("no CSV column %q in %v", name, head)
		}
		return i
	}
}

// checkUnequalWork checks the CSV rows of a paired table over the pairs of
// a suite where exactly `unequal` of `total` pairs did not complete the
// same work: every metric but the completion ones leaves them out and says
// so, the completion ones keep every pair.
func checkUnequalWork(t *testing.T, rows [][]string, col func(string) int, total, unequal int) {
	t.Helper()
	metrics := map[string]harness.SuiteMetric{}
	for _, m := range harness.SuiteMetrics() {
		metrics[m.Key] = m
	}
	seen := 0
	for _, r := range rows {
		m, ok := metrics[r[col("metric")]]
		if !ok {
			t.Fatalf("unknown metric %q", r[col("metric")])
		}
		seen++
		n, _ := strconv.Atoi(r[col("n")])
		left, err := strconv.Atoi(r[col(unequalCSV)])
		if err != nil {
			t.Fatal(err)
		}
		wantN, wantLeft := total-unequal, unequal
		if completionMetric(m) {
			wantN, wantLeft = total, 0
		}
		if n != wantN || left != wantLeft {
			t.Errorf("%s: n %d, unequal_work %d; want %d and %d", m.Key, n, left, wantN, wantLeft)
		}
	}
	if seen != len(metrics) {
		t.Errorf("%d rows, want one per metric (%d)", seen, len(metrics))
	}
}

// TestPairedLeavesOutUnequalWork: between two paradigms of a real suite
// where one deadlocks on seed 1004 (deadlockSuite), that seed is left out
// of every paired metric but G_cj and the robustness ones, and every
// format says so.
func TestPairedLeavesOutUnequalWork(t *testing.T) {
	dir := deadlockSuite(t)
	rows, col := csvRecords(t, []string{dir}, Options{Tables: []string{SectionPaired}})
	checkUnequalWork(t, rows, col, 5, 1)
	subject := 0 // the metrics the rule applies to
	for _, m := range harness.SuiteMetrics() {
		if !completionMetric(m) {
			subject++
		}
	}
	for _, f := range []string{"md", "latex", "html"} {
		opt := Options{Format: f, Tables: []string{SectionPaired}}
		if f == "html" {
			opt = Options{Format: f, Cases: casesFor(f)}
		}
		var b bytes.Buffer
		if err := Write(&b, []string{dir}, opt); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{unequalHead, "1 " + incompleteMark, incompleteMark + " unequal work: the pairs", strconv.Itoa(subject) + " rows leave some out"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q", f, want)
			}
		}
	}
}

// TestCompareByLeavesOutUnequalWork: the same rule in a comparison, here
// of two controllers of one real suite (--compare-by controller):
// holonic_hybrid deadlocks on seed 1004 under the random controller and
// finishes it under greedy.
func TestCompareByLeavesOutUnequalWork(t *testing.T) {
	dir := a5c12Suite(t, "holonic_hybrid", "random,greedy")
	ds, err := readDES(dir)
	if err != nil {
		t.Fatal(err)
	}
	unequal := 0
	for _, g := range ds.groups {
		unequal += g.incomplete() // greedy finishes every episode: one incomplete side per seed
		if g.block[1] == "greedy" && g.incomplete() > 0 {
			t.Fatalf("greedy left work undone on A5C12-1 (the engine changed? pick other seeds)")
		}
	}
	if unequal == 0 {
		t.Fatal("no episode left work undone: the test shows nothing (the engine changed? pick other seeds)")
	}
	rows, col := csvRecords(t, []string{dir}, Options{CompareBy: "controller"})
	checkUnequalWork(t, rows, col, 5, unequal)
	var b bytes.Buffer
	if err := Write(&b, []string{dir}, Options{Format: "md", CompareBy: "controller"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), unequalHead) || !strings.Contains(b.String(), "rows leave some out") {
		t.Errorf("md: no %q column or note:\n%s", unequalHead, b.String())
	}
}

// TestUnequalWorkLeavesNoInterval: a row left with one pair has no
// interval, and says how many pairs it lost.
func TestUnequalWorkLeavesNoInterval(t *testing.T) {
	var sec Section
	compareTable(&sec, "t", "", []string{"group"}, []pairRow{{group: []string{"g"}, metric: "G_mk", digits: 1, diffs: []float64{-3}, unequal: 4}}, 0, 0, true)
	tb := sec.Tables[0]
	row := tb.Rows[0]
	col := func(name string) int { return slices.Index(tb.Head, name) }
	if row[col(unequalHead)].Text != "4 "+incompleteMark || row[col("95% t interval")].Text != "–" || row[col("95% bootstrap")].Text != "–" {
		t.Errorf("row %v under %v: want 4 pairs left out and no interval", row, tb.Head)
	}
	if got := sec.CSVRows[0][slices.Index(sec.CSVHead, unequalCSV)]; got != "4" {
		t.Errorf("CSV unequal_work %q, want 4", got)
	}
}
