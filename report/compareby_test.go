package report

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/suiterun"
)

// TestCompareBy: within one suite of two controllers (silo: two agents),
// --compare-by gives exactly the rows --compare gives between the two
// suites that each ran one of them.
func TestCompareBy(t *testing.T) {
	desA, siloA := suites(t)
	desB, siloB := compareSuites(t)
	root := t.TempDir()
	both, siloBoth := filepath.Join(root, "des"), filepath.Join(root, "silo")
	o := desSuiteOptions
	o.Controllers = "rule,greedy"
	s, err := harness.ResolveSuite(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.RunSuite(context.Background(), s, both, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); err != nil {
		t.Fatal(err)
	}
	so := siloSuiteOptions
	so.Agent = "reference,tree"
	ss, err := suite.Resolve(so)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := suite.Run(context.Background(), ss, siloBoth, suite.RunOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ a, b, dir, by string }{
		{desA, desB, both, "controller"}, {desA, desB, both, "controller=rule,greedy"},
		{siloA, siloB, siloBoth, "agent"}, {siloA, siloB, siloBoth, "agent=reference,tree"},
	} {
		want, err := compareSections(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := compareBySections(tc.dir, tc.by)
		if err != nil {
			t.Fatalf("%s: %v", tc.by, err)
		}
		if len(got[0].CSVRows) == 0 || !slices.EqualFunc(got[0].CSVRows, want[0].CSVRows, slices.Equal) || !slices.Equal(got[0].CSVHead, want[0].CSVHead) {
			t.Errorf("%s: %d rows differ from --compare's %d", tc.by, len(got[0].CSVRows), len(want[0].CSVRows))
		}
		if !strings.Contains(got[0].Title, "[") {
			t.Errorf("%s: title %q does not name the compared values", tc.by, got[0].Title)
		}
	}
	// Reversed, the differences change sign.
	rev, err := compareBySections(both, "controller=greedy,rule")
	if err != nil {
		t.Fatal(err)
	}
	fwd, _ := compareBySections(both, "controller")
	mean := slices.Index(fwd[0].CSVHead, "mean_diff")
	if r, f := rev[0].CSVRows[0], fwd[0].CSVRows[0]; mean < 0 || !slices.Equal(r[:mean], f[:mean]) || num(t, r[mean]) != -num(t, f[mean]) {
		t.Errorf("reversed: %v against %v", r, f)
	}
	// Errors: a key the benchmark has not, a value no case has, one
	// value, a missing name among three, and with --compare.
	for _, tc := range []struct{ dir, by, msg string }{
		{both, "paradigm", "controller, model or framework"},
		{both, "controller=rule,llm", `no case has controller "llm"`},
		{both, "controller=rule,rule", "two different values"},
		{desA, "controller", "1 values of controller"},
		{siloBoth, "protocol", "agent or model"},
		{siloBoth, "model", "0 values of model"},
	} {
		if _, err := compareBySections(tc.dir, tc.by); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s on %s: %v, want %q", tc.by, tc.dir, err, tc.msg)
		}
	}
	if err := Write(&bytes.Buffer{}, []string{desA, desB}, Options{Format: "md", CompareBy: "controller"}); err == nil {
		t.Error("--compare-by with two directories accepted")
	}
	var md bytes.Buffer
	if err := Write(&md, []string{both}, Options{Format: "md", CompareBy: "controller"}); err != nil || !strings.Contains(md.String(), "Paired differences A − B") {
		t.Errorf("md: %v", err)
	}
	if p := htmlPage(t, []string{both}, Options{CompareBy: "controller", Cases: []string{"none"}}); !strings.Contains(p, `id="compare"`) || !strings.Contains(p, "by controller") {
		t.Error("the HTML page has no comparison")
	}
}
