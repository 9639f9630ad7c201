package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/suiterun"
)

// The suites are run once, for real, and shared by the tests.
var (
	suitesOnce       sync.Once
	desDir, siloDir  string
	suitesErr        error
	suitesRoot       string
	desSuiteOptions  = harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "all", Seeds: "1,2,3", Controllers: "rule"}
	siloSuiteOptions = suite.Options{Tasks: "I-01,III-23", Agents: "2,5", Protocols: "p2p,sfs", Seeds: "1-2"}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if suitesRoot != "" {
		os.RemoveAll(suitesRoot)
	}
	os.Exit(code)
}

func suites(t testing.TB) (string, string) {
	t.Helper()
	suitesOnce.Do(func() {
		if suitesRoot, suitesErr = os.MkdirTemp("", "report-test-"); suitesErr != nil {
			return
		}
		desDir, siloDir = filepath.Join(suitesRoot, "des"), filepath.Join(suitesRoot, "silo")
		s, err := harness.ResolveSuite(desSuiteOptions)
		if err != nil {
			suitesErr = err
			return
		}
		if _, suitesErr = harness.RunSuite(context.Background(), s, desDir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); suitesErr != nil {
			return
		}
		ss, err := suite.Resolve(siloSuiteOptions)
		if err != nil {
			suitesErr = err
			return
		}
		_, suitesErr = suite.Run(context.Background(), ss, siloDir, suite.RunOptions{Workers: 2})
	})
	if suitesErr != nil {
		t.Fatal(suitesErr)
	}
	return desDir, siloDir
}

