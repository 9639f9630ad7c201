package report

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, math.NaN(), 0.03, 0.005})
	want := []float64{0.03, 0.06, math.NaN(), 0.06, 0.02}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Holm[%d] = %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	if got := Holm([]float64{0.5, 0.4}); got[0] != 0.8 || got[1] != 0.8 {
		t.Errorf("Holm caps and keeps the order: %v, want [0.8 0.8]", got)
	}
}

// TestPairedP: the paired t test's p-value, against R's
// t.test(c(1,2,3,4,5))$p.value = 0.01324 and the degenerate cases.
func TestPairedP(t *testing.T) {
	if p := Paired([]float64{1, 2, 3, 4, 5}).P; math.Abs(p-0.013236) > 1e-5 {
		t.Errorf("p = %v, want 0.013236", p)
	}
	for _, c := range []struct {
		d    []float64
		p    float64
		zero bool
	}{{[]float64{2, 2, 2}, 0, true}, {[]float64{0, 0, 0}, 1, false}} {
		st := Paired(c.d)
		if st.P != c.p || st.ZeroWidth() != c.zero {
			t.Errorf("%v: p %v zero width %v, want %v %v", c.d, st.P, st.ZeroWidth(), c.p, c.zero)
		}
	}
	if st := Paired([]float64{1}); !math.IsNaN(st.P) || !st.Few() {
		t.Errorf("one pair: p %v few %v, want NaN and true", st.P, st.Few())
	}
}

// TestPairedTableHonest: a table of many comparisons shows Holm's mark
// beside the raw one (and drops marks chance explains), flags rows on
// fewer than FewPairs pairs and zero-width intervals, and folds rows of
// difference 0 on every pair, saying so.
func TestPairedTableHonest(t *testing.T) {
	var rows []pairRow
	for i := range 20 { // p ≈ 0.046 each: a raw mark, none after Holm over 20
		rows = append(rows, pairRow{group: []string{"g" + strconv.Itoa(i)}, metric: "S", digits: 3, diffs: []float64{1, 2, 3, 4, 5, -1}})
	}
	rows = append(rows,
		pairRow{group: []string{"strong"}, metric: "S", digits: 3, diffs: []float64{10, 11, 10.5, 9.5, 10.2, 10.1}},
		pairRow{group: []string{"few"}, metric: "S", digits: 3, diffs: []float64{1, 2, 3}},
		pairRow{group: []string{"lockstep"}, metric: "S", digits: 3, diffs: []float64{2, 2, 2, 2, 2}},
		pairRow{group: []string{"same"}, metric: "S", digits: 3, diffs: []float64{0, 0, 0, 0, 0}})
	var sec Section
	compareTable(&sec, "t", "", []string{"group"}, rows, 0, 0, false)
	tb := sec.Tables[0]
	col := func(name string) int { return slices.Index(tb.Head, name) }
	raw, holm, n, tiv := col("≠ 0"), col("Holm ≠ 0"), col("n"), col("95% t interval")
	if raw < 0 || holm < 0 || col("p") < 0 {
		t.Fatalf("head %v: no ≠ 0, p or Holm ≠ 0 column", tb.Head)
	}
	byGroup := map[string][]Cell{}
	for _, r := range tb.Rows {
		byGroup[r[0].Text] = r
	}
	if r := byGroup["g0"]; r[raw].Text != "yes" || r[holm].Text != "" {
		t.Errorf("g0: raw %q Holm %q, want a raw mark that Holm's correction over %d rows drops", r[raw].Text, r[holm].Text, len(rows))
	}
	if r := byGroup["strong"]; r[raw].Text != "yes" || r[holm].Text != "yes" {
		t.Errorf("strong: raw %q Holm %q, want both", r[raw].Text, r[holm].Text)
	}
	if r := byGroup["few"]; !strings.HasSuffix(r[n].Text, fewMark) {
		t.Errorf("few: n %q, want the %s mark", r[n].Text, fewMark)
	}
	if r := byGroup["lockstep"]; !strings.HasSuffix(r[tiv].Text, zeroMark) {
		t.Errorf("lockstep: interval %q, want the %s mark", r[tiv].Text, zeroMark)
	}
	if _, ok := byGroup["same"]; ok {
		t.Error("a row of difference 0 on every pair is shown")
	}
	notes := strings.Join(tb.Notes, "\n")
	for _, want := range []string{"Holm", fewMark, zeroMark, "1 comparisons with difference 0"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no %q in the notes: %s", want, notes)
		}
	}
	if len(sec.CSVRows) != len(rows) {
		t.Errorf("%d CSV rows, want every comparison (%d)", len(sec.CSVRows), len(rows))
	}
}

var barRe = regexp.MustCompile(`<g data-series="[^"]*"[^>]*>(.*?)</g>`)

// TestFamilyBarsHaveIntervals: every bar of the family figures of a
// suite with three seeds has its interval, and a rate is drawn on [0, 1].
func TestFamilyBarsHaveIntervals(t *testing.T) {
	des, _ := suites(t)
	s, err := readDES(des)
	if err != nil {
		t.Fatal(err)
	}
	figs := s.familyFigures("f", s.groups[0].block[0])
	if len(figs) != 4 {
		t.Fatalf("%d family figures, want 4", len(figs))
	}
	for _, f := range figs {
		bars, ivs := 0, 0
		for _, m := range barRe.FindAllStringSubmatch(string(f.SVG), -1) {
			bars += strings.Count(m[1], "<rect")
			ivs += strings.Count(m[1], `class="interval"`)
		}
		if bars == 0 || bars != ivs {
			t.Errorf("%s: %d bars, %d intervals", f.ID, bars, ivs)
		}
		if strings.Contains(f.Title, ", ,") || strings.HasSuffix(f.Title, ",") {
			t.Errorf("title %q has an empty field", f.Title)
		}
	}
	// A rate of 0.1 against one of 0.05: a tenth of the axis, not all of it.
	fig := Panels{Series: []string{"a", "b"}, Panels: []Panel{{Title: "G_tr", Values: []float64{0.1, 0.05}, Lo: []float64{0, 0}, Hi: []float64{0.2, 0.1}, YMax: 1}}}.Figure("p", "")
	h := regexp.MustCompile(`<rect x="[^"]*" y="[^"]*" width="[^"]*" height="([^"]*)"`).FindStringSubmatch(string(fig.SVG))
	if v, _ := strconv.ParseFloat(h[1], 64); v > 0.15*186 || v < 0.05*186 {
		t.Errorf("a rate of 0.1 is %v px high on a %v px axis", v, 186)
	}
}
