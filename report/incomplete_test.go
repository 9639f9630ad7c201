package report

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/suiterun"
)

// deadlockSuite runs a real suite in which one group's means include a
// deadlocked episode: the random controller on A5C12-1, dev seeds 1001 to
// 1005, where holonic_hybrid deadlocks on seed 1004 (31 of 40 jobs done)
// and heterarchical_cnp finishes every episode.
func deadlockSuite(t *testing.T) string {
	return a5c12Suite(t, "holonic_hybrid,heterarchical_cnp", "random")
}

// a5c12Suite runs the built-in controllers on A5C12-1's paradigms, dev
// seeds 1001 to 1005, and returns the suite's directory.
func a5c12Suite(t *testing.T, paradigms, controllers string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "a5c12")
	s, err := harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A5C12-1",
		Paradigms: paradigms, Seeds: "dev", Controllers: controllers})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestIncompleteNeverBest: a group whose means include an episode that
// left work undone is flagged in every format and marked best on no
// metric that shrinks with the work left undone, although its raw means
// are better on some (what the marks used to reward).
func TestIncompleteNeverBest(t *testing.T) {
	dir := deadlockSuite(t)
	s, err := readDES(dir)
	if err != nil {
		t.Fatal(err)
	}
	metrics := harness.SuiteMetrics()
	var bad, good *desGroup
	for _, g := range s.groups {
		if g.incomplete() > 0 {
			bad = g
		} else {
			good = g
		}
	}
	if bad == nil || good == nil {
		t.Fatalf("the suite should hold a group with a deadlocked episode and one without (the engine changed? pick other seeds): %+v", s.groups)
	}
	// Precondition: the incomplete group looks better on some metric that
	// shrinks with the work undone.
	lured := 0
	for k, m := range metrics {
		vb, _, _ := bad.meanStd(k)
		vg, _, _ := good.meanStd(k)
		if !completionMetric(m) && (m.HigherBetter && vb > vg || !m.HigherBetter && vb < vg) {
			lured++
		}
	}
	if lured == 0 {
		t.Fatal("the deadlocked group is better on no metric: the test shows nothing")
	}
	sec := s.matrixSection()
	col := map[string]int{}
	for i, h := range sec.CSVHead {
		col[h] = i
	}
	for _, row := range sec.CSVRows {
		n, _ := strconv.Atoi(row[col["n"]])
		complete, _ := strconv.Atoi(row[col["complete"]])
		for _, m := range metrics {
			best := row[col[m.Key+"_best"]] == "true"
			if complete < n && best && !completionMetric(m) {
				t.Errorf("%s: %d of %d episodes complete, marked best on %s", row[col["paradigm"]], complete, n, m.Key)
			}
			if row[col["paradigm"]] == good.paradigm && (m.Key == "G_mk" || m.Key == "G_td") && !best {
				t.Errorf("%s finished every episode and has the lower %s, not marked best", good.paradigm, m.Key)
			}
		}
		if row[col["paradigm"]] == bad.paradigm && (complete != n-bad.incomplete() || row[col["same_work"]] != "false") {
			t.Errorf("%s: complete %d same_work %s, want %d and false", bad.paradigm, complete, row[col["same_work"]], n-bad.incomplete())
		}
	}
	flag := strconv.Itoa(len(bad.cases)-bad.incomplete()) + "/" + strconv.Itoa(len(bad.cases)) + " " + incompleteMark
	for _, f := range []string{"md", "latex", "html"} {
		var b bytes.Buffer
		if err := Write(&b, []string{dir}, Options{Format: f, Cases: casesFor(f)}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), flag) {
			t.Errorf("%s: no %q beside the incomplete group", f, flag)
		}
	}
}

func casesFor(format string) []string {
	if format == "html" {
		return []string{"none"}
	}
	return nil
}