func readAll(t *testing.T, path string) (map[string]int, [][]string) {
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
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	return col, rows[1:]
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func section(t *testing.T, secs []Section, kind string) Section {
	t.Helper()
	for _, s := range secs {
		if s.Kind == kind {
			return s
		}
	}
	t.Fatalf("no section %s", kind)
	return Section{}
}

func TestDetect(t *testing.T) {
	des, silo := suites(t)
	if k, err := Detect(des); err != nil || k != KindDES {
		t.Errorf("des suite: %v %v", k, err)
	}
	if k, err := Detect(silo); err != nil || k != KindSilo {
		t.Errorf("silo suite: %v %v", k, err)
	}
	empty := t.TempDir()
	if _, err := Detect(empty); err == nil || !strings.Contains(err.Error(), "not a suite directory") {
		t.Errorf("empty directory: %v", err)
	}
	both := t.TempDir()
	os.WriteFile(filepath.Join(both, "suite.json"), []byte("{}"), 0o644)
	os.Mkdir(filepath.Join(both, "runs"), 0o755)
	if _, err := Detect(both); err == nil || !strings.Contains(err.Error(), "both benchmarks") {
		t.Errorf("mixed directory: %v", err)
	}
	if _, err := Detect(filepath.Join(des, harness.FileSuiteSummary)); err == nil {
		t.Error("a file is taken for a suite directory")
	}
}

// TestMatrix checks the paradigm matrix against suite_summary.csv, read
// here on its own.
func TestMatrix(t *testing.T) {
	des, _ := suites(t)
	secs, err := Build([]string{des})
	if err != nil {
		t.Fatal(err)
	}
	m := section(t, secs, SectionMatrix)
	paradigms := coord.Builtins()
	if len(m.CSVRows) != len(paradigms) {
		t.Fatalf("%d matrix rows, want one per paradigm (%d)", len(m.CSVRows), len(paradigms))
	}
	// Four family tables and the legend; every metric once, with its arrow.
	if len(m.Tables) != 5 || m.Tables[4].Title != "Legend" {
		t.Fatalf("%d tables", len(m.Tables))
	}
	var heads []string
	for _, tb := range m.Tables[:4] {
		if len(tb.Rows) != len(paradigms) {
			t.Errorf("%s: %d rows", tb.Title, len(tb.Rows))
		}
		if !slices.Equal(tb.Head[:5], []string{"instance", "controller", "paradigm", "n", "complete"}) {
			t.Errorf("%s: head %v (model and framework are empty for rule)", tb.Title, tb.Head)
		}
		heads = append(heads, tb.Head[5:]...)
	}
	for i, sm := range harness.SuiteMetrics() {
		if heads[i] != sm.Key+" "+sm.Arrow() {
			t.Errorf("column %d: %q, want %q", i, heads[i], sm.Key+" "+sm.Arrow())
		}
	}
	col, rows := readAll(t, filepath.Join(des, harness.FileSuiteSummary))
	mcol := map[string]int{}
	for i, h := range m.CSVHead {
		mcol[h] = i
	}
	for pi, p := range paradigms {
		r := m.CSVRows[pi]
		if r[mcol["paradigm"]] != p.ID || r[mcol["instance"]] != "A3C9-1" || r[mcol["n"]] != "3" {
			t.Errorf("row %d: %v", pi, r[:7])
		}
	}
	for _, sm := range harness.SuiteMetrics() {
		means := map[string]float64{}
		for _, r := range rows {
			means[r[col["paradigm"]]] += num(t, r[col[sm.Key]]) / 3
		}
		best := math.Inf(1)
		if sm.HigherBetter {
			best = math.Inf(-1)
		}
		same := true
		for _, p := range paradigms {
			v := means[p.ID]
			same = same && v == means[paradigms[0].ID]
			if sm.HigherBetter {
				best = math.Max(best, v)
			} else {
				best = math.Min(best, v)
			}
		}
		for pi, p := range paradigms {
			got := num(t, m.CSVRows[pi][mcol[sm.Key+"_mean"]])
			if math.Abs(got-means[p.ID]) > 1e-9*math.Max(1, math.Abs(got)) {
				t.Errorf("%s %s: mean %v, summary gives %v", p.ID, sm.Key, got, means[p.ID])
			}
			wantBest := !same && math.Abs(means[p.ID]-best) <= 1e-9*math.Max(1, math.Abs(best))
			if gotBest := m.CSVRows[pi][mcol[sm.Key+"_best"]] == "true"; gotBest != wantBest {
				t.Errorf("%s %s: best %v, want %v", p.ID, sm.Key, gotBest, wantBest)
			}
		}
	}
	var md bytes.Buffer
	if err := Write(&md, []string{des}, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Paradigm matrix: effectiveness", "## Paradigm matrix: robustness", "G_cj ↑", "G_mk ↓", "**", "## Paired differences: instance A3C9-1, controller rule"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown has no %q", want)
		}
	}
}

// TestPairedDiffs: the paired differences are those of the summary's
// rows of the same seed.
func TestPairedDiffs(t *testing.T) {
	des, _ := suites(t)
	s, err := readDES(des)
	if err != nil {
		t.Fatal(err)
	}
	comps := s.comparisons()
	np := len(coord.Builtins())
	if want := np * (np - 1) / 2 * len(harness.SuiteMetrics()); len(comps) != want {
		t.Fatalf("%d comparisons, want %d", len(comps), want)
	}
	col, rows := readAll(t, filepath.Join(des, harness.FileSuiteSummary))
	value := func(paradigm, seed, metric string) float64 {
		for _, r := range rows {
			if r[col["paradigm"]] == paradigm && r[col["seed"]] == seed {
				return num(t, r[col[metric]])
			}
		}
		t.Fatalf("no row %s %s", paradigm, seed)
		return 0
	}
	for _, c := range comps {
		key := harness.SuiteMetrics()[c.Metric].Key
		if len(c.Diffs) != 3 || !slices.Equal(c.Seeds, []uint64{1, 2, 3}) {
			t.Fatalf("%s−%s %s: seeds %v", c.A, c.B, key, c.Seeds)
		}
		for i, seed := range []string{"1", "2", "3"} {
			if want := value(c.A, seed, key) - value(c.B, seed, key); c.Diffs[i] != want {
				t.Errorf("%s−%s %s seed %s: %v, want %v", c.A, c.B, key, seed, c.Diffs[i], want)
			}
		}
	}
}

