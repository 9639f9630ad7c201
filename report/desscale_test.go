package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/suiterun"
)

// The scaling suite is run once, for real: three generated plants of two
// sizes (two of 6 cells, one of 9), two paradigms, two controllers, two
// seeds.
var (
	scaleOnce    sync.Once
	scaleDir     string
	scaleErr     error
	scaleOptions = harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "gen:A3C6,gen:A2C6,gen:A3C9",
		Paradigms: "centralized,holonic_hybrid", Seeds: "1,2", Controllers: "rule,greedy"}
)

func scaleSuite(t testing.TB) string {
	t.Helper()
	suites(t) // makes suitesRoot, which TestMain removes
	scaleOnce.Do(func() {
		scaleDir = filepath.Join(suitesRoot, "scale")
		s, err := harness.ResolveSuite(scaleOptions)
		if err != nil {
			scaleErr = err
			return
		}
		_, scaleErr = harness.RunSuite(context.Background(), s, scaleDir, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}})
	})
	if scaleErr != nil {
		t.Fatal(scaleErr)
	}
	return scaleDir
}

// scalingCSV is the scaling section of dir as CSV records by column name.
func scalingCSV(t *testing.T, dir string) (map[string]int, [][]string) {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, []string{dir}, Options{Format: "csv", Tables: []string{SectionScaling}}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return col, recs[1:]
}

// TestScalingTables: a row per controller × paradigm × plant size, the
// instances of a size pooled; each value recomputed here from
// suite_summary.csv (the mean over the cases, the spread over seeds of
// the per-seed mean), and the wall time of every case read.
func TestScalingTables(t *testing.T) {
	dir := scaleSuite(t)
	col, rows := scalingCSV(t, dir)
	if len(rows) != 2*2*2 {
		t.Fatalf("%d rows, want 8 (2 controllers × 2 paradigms × 2 sizes)", len(rows))
	}
	scol, srows := readAll(t, filepath.Join(dir, harness.FileSuiteSummary))
	cells := map[string]string{"gen:A3C6": "6", "gen:A2C6": "6", "gen:A3C9": "9"}
	for _, r := range rows {
		ctrl, par, size := r[col["controller"]], r[col["paradigm"]], r[col["cells"]]
		want := "gen:A3C9"
		if size == "6" {
			want = "gen:A3C6 gen:A2C6"
		}
		if r[col["instances"]] != want {
			t.Errorf("%s %s %s cells: instances %q, want %q", ctrl, par, size, r[col["instances"]], want)
		}
		bySeed := map[string][]float64{}
		var ds, dpj []float64
		for _, s := range srows {
			if s[scol["controller"]] != ctrl || s[scol["paradigm"]] != par || cells[s[scol["instance"]]] != size {
				continue
			}
			g := num(t, s[scol["G_ds"]])
			ds = append(ds, g)
			dpj = append(dpj, g/(num(t, s[scol["G_cj"]])+num(t, s[scol["G_dj"]])))
			bySeed[s[scol["seed"]]] = append(bySeed[s[scol["seed"]]], g)
		}
		if n := strconv.Itoa(len(ds)); r[col["n"]] != n || r[col["wall_n"]] != n {
			t.Errorf("%s %s %s cells: n %s, wall_n %s, want %s", ctrl, par, size, r[col["n"]], r[col["wall_n"]], n)
		}
		var perSeed []float64
		for _, v := range bySeed {
			perSeed = append(perSeed, mean(v))
		}
		for _, c := range []struct {
			key  string
			want float64
		}{{"G_ds_mean", mean(ds)}, {"G_ds_sd", sampleSD(perSeed)}, {"decisions_per_job_mean", mean(dpj)}} {
			if got := num(t, r[col[c.key]]); math.Abs(got-c.want) > 1e-9*max(1, math.Abs(c.want)) {
				t.Errorf("%s %s %s cells: %s %v, want %v", ctrl, par, size, c.key, got, c.want)
			}
		}
		if w := num(t, r[col["wall_ms_mean"]]); !(w > 0) {
			t.Errorf("%s %s %s cells: wall_ms_mean %v", ctrl, par, size, w)
		}
	}
	var md bytes.Buffer
	if err := Write(&md, []string{dir}, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Against plant size: effectiveness", "Against plant size: cost", "6 cells: gen:A2C6, gen:A3C6; 9 cells: gen:A3C9", "wall ms / episode"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("md lacks %q", s)
		}
	}
}

// TestScalingOnlyWithSeveralSizes: a suite of one plant size has no
// scaling table nor figure.
func TestScalingOnlyWithSeveralSizes(t *testing.T) {
	des, _ := suites(t)
	secs, err := Build([]string{des})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(secs, func(s Section) bool { return s.Kind == SectionScaling }) {
		t.Error("a scaling section for a suite of one plant size")
	}
	if err := Write(&bytes.Buffer{}, []string{des}, Options{Format: "md", Tables: []string{SectionScaling}}); err == nil {
		t.Error("--table scaling of a suite of one plant size wrote something")
	}
	if p := htmlPage(t, []string{des}, Options{Cases: []string{"none"}}); strings.Contains(p, "Against plant size") {
		t.Error("the page of a suite of one plant size has the scaling block")
	}
}

