package report

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

var (
	curveRe  = regexp.MustCompile(`<g data-series="([^"]*)"[^>]*>(.*?)</g>`)
	spreadRe = regexp.MustCompile(`<circle class="spread" cx="([^"]*)" cy="([^"]*)"`)
	pointRe  = regexp.MustCompile(`<circle cx="([^"]*)" cy="[^"]*" r="3"/>`)
)

// TestSiloCurvesShowSeeds: every curve against N of a real silo suite
// draws one faint point per seed at each N (here one task per level, so
// one per run plotted), at the x of the series' own (dodged) point.
func TestSiloCurvesShowSeeds(t *testing.T) {
	_, dir := suites(t)
	runs, err := readSiloRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := readSilo(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs := siloFigures("s", runs, agg)
	metrics := []struct {
		slug string
		get  func(siloRunRow) float64
	}{{"success", func(r siloRunRow) float64 { return r.success }}, {"p", func(r siloRunRow) float64 { return r.P }}, {"d", func(r siloRunRow) float64 { return r.D }}}
	checked := 0
	for _, m := range metrics {
		for _, lvl := range []string{"I", "III"} {
			i := slices.IndexFunc(figs, func(f Figure) bool { return f.ID == "s-"+m.slug+"-"+lvl })
			if i < 0 {
				t.Fatalf("no figure s-%s-%s", m.slug, lvl)
			}
			for _, g := range curveRe.FindAllStringSubmatch(string(figs[i].SVG), -1) {
				runsPlotted, cells := 0, map[string]bool{}
				for _, r := range runs {
					if r.level == lvl && r.protocol == g[1] && !r.baseline && !math.IsNaN(m.get(r)) {
						runsPlotted++
						cells[strconv.Itoa(r.n)+"/"+r.seed] = true
					}
				}
				if runsPlotted != len(cells) || runsPlotted < 2 {
					t.Fatalf("%s %s: %d runs over %d N × seed cells: the suite should have one task per level and several runs", figs[i].ID, g[1], runsPlotted, len(cells))
				}
				spread := spreadRe.FindAllStringSubmatch(g[2], -1)
				if len(spread) != runsPlotted {
					t.Errorf("%s %s: %d per-seed points, want one per run plotted (%d)", figs[i].ID, g[1], len(spread), runsPlotted)
				}
				var xs []string
				for _, p := range pointRe.FindAllStringSubmatch(g[2], -1) {
					xs = append(xs, p[1])
				}
				for _, p := range spread {
					if !slices.Contains(xs, p[1]) {
						t.Errorf("%s %s: a per-seed point at x %s, off the series' points %v", figs[i].ID, g[1], p[1], xs)
					}
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no series checked")
	}
}
