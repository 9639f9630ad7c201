package rescore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/scorediff/difftest"
	"github.com/coordbench/coordbench/suiterun"
)

// runSuite runs a small suite (A5C12-1, every built-in paradigm, the rule
// and the random controller, seed 1: two of its eight cases never go over
// the power cap) into a new directory.
func runSuite(t *testing.T) string {
	t.Helper()
	s := resolveSuite(t)
	dir := filepath.Join(t.TempDir(), "suite")
	if _, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRescoreUnchangedIsIdentical: rescoring a suite under the rules it
// was scored with changes no byte of it; the report says "no change".
func TestRescoreUnchangedIsIdentical(t *testing.T) {
	dir := runSuite(t)
	before := difftest.Snapshot(t, dir)
	rep, err := Dir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := difftest.Snapshot(t, dir)
	if _, ok := after[scorediff.ReportFile]; !ok {
		t.Fatalf("no %s written", scorediff.ReportFile)
	}
	delete(after, scorediff.ReportFile)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed", name)
		}
	}
	if len(rep.Changes) != 0 || len(rep.Written) != 0 || rep.Runs != len(harnessCases(t, dir)) || rep.Kind != "suite" ||
		!slices.Equal(rep.Was, []string{harness.ScorerVersion}) {
		t.Errorf("report: %+v", rep)
	}
	var tbl strings.Builder
	rep.WriteTable(&tbl)
	if !strings.Contains(tbl.String(), "no change") {
		t.Errorf("table:\n%s", tbl.String())
	}
}

func resolveSuite(t *testing.T) *harness.Suite {
	t.Helper()
	s, err := harness.ResolveSuite(harness.SuiteOptions{Suite: "A5C12-1", Paradigms: "all", Seeds: "1",
		Controllers: "rule,random", Builtins: policy.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func harnessCases(t *testing.T, dir string) []os.DirEntry {
	ents, err := os.ReadDir(filepath.Join(dir, harness.SuiteCasesDir))
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

func readMetrics(t *testing.T, path string) harness.Metrics {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m harness.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRescoreChangedRule: under a rule set whose G_vc counts entries into
// overshoot instead of time units over the cap, the difference report
// lists exactly G_vc of the cases where the two counts differ, and the
// aggregate's G_vc columns of their groups; the files are replaced, the
// old ones kept in the backup, and the manifests record the new version.
func TestRescoreChangedRule(t *testing.T) {
	dir := runSuite(t)
	before := difftest.Snapshot(t, dir)
	variant := harness.Scorer{Version: "des-metrics/test-entries", Rules: harness.Rules{PowerViolations: harness.PowerEntries}}
	want := map[string]bool{}
	for _, e := range harnessCases(t, dir) {
		m := readMetrics(t, filepath.Join(dir, harness.SuiteCasesDir, e.Name(), harness.FileMetrics))
		if v := m.Violations; v.PowerOvershootUnits != v.PowerOvershootEntries {
			want[e.Name()] = true
		}
	}
	if len(want) == 0 || len(want) == len(harnessCases(t, dir)) {
		t.Fatalf("%d cases of %d differ in the two rules: the test needs some that do and some that do not", len(want), len(harnessCases(t, dir)))
	}
	rep, err := Dir(context.Background(), dir, Options{Scorer: variant})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range rep.Changes {
		switch {
		case strings.HasPrefix(c.Case, "aggregate "):
			if c.File != harness.FileSuiteAggregate || (c.Metric != "G_vc_mean" && c.Metric != "G_vc_std") {
				t.Errorf("aggregate change of %s %s", c.File, c.Metric)
			}
		default:
			got[c.Case] = true
			if c.Metric != "G_vc" || c.File != filepath.Join(harness.SuiteCasesDir, c.Case, harness.FileMetrics) {
				t.Errorf("change of %s in %s: only G_vc changes", c.Metric, c.File)
			}
		}
	}
	if len(got) != len(want) || rep.ChangedRuns != len(want) {
		t.Errorf("changed cases %v (%d runs), want %v", got, rep.ChangedRuns, want)
	}
	for c := range want {
		if !got[c] {
			t.Errorf("case %s: G_vc change not reported", c)
		}
	}
	// The files: metrics, manifests, summary, aggregates and suite.json
	// replaced, the old ones in the backup, byte for byte.
	after := difftest.Snapshot(t, dir)
	for _, rel := range rep.Written {
		if after[filepath.Join(scorediff.BackupDir, rel)] != before[rel] {
			t.Errorf("the backup of %s is not the old file", rel)
		}
		if after[rel] == before[rel] {
			t.Errorf("%s written but unchanged", rel)
		}
	}
	for _, rel := range []string{harness.FileSuiteSummary, harness.FileSuiteAggregate, harness.FileSuiteConfig} {
		if !slices.Contains(rep.Written, rel) {
			t.Errorf("%s not replaced", rel)
		}
	}
	for _, e := range harnessCases(t, dir) {
		var man harness.Manifest
		b := after[filepath.Join(harness.SuiteCasesDir, e.Name(), harness.FileManifest)]
		if err := json.Unmarshal([]byte(b), &man); err != nil || man.Scorer != variant.Version {
			t.Errorf("%s: manifest scorer %q (%v)", e.Name(), man.Scorer, err)
		}
	}
	var tbl strings.Builder
	rep.WriteTable(&tbl)
	if !strings.Contains(tbl.String(), "| G_vc ") || !strings.Contains(tbl.String(), scorediff.BackupDir) {
		t.Errorf("table:\n%s", tbl.String())
	}
	// A suite recorded under another scorer version is not resumed.
	if _, err := harness.RunSuite(context.Background(), resolveSuite(t), dir, harness.SuiteRunOptions{}); err == nil ||
		!strings.Contains(err.Error(), "des-metrics/test-entries") || !strings.Contains(err.Error(), "des rescore") {
		t.Errorf("resume under another scorer: %v", err)
	}
	// A second rescore finds the backup and refuses to overwrite it.
	if _, err := Dir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "backup of an earlier rescore") {
		t.Errorf("rescore over an earlier backup: %v", err)
	}
	// Moved away, rescoring under the current rules restores every file
	// but the manifests' and suite.json's recorded version... and those too.
	if err := os.RemoveAll(filepath.Join(dir, scorediff.BackupDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	final := difftest.Snapshot(t, dir)
	delete(final, scorediff.ReportFile)
	for rel := range final {
		if strings.HasPrefix(rel, scorediff.BackupDir) {
			delete(final, rel)
		}
	}
	for rel, b := range before {
		if final[rel] != b {
			t.Errorf("%s: not restored by rescoring under the current rules", rel)
		}
	}
	// And the restored runs pass des validate.
	rc, err := check.Dir(filepath.Join(dir, harness.SuiteCasesDir, harnessCases(t, dir)[0].Name()))
	if err != nil || !rc.OK() {
		t.Errorf("des validate after rescoring: %v %+v", err, rc)
	}
}
