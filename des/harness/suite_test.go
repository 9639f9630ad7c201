package harness_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/suiterun"
)

// smallSuite is 2 instances × every registered paradigm × 2 seeds.
var smallSuite = harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1,A5C12-2", Paradigms: "all", Seeds: "1,2", Controllers: "builtin"}

func resolve(t *testing.T, opt harness.SuiteOptions) *harness.Suite {
	t.Helper()
	s, err := harness.ResolveSuite(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runSuite(t *testing.T, s *harness.Suite, dir string, workers int) *harness.SuiteReport {
	t.Helper()
	rep, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: workers}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// suiteFiles are the suite-level files that must not depend on how a
// suite was run (workers, interruptions, resumes).
var suiteFiles = []string{harness.FileSuiteConfig, harness.FileSuiteSummary, harness.FileSuiteAggregate, harness.FileSuiteAggregateMD}

func TestSuiteRunsEveryCase(t *testing.T) {
	s := resolve(t, smallSuite)
	modes := coord.Builtins()
	if want := 2 * len(modes) * 2; len(s.Cases) != want {
		t.Fatalf("%d cases, want %d", len(s.Cases), want)
	}
	dir := t.TempDir()
	rep := runSuite(t, s, dir, 2)
	if rep.Ran != len(s.Cases) || rep.Skip != 0 || rep.Failed != 0 || rep.Interrupted {
		t.Fatalf("ran %d, skipped %d, failed %d, interrupted %v", rep.Ran, rep.Skip, rep.Failed, rep.Interrupted)
	}

	rows := readCSV(t, filepath.Join(dir, harness.FileSuiteSummary))
	if !slices.Equal(rows[0], harness.SummaryHeader()) {
		t.Fatalf("summary header %v", rows[0])
	}
	rows = rows[1:]
	if len(rows) != len(s.Cases) {
		t.Fatalf("%d summary rows for %d cases", len(rows), len(s.Cases))
	}
	// Deterministic order: instance, paradigm, controller, seed as listed.
	i := 0
	for _, inst := range []string{"A3C9-1", "A5C12-2"} {
		for _, m := range modes {
			for _, seed := range []string{"1", "2"} {
				r := rows[i]
				id := inst + "__" + m.ID + "__rule__s" + seed
				if r[0] != id || r[1] != inst || r[2] != m.ID || r[3] != "rule" || r[4] != "" || r[5] != "" || r[6] != seed {
					t.Errorf("row %d = %v, want case %s", i, r[:7], id)
				}
				if r[7] == harness.StatusError || r[len(r)-1] != "" {
					t.Errorf("case %s failed: %v", id, r)
				}
				i++
			}
		}
	}
	// Every case directory passes the independent re-check, and its
	// metrics are the summary row's.
	for _, r := range rows {
		cd := filepath.Join(dir, harness.SuiteCasesDir, r[0])
		rep, err := check.Dir(cd)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Errorf("%s: %v", r[0], rep.Problems)
		}
		var m harness.Metrics
		if err := json.Unmarshal(readFile(t, filepath.Join(cd, harness.FileMetrics)), &m); err != nil {
			t.Fatal(err)
		}
		if m.Status != r[7] || strconv.FormatFloat(m.GMk, 'f', -1, 64) != r[8] || strconv.Itoa(m.GDs) != r[15] {
			t.Errorf("%s: summary row %v disagrees with metrics.json", r[0], r)
		}
	}
	// No temporaries left behind.
	ents, _ := os.ReadDir(filepath.Join(dir, harness.SuiteCasesDir))
	if len(ents) != len(s.Cases) {
		t.Errorf("cases/ holds %d entries for %d cases", len(ents), len(s.Cases))
	}

	// The aggregate: by default one row per instance × controller × model
	// × framework × paradigm, in the suite's order, means and stds of the
	// summary columns.
	var groups [][]string
	for _, inst := range []string{"A3C9-1", "A5C12-2"} {
		for _, m := range modes {
			groups = append(groups, []string{inst, "rule", "", "", m.ID})
		}
	}
	checkAggregate(t, dir, nil, rows, groups, 2)
	md := string(readFile(t, filepath.Join(dir, harness.FileSuiteAggregateMD)))
	for _, want := range append([]string{"effectiveness", "constraint", "coordination", "robustness", "G_llm ↓", " ± ",
		"| instance ", "| controller ", "| paradigm ", "## Legend", "| G_cj   | ↑ higher | jobs ", "| G_vc   | ↓ lower  | count ",
		`Unit "time" is the instances' time unit, 1 s.`}, paradigmIDs(modes)...) {
		if !strings.Contains(md, want) {
			t.Errorf("suite_aggregate.md lacks %q:\n%s", want, md)
		}
	}
	// Model and framework are empty for built-in controllers: the tables
	// leave them out, the CSV keeps them.
	if strings.Contains(md, "| model") || strings.Contains(md, "| framework") {
		t.Errorf("suite_aggregate.md shows the empty model and framework columns:\n%s", md)
	}
	var cfg harness.SuiteConfig
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, harness.FileSuiteConfig)), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Instances) != 2 || len(cfg.Paradigms) != len(modes) || !reflect.DeepEqual(cfg.Paradigms[0], modes[0]) ||
		!slices.Equal(cfg.Controllers, []string{"rule"}) || cfg.Version == "" || cfg.CaseCount != len(s.Cases) ||
		cfg.Instances[1].SHA256 == "" || !slices.Equal(cfg.Instances[1].Seeds, []uint64{1, 2}) {
		t.Errorf("suite.json: %+v", cfg)
	}

	// The same suite on one worker writes the same files.
	dir1 := t.TempDir()
	runSuite(t, resolve(t, smallSuite), dir1, 1)
	for _, f := range suiteFiles {
		if !bytes.Equal(readFile(t, filepath.Join(dir, f)), readFile(t, filepath.Join(dir1, f))) {
			t.Errorf("%s differs between 2 workers and 1", f)
		}
	}
}