// TestScalingFigures: per controller, a figure per metric that is not 0
// everywhere, then decisions and messages per job and the wall time, a
// series per paradigm.
func TestScalingFigures(t *testing.T) {
	dir := scaleSuite(t)
	p := htmlPage(t, []string{dir}, Options{Cases: []string{"none"}})
	figs := figures(t, p)
	sc, err := readScaleOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	values := sc.scaleValues()
	for bi, ctrl := range []string{"rule", "greedy"} {
		n := 0
		for vi, v := range values {
			got, ok := figs["in1-scale"+strconv.Itoa(bi)+"-v"+strconv.Itoa(vi)]
			switch {
			case v.noFig:
				if ok {
					t.Errorf("%s: a figure of %s, which is for the tables only", ctrl, v.key)
				}
				continue
			case !ok && v.family == "":
				t.Errorf("%s: no figure of %s", ctrl, v.key)
			case ok && got != 2:
				t.Errorf("%s: the figure of %s has %d series, want 2 (paradigms)", ctrl, v.key, got)
			}
			if ok {
				n++
			}
		}
		if n < 8 {
			t.Errorf("%s: %d scaling figures", ctrl, n)
		}
	}
	for _, s := range []string{"Against plant size", "G_mk ↓ against plant size, rule", "Wall time per episode against plant size, greedy", "0 in every case, no figure: "} {
		if !strings.Contains(p, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

// readScaleOf reads dir's suite and its plant sizes.
func readScaleOf(dir string) (*desScale, error) {
	s, err := readDES(dir)
	if err != nil {
		return nil, err
	}
	return readScale(s)
}

// TestScalingWallTime: a case without episode_timing.json (run before it
// was written) is left out of the wall time, and counted in a note; a
// malformed one is an error naming the file.
func TestScalingWallTime(t *testing.T) {
	src := scaleSuite(t)
	dir := t.TempDir()
	for _, f := range []string{harness.FileSuiteConfig, harness.FileSuiteSummary} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(dir, f), b)
	}
	es, err := os.ReadDir(filepath.Join(src, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		copyDir(t, filepath.Join(src, "cases", e.Name()), filepath.Join(dir, "cases", e.Name()))
	}
	gone := filepath.Join(dir, "cases", "gen-A3C9__centralized__rule__s1", harness.FileEpisodeTiming)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	col, rows := scalingCSV(t, dir)
	for _, r := range rows {
		want := r[col["n"]]
		if r[col["controller"]] == "rule" && r[col["paradigm"]] == "centralized" && r[col["cells"]] == "9" {
			want = "1"
		}
		if r[col["wall_n"]] != want {
			t.Errorf("%v: wall_n %s, want %s", r[:5], r[col["wall_n"]], want)
		}
	}
	var md bytes.Buffer
	if err := Write(&md, []string{dir}, Options{Format: "md", Tables: []string{SectionScaling}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "1 finished cases have no episode_timing.json") {
		t.Error("the cost table does not count the case without a wall time")
	}
	bad := filepath.Join(dir, "cases", "gen-A3C6__centralized__rule__s1", harness.FileEpisodeTiming)
	for _, body := range []string{`{"wall_s": "slow"}`, `{"wall_s": -1}`} {
		mustWrite(t, bad, []byte(body))
		if err := Write(&bytes.Buffer{}, []string{dir}, Options{Format: "md"}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("episode_timing.json %s: %v, want an error naming the file", body, err)
		}
	}
}

// TestScalingSizesFromLabels: without case directories, a reported or
// generated instance's size comes from its name; an instance whose size
// nothing tells is left out, and named.
func TestScalingSizesFromLabels(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, harness.FileSuiteConfig), []byte(`{"controllers":["rule"],"paradigms":[{"mode_id":"centralized"}]}`))
	var sum strings.Builder
	sum.WriteString("case_id,instance,paradigm,controller,model,framework,seed,status," + strings.Join(metricKeys(), ",") + "\n")
	for _, inst := range []string{"A5C12-1", "gen:A16C64J100", "myplant"} {
		for _, seed := range []string{"1", "2"} {
			sum.WriteString(harness.SafeToken(inst) + "__centralized__rule__s" + seed + "," + inst + ",centralized,rule,,," + seed + ",done")
			for range metricKeys() {
				sum.WriteString("," + seed)
			}
			sum.WriteString("\n")
		}
	}
	mustWrite(t, filepath.Join(dir, harness.FileSuiteSummary), []byte(sum.String()))
	col, rows := scalingCSV(t, dir)
	var sizes []string
	for _, r := range rows {
		sizes = append(sizes, r[col["cells"]]+" "+r[col["instances"]]+" "+r[col["wall_n"]])
	}
	if want := []string{"12 A5C12-1 0", "64 gen:A16C64J100 0"}; !slices.Equal(sizes, want) {
		t.Errorf("rows %q, want %q", sizes, want)
	}
	var md bytes.Buffer
	if err := Write(&md, []string{dir}, Options{Format: "md", Tables: []string{SectionScaling}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "size unknown") || !strings.Contains(md.String(), "myplant") {
		t.Errorf("the tables do not name the instance of unknown size:\n%s", md.String())
	}
}

// TestScalingReportInChromium: the scaling figures draw in a browser with
// the series they declare, and the page logs no problem.
func TestScalingReportInChromium(t *testing.T) {
	bin := chromiumPath(t)
	dir := scaleSuite(t)
	file := filepath.Join(t.TempDir(), "scale.html")
	mustWrite(t, file, []byte(htmlPage(t, []string{dir}, Options{Cases: []string{"none"}})))
	v := openInChromium(t, bin, file)
	for _, p := range v.problems {
		t.Errorf("the page logged a problem: %s", p)
	}
	n := 0
	for _, f := range v.figures {
		if !strings.HasPrefix(f.ID, "in1-scale") {
			continue
		}
		n++
		if f.Series != 2 || f.Declared != 2 || f.Shapes == 0 || f.Width <= 0 {
			t.Errorf("figure %s: %d series drawn (declared %d), %d shapes, %v px wide", f.ID, f.Series, f.Declared, f.Shapes, f.Width)
		}
	}
	if n < 16 {
		t.Errorf("%d scaling figures in the browser", n)
	}
}