// TestPairedAgainstPython checks the paired statistics against
// testdata/paired_check.py, which computes them with Python's standard
// library alone (the t quantile by numerical inversion of the t CDF, the
// bootstrap by replaying the PCG stream).
func TestPairedAgainstPython(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	des, _ := suites(t)
	s, err := readDES(des)
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]float64{{1, 2, 3.5}, {-1, 0.5}, {0.1, -0.3, 0.25, 0.9, -1.2, 2.2, 0.05}, {1e3, 1e3 + 0.5, 999.75, 1001, 998.5, 1000.25, 1002, 999, 1000.5, 1001.5, 997}}
	fromSuite := 0
	for _, c := range s.comparisons() {
		if fromSuite < 4 && c.Stats.N >= 2 && c.Stats.SD > 0 {
			sets = append(sets, c.Diffs)
			fromSuite++
		}
	}
	if fromSuite == 0 {
		t.Fatal("the suite has no comparison with spread")
	}
	req, _ := json.Marshal(map[string]any{"level": Level, "resamples": Resamples, "seed1": uint64(BootstrapSeed1), "seed2": uint64(BootstrapSeed2), "diffs": sets})
	cmd := exec.Command(py, "testdata/paired_check.py")
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("paired_check.py: %v\n%s", err, stderr.String())
	}
	var want []struct {
		N                                      int
		Mean, SD, TQ, TLo, THi, BootLo, BootHi float64
	}
	var raw []map[string]float64
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		want = append(want, struct {
			N                                      int
			Mean, SD, TQ, TLo, THi, BootLo, BootHi float64
		}{int(r["n"]), r["mean"], r["sd"], r["tq"], r["t_lo"], r["t_hi"], r["boot_lo"], r["boot_hi"]})
	}
	if len(want) != len(sets) {
		t.Fatalf("python gave %d results for %d sets", len(want), len(sets))
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	for i, d := range sets {
		got, w := Paired(d), want[i]
		pairs := []struct {
			name    string
			go_, py float64
		}{{"mean", got.Mean, w.Mean}, {"sd", got.SD, w.SD}, {"t quantile", got.TQuantile, w.TQ}, {"t lo", got.T.Lo, w.TLo},
			{"t hi", got.T.Hi, w.THi}, {"bootstrap lo", got.Boot.Lo, w.BootLo}, {"bootstrap hi", got.Boot.Hi, w.BootHi}}
		for _, p := range pairs {
			if !close(p.go_, p.py) {
				t.Errorf("set %d %v: %s: Go %.12g, Python %.12g", i, d, p.name, p.go_, p.py)
			}
		}
		t.Logf("n=%d mean=%.6g t=[%.6g, %.6g] (t quantile %.9g) bootstrap=[%.6g, %.6g]", got.N, got.Mean, got.T.Lo, got.T.Hi, got.TQuantile, got.Boot.Lo, got.Boot.Hi)
	}
}

func TestPairedEdgeCases(t *testing.T) {
	if p := Paired(nil); p.N != 0 || !math.IsNaN(p.Mean) || p.Distinguishable() {
		t.Errorf("no differences: %+v", p)
	}
	if p := Paired([]float64{2}); p.Mean != 2 || !math.IsNaN(p.T.Lo) || p.Distinguishable() {
		t.Errorf("one difference: %+v", p)
	}
	if p := Paired([]float64{2, 2, 2}); p.T != (Interval{2, 2}) || p.Boot != (Interval{2, 2}) || !p.Distinguishable() {
		t.Errorf("constant differences: %+v", p)
	}
	if p := Paired([]float64{0, 0}); p.Distinguishable() {
		t.Errorf("zero differences: %+v", p)
	}
}