func paradigmIDs(ms []coord.AuthorityMode) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

func meanStd(xs []float64) (float64, float64) {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if len(xs) == 1 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// summaryCol is the summary's column of each group key.
var summaryCol = map[string]int{"instance": 1, "paradigm": 2, "controller": 3, "model": 4, "framework": 5}

// checkAggregate verifies dir's suite_aggregate.csv for a grouping by keys
// (nil: the default) against the summary rows: header, the groups in
// order, n cases each, and each metric's mean and std.
func checkAggregate(t *testing.T, dir string, keys []string, summary [][]string, groups [][]string, n int) {
	t.Helper()
	if keys == nil {
		keys = harness.GroupKeys()
	}
	agg := readCSV(t, filepath.Join(dir, harness.FileSuiteAggregate))
	if !slices.Equal(agg[0], harness.AggregateHeader(keys)) || !slices.Equal(agg[0][:len(keys)], keys) || len(agg) != 1+len(groups) {
		t.Fatalf("aggregate by %v: header %v, %d rows for %d groups", keys, agg[0], len(agg)-1, len(groups))
	}
	nk := len(keys)
	for g, group := range groups {
		a := agg[1+g]
		if !slices.Equal(a[:nk], group) || a[nk] != strconv.Itoa(n) || a[nk+1] != "0" {
			t.Errorf("aggregate row %d: %v, want group %v over %d cases", g, a[:nk+2], group, n)
		}
		for k, sm := range harness.SuiteMetrics() {
			var xs []float64
		rows:
			for _, r := range summary {
				for i, key := range keys {
					if r[summaryCol[key]] != group[i] {
						continue rows
					}
				}
				x, err := strconv.ParseFloat(r[8+k], 64)
				if err != nil {
					t.Fatal(err)
				}
				xs = append(xs, x)
			}
			mean, std := harness.MeanStd(xs)
			gotMean, _ := strconv.ParseFloat(a[nk+2+2*k], 64)
			gotStd, _ := strconv.ParseFloat(a[nk+3+2*k], 64)
			if len(xs) != n || !near(gotMean, mean) || !near(gotStd, std) {
				t.Errorf("%v %s: aggregate %v ± %v, %d summary rows give %v ± %v", group, sm.Key, gotMean, gotStd, len(xs), mean, std)
			}
		}
	}
}

// TestSuiteGroupBy: GroupBy chooses the aggregate's rows and their order;
// a rerun with another grouping keeps the cases and rewrites only the
// aggregate.
func TestSuiteGroupBy(t *testing.T) {
	opt := smallSuite
	opt.Seeds, opt.Controllers = "1", "rule,greedy"
	s := resolve(t, opt)
	modes := coord.Builtins()
	dir := t.TempDir()
	runSuite(t, s, dir, 2)
	summary := readCSV(t, filepath.Join(dir, harness.FileSuiteSummary))[1:]
	insts, ctrls := []string{"A3C9-1", "A5C12-2"}, []string{"rule", "greedy"}

	// Default: Table 3, instance × controller × model × framework × paradigm.
	var groups [][]string
	for _, inst := range insts {
		for _, c := range ctrls {
			for _, m := range modes {
				groups = append(groups, []string{inst, c, "", "", m.ID})
			}
		}
	}
	checkAggregate(t, dir, nil, summary, groups, 1)
	text := func(rep *harness.SuiteReport) string {
		var b strings.Builder
		harness.WriteAggregateText(&b, rep)
		return b.String()
	}

	for _, tc := range []struct {
		by     string
		groups [][]string
		n      int
	}{
		{"paradigm", nil, 4},
		{"paradigm,instance", nil, 2},
		{"controller", [][]string{{"rule"}, {"greedy"}}, 8},
	} {
		if tc.groups == nil {
			for _, m := range modes {
				if tc.by == "paradigm" {
					tc.groups = append(tc.groups, []string{m.ID})
					continue
				}
				for _, inst := range insts {
					tc.groups = append(tc.groups, []string{m.ID, inst})
				}
			}
		}
		keys, err := harness.ParseGroupBy(tc.by)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}, GroupBy: keys})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Ran != 0 || len(rep.Aggregate) != len(tc.groups) {
			t.Fatalf("--group-by %s: ran %d cases, %d aggregate rows", tc.by, rep.Ran, len(rep.Aggregate))
		}
		checkAggregate(t, dir, keys, summary, tc.groups, tc.n)
		out := text(rep)
		head := "| " + strings.Join(keys, " | ")
		if !strings.Contains(out, "each "+strings.Join(keys, " × ")+";") || !strings.Contains(out, "\nrobustness\n") ||
			!strings.Contains(out, "| G_mk   | ↓ lower ") {
			t.Errorf("--group-by %s: terminal table:\n%s", tc.by, out)
		}
		if tc.by != "controller" && !strings.Contains(strings.ReplaceAll(out, " ", ""), strings.ReplaceAll(head, " ", "")+"|n|") {
			t.Errorf("--group-by %s: the tables do not start with %q:\n%s", tc.by, head, out)
		}
	}

	for _, bad := range []string{"paradigm,seed", "instance,instance"} {
		_, err := harness.ParseGroupBy(bad)
		var oe *opterr.Error
		if !errors.As(err, &oe) || oe.Option != "GroupBy" {
			t.Errorf("ParseGroupBy(%q) = %v, want a GroupBy error", bad, err)
		}
	}
	if _, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{GroupBy: []string{"seed"}}); err == nil {
		t.Error("RunSuite takes the group key seed")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestSuiteResume(t *testing.T) {
	opt := smallSuite
	opt.Controllers = "rule,random"
	s := resolve(t, opt)
	dir := t.TempDir()
	runSuite(t, s, dir, 2)
	first := map[string][]byte{}
	for _, f := range suiteFiles {
		first[f] = readFile(t, filepath.Join(dir, f))
	}
	same := func(what string) {
		t.Helper()
		for _, f := range suiteFiles {
			if !bytes.Equal(first[f], readFile(t, filepath.Join(dir, f))) {
				t.Errorf("%s: %s changed", what, f)
			}
		}
	}

	// A second run runs nothing and rewrites identical files.
	rep := runSuite(t, s, dir, 2)
	if rep.Ran != 0 || rep.Skip != len(s.Cases) {
		t.Fatalf("second run: ran %d, skipped %d of %d", rep.Ran, rep.Skip, len(s.Cases))
	}
	same("second run")

	// Deleting a case directory reruns exactly that case.
	victim := s.Cases[3].ID
	if err := os.RemoveAll(filepath.Join(dir, harness.SuiteCasesDir, victim)); err != nil {
		t.Fatal(err)
	}
	var ran []string
	rep, err := harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2, Progress: func(p harness.SuiteProgress) {
		if p.Last != "" {
			ran = append(ran, p.Last)
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 1 || !slices.Equal(ran, []string{victim}) {
		t.Fatalf("after deleting %s: ran %v", victim, ran)
	}
	same("rerun of a deleted case")

	// A case whose manifest does not match its configuration reruns:
	// here another controller, another paradigm switch, another version.
	edits := []func(*harness.Manifest){
		func(m *harness.Manifest) { m.Controller = "greedy" },
		func(m *harness.Manifest) { m.Paradigm.Description += " (edited)" },
		func(m *harness.Manifest) { m.Version = "0.0.0-old" },
		func(m *harness.Manifest) { m.InstanceSHA256 = strings.Repeat("0", 64) },
		func(m *harness.Manifest) { m.Seed++ },
	}
	for k, edit := range edits {
		id := s.Cases[k].ID
		path := filepath.Join(dir, harness.SuiteCasesDir, id, harness.FileManifest)
		var man harness.Manifest
		if err := json.Unmarshal(readFile(t, path), &man); err != nil {
			t.Fatal(err)
		}
		edit(&man)
		b, _ := json.MarshalIndent(man, "", "  ")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A tampered metrics.json (its hash no longer the manifest's) reruns too.
	tampered := s.Cases[len(s.Cases)-1].ID
	mpath := filepath.Join(dir, harness.SuiteCasesDir, tampered, harness.FileMetrics)
	if err := os.WriteFile(mpath, append(readFile(t, mpath), ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	// Leftovers of a killed run are removed.
	stale := filepath.Join(dir, harness.SuiteCasesDir, ".tmp-"+s.Cases[0].ID+"-123")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	ran = nil
	rep, err = harness.RunSuite(context.Background(), s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 1, Progress: func(p harness.SuiteProgress) {
		if p.Last != "" {
			ran = append(ran, p.Last)
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s.Cases[0].ID, s.Cases[1].ID, s.Cases[2].ID, s.Cases[3].ID, s.Cases[4].ID, tampered}
	if rep.Ran != len(want) || !slices.Equal(ran, want) {
		t.Fatalf("after editing manifests: ran %v, want %v", ran, want)
	}
	same("rerun of edited cases")
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary %s not removed", stale)
	}
	for _, c := range s.Cases[:5] {
		if r, err := check.Dir(filepath.Join(dir, harness.SuiteCasesDir, c.ID)); err != nil || !r.OK() {
			t.Errorf("%s after rerun: %v %v", c.ID, err, r)
		}
	}

	// Another selection of the same suite reuses the finished cases.
	opt.Limit = 3
	rep = runSuite(t, resolve(t, opt), dir, 2)
	if rep.Ran != 0 || rep.Skip != 3 || len(rep.Cases) != 3 {
		t.Errorf("--limit 3 on a finished suite: ran %d, skipped %d, rows %d", rep.Ran, rep.Skip, len(rep.Cases))
	}
}

func TestSuiteInterrupt(t *testing.T) {
	opt := smallSuite
	opt.Controllers = "rule,random"
	clean := t.TempDir()
	runSuite(t, resolve(t, opt), clean, 2)

	dir := t.TempDir()
	s := resolve(t, opt)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := harness.RunSuite(ctx, s, dir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 1, Progress: func(p harness.SuiteProgress) {
		if p.Done == 3 {
			cancel()
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || len(rep.Cases) < 3 || len(rep.Cases) >= len(s.Cases) {
		t.Fatalf("interrupted after 3 cases: interrupted %v, %d of %d finished", rep.Interrupted, len(rep.Cases), len(s.Cases))
	}
	rows := readCSV(t, filepath.Join(dir, harness.FileSuiteSummary))
	if len(rows)-1 != len(rep.Cases) {
		t.Errorf("summary of an interrupted suite has %d rows for %d finished cases", len(rows)-1, len(rep.Cases))
	}
	ents, _ := os.ReadDir(filepath.Join(dir, harness.SuiteCasesDir))
	if len(ents) != len(rep.Cases) {
		t.Errorf("cases/ holds %d entries for %d finished cases", len(ents), len(rep.Cases))
	}
	rep = runSuite(t, s, dir, 2)
	if rep.Interrupted || rep.Skip+rep.Ran != len(s.Cases) || rep.Skip < 3 {
		t.Fatalf("resume: skipped %d, ran %d of %d", rep.Skip, rep.Ran, len(s.Cases))
	}
	for _, f := range suiteFiles {
		if !bytes.Equal(readFile(t, filepath.Join(dir, f)), readFile(t, filepath.Join(clean, f))) {
			t.Errorf("%s after interrupt and resume differs from a clean run", f)
		}
	}
}

func TestSuiteSpecs(t *testing.T) {
	base := harness.SuiteOptions{Builtins: policy.Builtins(), Paradigms: "all", Seeds: "test", Controllers: "builtin"}
	instances := func(spec string) []string {
		t.Helper()
		o := base
		o.Suite = spec
		var names []string
		for _, si := range resolve(t, o).Config.Instances {
			names = append(names, si.Label)
		}
		return names
	}
	for spec, want := range map[string][]string{
		"A5C12":                         {"A5C12-1", "A5C12-2", "A5C12-3"},
		"A3C9":                          {"A3C9-1"},
		"all":                           {"A3C9-1", "A5C12-1", "A5C12-2", "A5C12-3"},
		"A5C12-2, gen:A2C5J7":           {"A5C12-2", "gen:A2C5J7"},
		"A3C9,A3C9-1,A5C12-1":           {"A3C9-1", "A5C12-1"},
		"../factory/testdata/tiny.yaml": {"tiny"},
	} {
		if got := instances(spec); !slices.Equal(got, want) {
			t.Errorf("--suite %q: %v, want %v", spec, got, want)
		}
	}

	o := base
	o.Suite, o.Seeds, o.Controllers = "A3C9-1,gen:A2C5J7", "dev", "greedy,builtin,greedy"
	s := resolve(t, o)
	var ids []string
	for _, c := range s.Cases {
		ids = append(ids, c.ID)
	}
	for _, want := range []string{"A3C9-1__centralized__greedy__s1011", "A3C9-1__centralized__rule__s1015",
		"gen-A2C5J7__centralized__rule__s1001"} {
		if !slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, want) }) {
			t.Errorf("no case id %s* in %v", want, ids)
		}
	}
	if s.Config.Controllers[0] != "greedy" || len(s.Config.Controllers) != 2 {
		t.Errorf("controllers %v, want [greedy rule]", s.Config.Controllers)
	}
	o.Cases = []string{ids[5], ids[1]}
	if s := resolve(t, o); len(s.Cases) != 2 || s.Cases[0].ID != ids[1] || s.Cases[1].ID != ids[5] {
		t.Errorf("--cases %v: %v (want them in suite order)", o.Cases, s.Cases)
	}
	o.Cases, o.Limit = nil, 4
	if s := resolve(t, o); len(s.Cases) != 4 || s.Cases[3].ID != ids[3] {
		t.Errorf("--limit 4: %d cases", len(s.Cases))
	}

	for _, bad := range []struct {
		opt    harness.SuiteOptions
		option string
		want   string
	}{
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A7C1-1", Paradigms: "all", Seeds: "test", Controllers: "rule"}, "Suite", `unknown instance "A7C1-1"`},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "", Paradigms: "all", Seeds: "test", Controllers: "rule"}, "Suite", "no instance"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "gen:A3", Paradigms: "all", Seeds: "test", Controllers: "rule"}, "Suite", "gen:A<areas>C<cells>"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "centralised", Seeds: "test", Controllers: "rule"}, "Paradigms", `unknown paradigm "centralised"`},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "", Seeds: "test", Controllers: "rule"}, "Paradigms", "no paradigm"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "test", Controllers: "llm"}, "Controllers", `unknown controller "llm"`},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "train", Controllers: "rule"}, "Seeds", `"train" is not a seed`},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "1,x", Controllers: "rule"}, "Seeds", `"x" is not a seed`},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9,../factory/testdata/tiny.yaml", Paradigms: "all", Seeds: "dev", Controllers: "rule"}, "Seeds", "no seed for instance tiny"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "1", Controllers: "rule", Limit: -2}, "Limit", "must not be negative"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "1", Controllers: "rule", Cases: []string{"A3C9-1__centralized__rule__s2"}}, "Cases", "not in this suite"},
		{harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9", Paradigms: "all", Seeds: "1", Controllers: "rule", ParadigmFiles: []string{"nope.yaml"}}, "ParadigmFiles", "nope.yaml"},
	} {
		_, err := harness.ResolveSuite(bad.opt)
		var oe *opterr.Error
		if err == nil || !strings.Contains(err.Error(), bad.want) || !errors.As(err, &oe) || oe.Option != bad.option {
			t.Errorf("%+v: error %v, want one of option %s saying %q", bad.opt, err, bad.option, bad.want)
		}
	}
}

func TestCaseIDs(t *testing.T) {
	for _, tc := range []struct {
		inst, mode, ctrl, model string
		seed                    uint64
		want                    string
	}{
		{"A5C12-1", "centralized", "rule", "", 1, "A5C12-1__centralized__rule__s1"},
		{"gen-A16C64", "heterarchical_cnp", "greedy", "", 1001, "gen-A16C64__heterarchical_cnp__greedy__s1001"},
		{"file-my_plant", "holonic_hybrid", "llm", "openai/gpt-4o:mini", 7, "file-my_plant__holonic_hybrid__llm__openai-gpt-4o-mini__s7"},
	} {
		id := harness.CaseID(tc.inst, tc.mode, tc.ctrl, tc.model, tc.seed)
		if id != tc.want {
			t.Errorf("CaseID = %s, want %s", id, tc.want)
		}
		k, err := harness.ParseCaseID(id)
		if err != nil {
			t.Fatal(err)
		}
		if k.InstanceToken != tc.inst || k.Paradigm != tc.mode || k.Controller != tc.ctrl || k.Seed != tc.seed ||
			(k.Model != "") != (tc.model != "") {
			t.Errorf("ParseCaseID(%s) = %+v", id, k)
		}
	}
	for _, bad := range []string{"", "A5C12-1", "A5C12-1__centralized__rule", "A5C12-1__centralized__rule__1",
		"A5C12-1__centralized__rule__s-1", "A5C12-1___centralized__rule__s1", "a/b__centralized__rule__s1",
		"..__centralized__rule__s1", "a__b__c__d__e__s1"} {
		if _, err := harness.ParseCaseID(bad); err == nil {
			t.Errorf("ParseCaseID(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"my plant/v2": "my-plant-v2", "__x__y_": "-_x_-y-", "": "x", "..": "x..", "a_b": "a_b"} {
		if got := harness.SafeToken(in); got != want {
			t.Errorf("SafeToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCaseFromID(t *testing.T) {
	s := resolve(t, harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1,gen:A2C5J7,../factory/testdata/tiny.yaml", Paradigms: "all", Seeds: "2", Controllers: "random"})
	dir := t.TempDir()
	runSuite(t, s, dir, 2)
	for _, c := range s.Cases {
		var got harness.Case
		var err error
		if strings.HasPrefix(c.ID, "file-") {
			if _, err := harness.CaseFromID(c.ID, "", nil, policy.Builtins(), factory.DefaultSizeLimits()); !errors.Is(err, harness.ErrNoInstanceRef) {
				t.Errorf("%s without its file: %v", c.ID, err)
			}
			got, err = harness.CaseFromID(c.ID, "../factory/testdata/tiny.yaml", nil, policy.Builtins(), factory.DefaultSizeLimits())
		} else {
			got, err = harness.CaseFromID(c.ID, "", nil, policy.Builtins(), factory.DefaultSizeLimits())
		}
		if err != nil {
			t.Fatal(err)
		}
		fromDir, err := harness.CaseFromSuiteDir(dir, c.ID, policy.Builtins(), factory.DefaultSizeLimits())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []harness.Case{got, fromDir} {
			if g.ID != c.ID || g.Instance.SHA256 != c.Instance.SHA256 || !reflect.DeepEqual(g.Paradigm, c.Paradigm) || g.Controller != c.Controller || g.Seed != c.Seed {
				t.Errorf("rebuilt case %+v, want %+v", g, c)
			}
			out := t.TempDir()
			ep, err := g.Episode()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := harness.RunToDir(context.Background(), ep, out); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{harness.FileTrace, harness.FileDecisions, harness.FileManifest} {
				if !bytes.Equal(readFile(t, filepath.Join(out, f)), readFile(t, filepath.Join(dir, harness.SuiteCasesDir, c.ID, f))) {
					t.Errorf("%s: rerun %s differs from the suite's", c.ID, f)
				}
			}
		}
	}
	if _, err := harness.CaseFromID("A3C9-1__centralized__rule__s2", "A5C12-1", nil, policy.Builtins(), factory.DefaultSizeLimits()); err == nil {
		t.Error("an --instance that does not match the id was accepted")
	}
	if _, err := harness.CaseFromSuiteDir(dir, "A3C9-1__centralized__rule__s2", policy.Builtins(), factory.DefaultSizeLimits()); err == nil {
		t.Error("a case of another controller was found in the suite")
	}
}

// BenchmarkSuite times the README's suite, --suite A5C12-1 --paradigm all
// --seeds test, on one worker per core, artifacts written to disk.
func BenchmarkSuite(b *testing.B) {
	s, err := harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A5C12-1", Paradigms: "all", Seeds: "test", Controllers: "builtin"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := harness.RunSuite(context.Background(), s, b.TempDir(), harness.SuiteRunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(s.Cases)), "cases/op")
	b.ReportMetric(float64(len(s.Cases)*b.N)/b.Elapsed().Seconds(), "cases/s")
}

// TestSuitePlantLimits: a suite's instances are bounded by the default
// plant limits unless the options raise them, before anything runs.
func TestSuitePlantLimits(t *testing.T) {
	opt := harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1,gen:A2C5J100001", Paradigms: "centralized", Seeds: "1", Controllers: "rule"}
	_, err := harness.ResolveSuite(opt)
	var oe *opterr.Error
	if !errors.As(err, &oe) || oe.Option != "Suite" || !strings.Contains(err.Error(), "100001 jobs: over the limit of 100000") {
		t.Fatalf("got %v, want the Suite option refused over the jobs limit", err)
	}
	lim := factory.DefaultSizeLimits()
	lim.Jobs = 100001
	opt.PlantLimits = &lim
	s, err := harness.ResolveSuite(opt)
	if err != nil || len(s.Cases) != 2 {
		t.Fatalf("raised limit: %v", err)
	}
	if _, err := harness.CaseFromID(s.Cases[1].ID, "", nil, policy.Builtins(), factory.DefaultSizeLimits()); err == nil {
		t.Error("CaseFromID ignored the limits")
	}
	if _, err := harness.CaseFromID(s.Cases[1].ID, "", nil, policy.Builtins(), lim); err != nil {
		t.Errorf("CaseFromID, raised limit: %v", err)
	}
}

// TestSuiteWithoutBuiltins: the harness knows no controller of its own; a
// suite resolved without a built-in set names none, and a case rebuilt
// without one needs a maker.
func TestSuiteWithoutBuiltins(t *testing.T) {
	for _, spec := range []string{"builtin", "rule"} {
		_, err := harness.ResolveSuite(harness.SuiteOptions{Suite: "A3C9-1", Paradigms: "centralized", Seeds: "1", Controllers: spec})
		var oe *opterr.Error
		if !errors.As(err, &oe) || oe.Option != "Controllers" {
			t.Errorf("Controllers %q without Builtins: err %v, want an opterr on Controllers", spec, err)
		}
	}
	c, err := harness.CaseFromID("A3C9-1__centralized__rule__s1", "", nil, nil, factory.DefaultSizeLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Episode(); !errors.Is(err, harness.ErrNoMaker) {
		t.Errorf("Episode of a case rebuilt without built-ins: %v, want ErrNoMaker", err)
	}
	c, err = harness.CaseFromID("A3C9-1__centralized__rule__s1", "", nil, policy.Builtins(), factory.DefaultSizeLimits())
	if err != nil {
		t.Fatal(err)
	}
	if ep, err := c.Episode(); err != nil || ep.Controller.Name() != "rule" {
		t.Errorf("Episode with policy.Builtins: %v, %v", ep.Controller, err)
	}
}
