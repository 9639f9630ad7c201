package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var seriesRe = regexp.MustCompile(`data-series="([^"]*)"`)

// seriesOf are the data-series names of a figure, in order.
func seriesOf(f Figure) []string {
	var out []string
	for _, m := range seriesRe.FindAllStringSubmatch(string(f.SVG), -1) {
		out = append(out, m[1])
	}
	return out
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 1573, []float64{0, 500, 1000, 1500}},
		{2, 5, []float64{2, 3, 4, 5}},
		{3, 3, []float64{3, 3.2, 3.4, 3.6, 3.8, 4}},
	} {
		got := niceTicks(c.lo, c.hi, 5)
		if len(got) != len(c.want) {
			t.Errorf("niceTicks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9 {
				t.Errorf("niceTicks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
				break
			}
		}
	}
}

func TestLineChartSeriesAndErrorBars(t *testing.T) {
	f := LineChart{Title: "t", Lines: []Line{
		{Name: "a", X: []float64{2, 5, 10}, Y: []float64{1, 0.5, math.NaN()}, Err: []float64{0.1, 0, 0}},
		{Name: "b", X: []float64{2, 5}, Y: []float64{0, 1}, Dashed: true},
	}}.Figure("f", "")
	if got := seriesOf(f); len(got) != 2 || got[0] != "a" || got[1] != "b" || f.Series != 2 {
		t.Fatalf("series %v (count %d), want a, b", got, f.Series)
	}
	svg := string(f.SVG)
	if n := strings.Count(svg, "<circle"); n != 4 {
		t.Errorf("%d points drawn, want 4 (the NaN point is skipped)", n)
	}
	if !strings.Contains(svg, `stroke-dasharray="4 2"`) {
		t.Error("the dashed series is not dashed")
	}
	// One error bar (a's first point): a vertical line with two caps.
	if n := strings.Count(svg, `stroke-width="1"`); n != 1 {
		t.Errorf("%d error bars, want 1", n)
	}
}

func TestFigureTextIsEscaped(t *testing.T) {
	evil := `<script>alert("x")</script>&`
	figs := []Figure{
		LineChart{Title: evil, Lines: []Line{{Name: evil, X: []float64{1}, Y: []float64{1}}}}.Figure("a", ""),
		BarChart{Title: evil, Groups: []string{evil}, Series: []Bars{{Name: evil, Values: []float64{1}}}}.Figure("b", ""),
		Gantt{Title: evil, Rows: []string{evil}, Kinds: []string{evil}, Spans: []Span{{0, 0, 1, 0, evil}}, End: 1}.Figure("c", ""),
		Heatmap{Title: evil, Rows: []string{evil}, Cols: []string{evil}, Values: [][]float64{{1}}}.Figure("d", ""),
		Graph{Title: evil, Nodes: []string{evil, "b"}, Kinds: []string{evil}, Edges: []Edge{{0, 1, 2, 0}}}.Figure("e", ""),
	}
	for _, f := range figs {
		if strings.Contains(string(f.SVG), "<script") || strings.Contains(string(f.SVG), `"x"`) {
			t.Errorf("figure %s: unescaped text in %s", f.ID, f.SVG)
		}
		if !strings.Contains(string(f.SVG), "&lt;script&gt;") {
			t.Errorf("figure %s: the label is missing", f.ID)
		}
	}
}

func TestGanttAndGraph(t *testing.T) {
	g := Gantt{Rows: []string{"C1 m0", "C1 m1"}, Kinds: []string{"setup", "processing"},
		Spans: []Span{{0, 0, 5, 0, ""}, {0, 5, 9, 1, ""}, {1, 2, 3, 1, ""}, {1, 4, 4, 1, ""}}, End: 10}.Figure("g", "")
	if s := seriesOf(g); len(s) != 2 || s[0] != "setup" || s[1] != "processing" {
		t.Errorf("Gantt series %v", s)
	}
	if n := strings.Count(string(g.SVG), "<rect") - 2; n != 3 { // a legend swatch per kind
		t.Errorf("%d spans drawn, want 3 (the empty one is not)", n)
	}
	gr := Graph{Nodes: []string{"0", "1", "files"}, Kinds: commKinds, Edges: []Edge{{0, 1, 3, eMessage}, {0, 2, 1, eWrite}, {2, 1, 1, eRead}, {1, 1, 1, eMessage}}}.Figure("h", "")
	if s := seriesOf(gr); len(s) != len(commKinds) {
		t.Errorf("graph series %v", s)
	}
	if n := strings.Count(string(gr.SVG), "marker-end"); n != 3 {
		t.Errorf("%d edges drawn, want 3 (no self loop)", n)
	}
}

// TestDodgeKeepsEqualPointsApart: two series with the same values draw
// their points a full marker apart, so neither hides the other.
func TestDodgeKeepsEqualPointsApart(t *testing.T) {
	same := []float64{0.5, 0.7}
	f := LineChart{Lines: []Line{{Name: "p2p", X: []float64{2, 5}, Y: same, Err: []float64{0.1, 0.1}}, {Name: "sfs", X: []float64{2, 5}, Y: same, Err: []float64{0.1, 0.1}}}, Dodge: true}.Figure("d", "")
	cx := regexp.MustCompile(`<circle cx="([^"]+)"`).FindAllStringSubmatch(string(f.SVG), -1)
	if len(cx) != 4 {
		t.Fatalf("%d points, want 4", len(cx))
	}
	a, _ := strconv.ParseFloat(cx[0][1], 64)
	b, _ := strconv.ParseFloat(cx[2][1], 64)
	if math.Abs(a-b) < 6 {
		t.Errorf("equal points of two series %v px apart, want at least a marker's width (6 px, r = 3)", math.Abs(a-b))
	}
}