func TestSilo(t *testing.T) {
	_, silo := suites(t)
	secs, err := Build([]string{silo})
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 2 || secs[0].Kind != SectionSilo || secs[1].Kind != SectionSiloPaired {
		t.Fatalf("%d sections", len(secs))
	}
	s := secs[0]
	col, agg := readAll(t, filepath.Join(silo, suite.FileAggregate))
	if len(s.CSVRows) != len(agg) || len(s.Tables[0].Rows) != len(agg) {
		t.Fatalf("%d rows, aggregate.csv has %d", len(s.CSVRows), len(agg))
	}
	if want := []string{"level", "N", "baseline of", "protocol", "agent", "runs", "S ↑", "success ↑", "P ↑", "P_paper ↑", "D", "D_reads", "RCC ↓", "RCC_success ↓", "RCC baseline"}; !slices.Equal(s.Tables[0].Head, want) {
		t.Errorf("head %v", s.Tables[0].Head)
	}
	scol := map[string]int{}
	for i, h := range s.CSVHead {
		scol[h] = i
	}
	// Every aggregate row is in the table with its S and RCC; rows go by
	// level, then N.
	for _, a := range agg {
		i := slices.IndexFunc(s.CSVRows, func(r []string) bool {
			return r[scol["level"]] == a[col["level"]] && r[scol["N"]] == a[col["N"]] && r[scol["merged_from"]] == a[col["merged_from"]] &&
				r[scol["protocol"]] == a[col["protocol"]] && r[scol["agent"]] == a[col["agent"]]
		})
		if i < 0 {
			t.Fatalf("aggregate row %v is not in the table", a)
		}
		r := s.CSVRows[i]
		if num(t, r[scol["S"]]) != num(t, a[col["S_mean"]]) {
			t.Errorf("row %v: S %s", a, r[scol["S"]])
		}
		for _, k := range []string{"RCC", "RCC_success"} {
			if (a[col[k]] == "") != (r[scol[k]] == "") || a[col[k]] != "" && num(t, r[scol[k]]) != num(t, a[col[k]]) {
				t.Errorf("row %v: %s %q", a, k, r[scol[k]])
			}
		}
	}
	for i := 1; i < len(s.CSVRows); i++ {
		a, b := s.CSVRows[i-1], s.CSVRows[i]
		if levels[a[0]] > levels[b[0]] {
			t.Errorf("row %d: level %s after %s", i, b[0], a[0])
		}
	}
}

// TestDeterministic: the same suites give the same bytes, in every format.
func TestDeterministic(t *testing.T) {
	des, silo := suites(t)
	for _, f := range formats {
		var a, b bytes.Buffer
		if err := Write(&a, []string{des, silo}, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if err := Write(&b, []string{des, silo}, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || a.Len() == 0 {
			t.Errorf("%s: two writes differ (or are empty)", f)
		}
		if f == "latex" && (!strings.Contains(a.String(), `\textbf{`) || !strings.Contains(a.String(), `G\_mk $\downarrow$`)) {
			t.Errorf("latex: no bold best value or escaped header")
		}
	}
	var one bytes.Buffer
	if err := Write(&one, []string{des, silo}, Options{Format: "csv", Tables: []string{SectionMatrix}}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&one).ReadAll()
	if err != nil || len(recs) != 1+len(coord.Builtins()) {
		t.Errorf("--table matrix: one CSV of %d records (%v)", len(recs), err)
	}
}

func TestFormats(t *testing.T) {
	des, _ := suites(t)
	run := filepath.Join(des, "cases", "A3C9-1__centralized__rule__s1")
	if err := Write(&bytes.Buffer{}, []string{run}, Options{Format: "md"}); !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), run) {
		t.Errorf("md of a run directory: %v", err)
	}
	// A bad option is an *opterr.Error naming the field (the CLI names
	// the flag), pointing at the field it contradicts.
	for _, c := range []struct {
		opt    Options
		option string
		see    []string
	}{
		{Options{Format: "md", Cases: []string{"all"}}, "Cases", []string{"Format"}},
		{Options{Format: "html", Tables: []string{"matrix"}}, "Tables", []string{"Format"}},
		{Options{Format: "pdf"}, "Format", nil},
		{Options{Format: "md", Tables: []string{"gantt"}}, "Tables", nil},
		{Options{Format: "md", Compare: true}, "Compare", nil},
		{Options{Format: "html", Compare: true}, "Compare", nil},
	} {
		var oe *opterr.Error
		if err := Write(&bytes.Buffer{}, []string{des}, c.opt); !errors.As(err, &oe) || oe.Option != c.option || !slices.Equal(oe.See, c.see) {
			t.Errorf("%+v: %v, want an error of option %s (see %v)", c.opt, err, c.option, c.see)
		}
	}
}

// copySuite copies the des suite's configuration and gives it summary as
// its suite_summary.csv.
func copySuite(t *testing.T, summary []byte) string {
	t.Helper()
	des, _ := suites(t)
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(des, harness.FileSuiteConfig))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, harness.FileSuiteConfig), cfg, 0o644)
	os.WriteFile(filepath.Join(dir, harness.FileSuiteSummary), summary, 0o644)
	return dir
}

// TestMalformed: a damaged summary gives an error naming file and line.
func TestMalformed(t *testing.T) {
	des, _ := suites(t)
	good, err := os.ReadFile(filepath.Join(des, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(strings.TrimSpace(lines[0]), ",") {
		col[h] = i
	}
	replace := func(line int, f func([]string)) []byte {
		ls := slices.Clone(lines)
		fs := strings.Split(strings.TrimSuffix(ls[line-1], "\n"), ",")
		f(fs)
		ls[line-1] = strings.Join(fs, ",") + "\n"
		return []byte(strings.Join(ls, ""))
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"not a number", "suite_summary.csv:3: column G_mk", replace(3, func(f []string) { f[col["G_mk"]] = "fast" })},
		{"bad seed", "suite_summary.csv:2: column seed", replace(2, func(f []string) { f[col["seed"]] = "-1" })},
		{"short row", "suite_summary.csv:5: wrong number of fields", replace(4, func(f []string) { f[len(f)-1] = f[len(f)-1] + "\n1,2" })},
		{"bad quote", "suite_summary.csv:3:", replace(3, func(f []string) { f[0] = `a"b` })},
		{"duplicate", "suite_summary.csv:3: the case of line 2 again", []byte(lines[0] + lines[1] + lines[1])},
		{"no column", "suite_summary.csv:1: no column \"G_mk\"", []byte(strings.Replace(string(good), "G_mk", "G_mkx", 1))},
		{"empty", "suite_summary.csv", nil},
		{"header only", "no case has finished", []byte(lines[0])},
	}
	for _, c := range cases {
		dir := copySuite(t, c.data)
		_, err := Build([]string{dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// FuzzSummary: no summary file makes the reader panic.
func FuzzSummary(f *testing.F) {
	f.Add([]byte("instance,paradigm,controller,model,framework,seed,status\n"))
	f.Add([]byte(strings.Join(append([]string{"instance", "paradigm", "controller", "model", "framework", "seed", "status"}, metricKeys()...), ",") +
		"\nA,centralized,rule,,,1,done,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, harness.FileSuiteConfig), []byte(`{"paradigms":[{"mode_id":"centralized"}],"controllers":["rule"]}`), 0o644)
		os.WriteFile(filepath.Join(dir, harness.FileSuiteSummary), b, 0o644)
		if secs, err := Build([]string{dir}); err == nil {
			writeMarkdown(&bytes.Buffer{}, secs)
		}
	})
}

// TestSiloMalformed: a damaged aggregate.csv gives an error naming file
// and line.
func TestSiloMalformed(t *testing.T) {
	_, silo := suites(t)
	good, err := os.ReadFile(filepath.Join(silo, suite.FileAggregate))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	cases := []struct{ name, want, data string }{
		{"bad level", "aggregate.csv:2: column level", lines[0] + strings.Replace(lines[1], ",I,", ",IV,", 1)},
		{"bad S", "aggregate.csv:3: column S_mean", lines[0] + lines[1] + strings.Replace(lines[2], ",1.0000,", ",yes,", 1)},
		{"no RCC column", `no column "RCC"`, strings.Replace(string(good), ",RCC,", ",rcc,", 1)},
	}
	for _, c := range cases {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, suite.FileConfig), []byte("{}"), 0o644)
		os.WriteFile(filepath.Join(dir, suite.FileAggregate), []byte(c.data), 0o644)
		if _, err := Build([]string{dir}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// A summary whose case_id would lead out of the suite's cases/ directory
// is refused as malformed input, naming the file and line.
func TestCaseIDMustBeADirectoryName(t *testing.T) {
	for _, id := range []string{"../../etc", "a/b", "..", ".", ""} {
		if caseDirName(id) {
			t.Errorf("caseDirName(%q) = true", id)
		}
	}
	for _, id := range []string{"A3C9-1__centralized__rule__s1", "I-01-p2p-n5-reference-s1"} {
		if !caseDirName(id) {
			t.Errorf("caseDirName(%q) = false", id)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.csv")
	if err := os.WriteFile(path, []byte("case_id,x\nok,1\n../../etc,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCSV(path, []string{"case_id"}); err == nil || !strings.Contains(err.Error(), "summary.csv:3") {
		t.Errorf("readCSV with a case_id of ../../etc: %v", err)
	}
}

// Names from a suite's files reach md, csv and latex output without
// terminal controls.
func TestTextFormatsPrintable(t *testing.T) {
	des, _ := suites(t)
	summary, err := os.ReadFile(filepath.Join(des, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.ReplaceAll(string(summary), ",rule,", ",rule\x1b]0;pwned\x07\x1b[2J\r,")
	if hostile == string(summary) {
		t.Fatal("the suite has no rule controller to rename")
	}
	dir := copySuite(t, []byte(hostile))
	for _, f := range []string{"md", "csv", "latex"} {
		var b bytes.Buffer
		if err := Write(&b, []string{dir}, Options{Format: f}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !strings.Contains(b.String(), "rule") {
			t.Fatalf("%s: the controller is not in the output", f)
		}
		if i := strings.IndexAny(b.String(), "\x1b\x07\r"); i >= 0 {
			t.Errorf("%s output holds a control character at %d: %q", f, i, b.String()[max(0, i-20):min(b.Len(), i+20)])
		}
	}
}

// A block with more paradigms than maxPairedParadigms is left out of the
// paired differences (their number grows as its square), and the report
// says so; the matrix still lists every paradigm.
func TestPairedBounded(t *testing.T) {
	des, _ := suites(t)
	f, err := os.Open(filepath.Join(des, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(rows[0])
	n := maxPairedParadigms + 8
	for _, r := range rows[1:] {
		if r[col["paradigm"]] != "centralized" || r[col["instance"]] != rows[1][col["instance"]] {
			continue
		}
		for p := 0; p < n; p++ {
			c := slices.Clone(r)
			c[col["paradigm"]] = fmt.Sprintf("p%02d", p)
			c[col["case_id"]] = strings.Replace(c[col["case_id"]], "__centralized__", fmt.Sprintf("__p%02d__", p), 1)
			w.Write(c)
		}
	}
	w.Flush()
	dir := copySuite(t, b.Bytes())
	var out bytes.Buffer
	if err := Write(&out, []string{dir}, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Paired differences left out") || !strings.Contains(out.String(), fmt.Sprintf("| %d", n)) {
		t.Errorf("the report does not say the block of %d paradigms was left out:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("p%02d", n-1)) {
		t.Error("the matrix lost a paradigm")
	}
}
