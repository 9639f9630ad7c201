package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Inline SVG figures for the HTML report, drawn in Go so that the page
// needs no script and no network: line charts with error bars, grouped
// bars, a Gantt timeline, a heat map and a small directed graph. Every
// series is one <g data-series="name"> element, so that a browser test can
// count what was drawn. All text is escaped here: a figure's markup is
// safe to embed even when labels come from run artifacts.

// Figure is one drawn figure: its markup and how many series it has.
type Figure struct {
	ID      string
	Title   string
	Caption string
	Series  int           // distinct data-series groups in SVG
	SVG     template.HTML // built by this file only, every text escaped
	// Empty says why the figure draws nothing (or nothing that differs
	// from 0), when it does; the page shows it in the caption.
	Empty string
}

// empty returns f saying why it draws nothing: the reason ends its
// caption and is its Empty.
func (f Figure) empty(why string) Figure {
	f.Empty = why
	f.Caption = strings.TrimSpace(f.Caption + " " + why)
	return f
}

// palette is the series colours (colour-blind friendly, Okabe–Ito).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

func colour(i int) string { return palette[i%len(palette)] }

// svgBuf accumulates SVG markup.
type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// esc escapes text for SVG/HTML content and attribute values.
func esc(s string) string { return html.EscapeString(s) }

// n formats a coordinate compactly (2 decimals, no trailing zeros).
func n(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

func (b *svgBuf) open(w, h int, label string) {
	b.f(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-size="11">`, w, h, w, h, esc(label))
}

func (b *svgBuf) text(x, y float64, anchor, s string, extra string) {
	b.f(`<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`, n(x), n(y), anchor, extra, esc(s))
}

// niceTicks returns about k round tick values covering [lo, hi].
func niceTicks(lo, hi float64, k int) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(k)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		ts = append(ts, v)
		if len(ts) > 50 {
			break
		}
	}
	return ts
}

func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e5 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
}

// frame maps data coordinates into a plot area and draws its axes.
type frame struct {
	x0, y0, w, h           float64 // plot area in pixels (x0, y0 top left)
	xlo, xhi, ylo, yhi     float64
	xTicks, yTicks         []float64
	xLabels                []string // categorical x axis, if set
	xTitle, yTitle, legend string
	logX                   bool
}

func (fr *frame) px(x float64) float64 {
	if fr.logX {
		return fr.x0 + (math.Log(x)-math.Log(fr.xlo))/(math.Log(fr.xhi)-math.Log(fr.xlo))*fr.w
	}
	return fr.x0 + (x-fr.xlo)/(fr.xhi-fr.xlo)*fr.w
}
func (fr *frame) py(y float64) float64 { return fr.y0 + fr.h - (y-fr.ylo)/(fr.yhi-fr.ylo)*fr.h }

func (fr *frame) axes(b *svgBuf) {
	b.f(`<g class="axes" stroke="#888" fill="none"><path d="M%s %sV%sH%s"/></g>`, n(fr.x0), n(fr.y0), n(fr.y0+fr.h), n(fr.x0+fr.w))
	b.f(`<g class="ticks" fill="#333">`)
	for _, t := range fr.yTicks {
		y := fr.py(t)
		b.f(`<path d="M%s %sH%s" stroke="#eee"/>`, n(fr.x0), n(y), n(fr.x0+fr.w))
		b.text(fr.x0-4, y+4, "end", tickLabel(t), "")
	}
	for _, t := range fr.xTicks {
		x := fr.px(t)
		b.f(`<path d="M%s %sv4" stroke="#888"/>`, n(x), n(fr.y0+fr.h))
		label := tickLabel(t)
		if fr.xLabels != nil {
			label = ""
			if i := int(t); float64(i) == t && i >= 0 && i < len(fr.xLabels) {
				label = fr.xLabels[i]
			}
		}
		if fr.xLabels != nil {
			b.f(`<text transform="translate(%s %s) rotate(-30)" text-anchor="end">%s</text>`, n(x+3), n(fr.y0+fr.h+12), esc(label))
			continue
		}
		b.text(x, fr.y0+fr.h+15, "middle", label, "")
	}
	b.text(fr.x0+fr.w/2, fr.y0+fr.h+30, "middle", fr.xTitle, "")
	b.f(`<text transform="translate(12 %s) rotate(-90)" text-anchor="middle">%s</text>`, n(fr.y0+fr.h/2), esc(fr.yTitle))
	b.f(`</g>`)
}

// legendItems draws a legend on the right of the plot area.
func legendItems(b *svgBuf, x, y float64, names []string, dashed []bool) {
	for i, name := range names {
		yy := y + float64(i)*15
		dash := ""
		if dashed != nil && dashed[i] {
			dash = ` stroke-dasharray="4 2"`
		}
		b.f(`<g class="legend"><path d="M%s %sh16" stroke="%s" stroke-width="2"%s/>`, n(x), n(yy), colour(i), dash)
		b.text(x+20, yy+4, "start", name, "")
		b.f(`</g>`)
	}
}

// Line is one series of a line chart: points (X[i], Y[i]) with optional
// error bars ±Err[i]; NaN points are skipped.
type Line struct {
	Name   string
	X, Y   []float64
	Err    []float64
	Dashed bool
	Step   bool // a step function: Y[i] holds from X[i] to X[i+1]
	// Spread, if set, are the values behind Y[i] (one per seed, say),
	// drawn at X[i] as small faint rings (class "spread") under the
	// series' own point, dodged with it, without jitter.
	Spread [][]float64
}

// spreadAt are the finite values of l.Spread at point j.
func (l *Line) spreadAt(j int) []float64 {
	if j >= len(l.Spread) {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(l.Spread[j]), math.IsNaN)
}

// LineChart draws lines over a numeric x axis.
type LineChart struct {
	Title, XTitle, YTitle string
	Lines                 []Line
	YMin, YMax            float64 // fixed y range when YMax > YMin
	XMin, XMax            float64 // fixed x range when XMax > XMin
	// XTicks, if set, are the x axis ticks (e.g. the team sizes run);
	// LogX draws x on a log scale (every x must be > 0); Dodge shifts
	// each series a few pixels sideways, so that equal points stay apart.
	XTicks        []float64
	LogX          bool
	Dodge         bool
	Width, Height int
}

// Figure draws the chart.
func (c LineChart) Figure(id, caption string) Figure {
	var names []string
	for _, l := range c.Lines {
		names = append(names, l.Name)
	}
	lw := legendWidth(names)
	w, h := orInt(c.Width, 410+lw), orInt(c.Height, 260)
	fr := frame{x0: 56, y0: 12, w: float64(w) - 56 - float64(lw), h: float64(h) - 12 - 40, xTitle: c.XTitle, yTitle: c.YTitle}
	fr.xlo, fr.xhi, fr.ylo, fr.yhi = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range c.Lines {
		for i := range l.X {
			if math.IsNaN(l.Y[i]) {
				continue
			}
			e := 0.0
			if l.Err != nil && !math.IsNaN(l.Err[i]) {
				e = l.Err[i]
			}
			fr.xlo, fr.xhi = math.Min(fr.xlo, l.X[i]), math.Max(fr.xhi, l.X[i])
			fr.ylo, fr.yhi = math.Min(fr.ylo, l.Y[i]-e), math.Max(fr.yhi, l.Y[i]+e)
			for _, v := range l.spreadAt(i) {
				fr.ylo, fr.yhi = math.Min(fr.ylo, v), math.Max(fr.yhi, v)
			}
		}
	}
	if math.IsInf(fr.xlo, 0) {
		fr.xlo, fr.xhi, fr.ylo, fr.yhi = 0, 1, 0, 1
	}
	if c.XMax > c.XMin {
		fr.xlo, fr.xhi = c.XMin, c.XMax
	}
	if c.YMax > c.YMin {
		fr.ylo, fr.yhi = c.YMin, c.YMax
	} else {
		fr.ylo = math.Min(fr.ylo, 0)
		if fr.yhi <= fr.ylo {
			fr.yhi = fr.ylo + 1
		}
		fr.yhi += (fr.yhi - fr.ylo) * 0.05
	}
	if fr.xhi <= fr.xlo {
		fr.xlo, fr.xhi = fr.xlo-1, fr.xhi+1
	}
	fr.xTicks, fr.yTicks = niceTicks(fr.xlo, fr.xhi, 6), niceTicks(fr.ylo, fr.yhi, 5)
	if c.XTicks != nil {
		fr.xTicks = c.XTicks
	}
	if c.LogX && fr.xlo > 0 {
		fr.logX = true
		if fr.xhi == fr.xlo {
			fr.xlo, fr.xhi = fr.xlo/2, fr.xhi*2
		}
	}
	var b svgBuf
	b.open(w, h, c.Title)
	fr.axes(&b)
	var dashed []bool
	for i, l := range c.Lines {
		dashed = append(dashed, l.Dashed)
		// Dodge: shift series sideways by a marker's width (dodgeStep) so
		// that equal values stay visible side by side, error bars too.
		dx := 0.0
		if c.Dodge && !l.Step {
			dx = (float64(i) - float64(len(c.Lines)-1)/2) * dodgeStep
		}
		dash := ""
		if l.Dashed {
			dash = ` stroke-dasharray="4 2"`
		}
		b.f(`<g data-series="%s" stroke="%s" fill="%s">`, esc(l.Name), colour(i), colour(i))
		var d strings.Builder
		first := true
		for j := range l.X {
			if math.IsNaN(l.Y[j]) {
				first = true
				continue
			}
			cmd := "L"
			if first {
				cmd = "M"
			}
			first = false
			if l.Step && d.Len() > 0 {
				fmt.Fprintf(&d, "H%s", n(fr.px(l.X[j])))
			}
			fmt.Fprintf(&d, "%s%s %s", cmd, n(fr.px(l.X[j])+dx), n(fr.py(l.Y[j])))
		}
		if l.Step && len(l.X) > 0 {
			fmt.Fprintf(&d, "H%s", n(fr.px(fr.xhi)))
		}
		b.f(`<path d="%s" fill="none" stroke-width="2"%s/>`, d.String(), dash)
		if !l.Step {
			for j := range l.X {
				if math.IsNaN(l.Y[j]) {
					continue
				}
				x, y := fr.px(l.X[j])+dx, fr.py(l.Y[j])
				if l.Err != nil && l.Err[j] > 0 {
					y1, y2 := fr.py(l.Y[j]-l.Err[j]), fr.py(l.Y[j]+l.Err[j])
					b.f(`<path d="M%s %sV%sM%s %sh6M%s %sh6" stroke-width="1"/>`, n(x), n(y1), n(y2), n(x-3), n(y1), n(x-3), n(y2))
				}
				// small open rings over the error bar (which would hide a
				// filled dot), under the mean's point
				for _, v := range l.spreadAt(j) {
					b.f(`<circle class="spread" cx="%s" cy="%s" r="2" fill="#fff" fill-opacity="0.7" stroke-width="1" stroke-opacity="0.6"/>`, n(x), n(fr.py(v)))
				}
				b.f(`<circle cx="%s" cy="%s" r="3"/>`, n(x), n(y))
			}
		}
		b.f(`</g>`)
	}
	legendItems(&b, fr.x0+fr.w+12, fr.y0+8, names, dashed)
	b.f(`</svg>`)
	return Figure{ID: id, Title: c.Title, Caption: caption, Series: len(c.Lines), SVG: template.HTML(b.String())}
}

// dodgeStep is the sideways shift between dodged series, in pixels: the
// diameter of a point's circle, so that equal points touch, not overlap.
const dodgeStep = 6.0

// Bars is one series of a grouped bar chart: a value per group.
type Bars struct {
	Name   string
	Values []float64
}

// BarChart draws grouped vertical bars.
type BarChart struct {
	Title, YTitle string
	Groups        []string
	Series        []Bars
	Width, Height int
}

// Figure draws the chart.
func (c BarChart) Figure(id, caption string) Figure {
	var names []string
	for _, sr := range c.Series {
		names = append(names, sr.Name)
	}
	lw := legendWidth(names)
	w := orInt(c.Width, max(380, 80+lw+len(c.Groups)*(12*len(c.Series)+14)))
	h := orInt(c.Height, 290)
	fr := frame{x0: 56, y0: 12, w: float64(w) - 56 - float64(lw), h: float64(h) - 12 - 80, yTitle: c.YTitle}
	fr.xlo, fr.xhi, fr.ylo, fr.yhi = -0.5, float64(len(c.Groups))-0.5, 0, 0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				fr.yhi = math.Max(fr.yhi, v)
			}
		}
	}
	if fr.yhi == 0 {
		fr.yhi = 1
	}
	fr.yhi *= 1.05
	fr.yTicks = niceTicks(0, fr.yhi, 5)
	fr.xLabels = c.Groups
	for i := range c.Groups {
		fr.xTicks = append(fr.xTicks, float64(i))
	}
	var b svgBuf
	b.open(w, h, c.Title)
	fr.axes(&b)
	slot := fr.w / math.Max(1, float64(len(c.Groups)))
	bw := (slot - 8) / math.Max(1, float64(len(c.Series)))
	for si, s := range c.Series {
		b.f(`<g data-series="%s" fill="%s">`, esc(s.Name), colour(si))
		for gi, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			x := fr.x0 + float64(gi)*slot + 4 + float64(si)*bw
			y := fr.py(v)
			b.f(`<rect x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`, n(x), n(y), n(math.Max(bw-1, 1)), n(fr.y0+fr.h-y), esc(c.Groups[gi]+" · "+s.Name), esc(tickLabel(v)))
		}
		b.f(`</g>`)
	}
	swatches(&b, fr.x0+fr.w+12, fr.y0+8, names)
	b.f(`</svg>`)
	return Figure{ID: id, Title: c.Title, Caption: caption, Series: len(c.Series), SVG: template.HTML(b.String())}
}

// Span is one bar of a Gantt chart: row, interval and kind (its series).
type Span struct {
	Row        int
	Start, End float64
	Kind       int
	Label      string // shown on hover with the interval (an SVG <title>); may be ""
}

// Gantt draws horizontal spans per row, coloured by kind.
type Gantt struct {
	Title, XTitle string
	Rows          []string
	Kinds         []string
	Spans         []Span
	End           float64
}

// Figure draws the chart; a kind without spans is still a (empty) series.
func (g Gantt) Figure(id, caption string) Figure {
	rowH := 12.0
	w := 900
	h := int(float64(len(g.Rows))*rowH) + 12 + 40
	fr := frame{x0: 90, y0: 12, w: float64(w) - 90 - 130, h: float64(len(g.Rows)) * rowH, xTitle: g.XTitle}
	fr.xlo, fr.xhi, fr.ylo, fr.yhi = 0, math.Max(g.End, 1), 0, 1
	fr.xTicks = niceTicks(0, fr.xhi, 8)
	var b svgBuf
	b.open(w, h, g.Title)
	fr.axes(&b)
	b.f(`<g class="rows" fill="#333">`)
	for i, r := range g.Rows {
		b.text(fr.x0-4, fr.y0+float64(i)*rowH+rowH-3, "end", r, ` font-size="9"`)
	}
	b.f(`</g>`)
	for k, kind := range g.Kinds {
		b.f(`<g data-series="%s" fill="%s">`, esc(kind), colour(k))
		for _, s := range g.Spans {
			if s.Kind != k || s.End <= s.Start {
				continue
			}
			x1, x2 := fr.px(s.Start), fr.px(s.End)
			tip := kind + " " + tickLabel(s.Start) + "–" + tickLabel(s.End)
			if s.Label != "" {
				tip = s.Label + ": " + tip
			}
			b.f(`<rect x="%s" y="%s" width="%s" height="%s"><title>%s</title></rect>`, n(x1), n(fr.y0+float64(s.Row)*rowH+1), n(math.Max(x2-x1, 0.3)), n(rowH-2), esc(tip))
		}
		b.f(`</g>`)
	}
	swatches(&b, fr.x0+fr.w+12, fr.y0+8, g.Kinds)
	b.f(`</svg>`)
	return Figure{ID: id, Title: g.Title, Caption: caption, Series: len(g.Kinds), SVG: template.HTML(b.String())}
}

// Heatmap draws a matrix of counts; each row is a series.
type Heatmap struct {
	Title      string
	Rows, Cols []string
	Values     [][]float64
}

// Figure draws the heat map, darker for larger values, with the numbers.
func (m Heatmap) Figure(id, caption string) Figure {
	// Room for the labels, measured as the legend is (about 6 px per
	// character at 10 px): row labels on the left, column labels slanted
	// 35° above, reaching right of their column.
	cell := 44.0
	rowChars, colChars := 0, 0
	for _, r := range m.Rows {
		rowChars = max(rowChars, utf8.RuneCountInString(r))
	}
	for _, c := range m.Cols {
		colChars = max(colChars, utf8.RuneCountInString(c))
	}
	const charW, sin35, cos35 = 6.2, 0.574, 0.819
	x0 := math.Max(60, float64(rowChars)*charW+14)
	y0 := math.Max(30, float64(colChars)*charW*sin35+16)
	right := math.Max(10, float64(colChars)*charW*cos35-cell/2+10)
	w, h := int(math.Ceil(x0+cell*float64(len(m.Cols))+right)), int(math.Ceil(y0+cell*float64(len(m.Rows))+10))
	top := 0.0
	for _, r := range m.Values {
		for _, v := range r {
			top = math.Max(top, v)
		}
	}
	var b svgBuf
	b.open(w, h, m.Title)
	for j, c := range m.Cols {
		b.f(`<text transform="translate(%s %s) rotate(-35)" font-size="10">%s</text>`, n(x0+cell*float64(j)+cell/2), n(y0-6), esc(c))
	}
	for i, r := range m.Rows {
		b.f(`<g data-series="%s">`, esc(r))
		b.text(x0-6, y0+cell*float64(i)+cell/2+4, "end", r, ` font-size="10"`)
		for j, v := range m.Values[i] {
			a := 0.0
			if top > 0 {
				a = v / top
			}
			x, y := x0+cell*float64(j), y0+cell*float64(i)
			b.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="#0072B2" fill-opacity="%s" stroke="#ccc"/>`, n(x), n(y), n(cell), n(cell), n(0.08+0.8*a))
			fill := "#000"
			if a > 0.55 {
				fill = "#fff"
			}
			b.text(x+cell/2, y+cell/2+4, "middle", tickLabel(v), ` fill="`+fill+`"`)
		}
		b.f(`</g>`)
	}
	b.f(`</svg>`)
	return Figure{ID: id, Title: m.Title, Caption: caption, Series: len(m.Rows), SVG: template.HTML(b.String())}
}

// Edge is a directed edge of a Graph, drawn with width by Count; Kind
// is its series.
type Edge struct {
	From, To, Count int
	Kind            int
}

// Graph draws nodes on a circle and directed edges between them.
type Graph struct {
	Title string
	Nodes []string
	Kinds []string
	Edges []Edge
	Size  int
}

// Figure draws the graph; each edge kind is a series.
func (g Graph) Figure(id, caption string) Figure {
	size := orInt(g.Size, 260)
	legendW := 130
	cx, cy, r := float64(size)/2, float64(size)/2, float64(size)/2-28
	pos := make([][2]float64, len(g.Nodes))
	for i := range g.Nodes {
		a := 2*math.Pi*float64(i)/float64(max(len(g.Nodes), 1)) - math.Pi/2
		pos[i] = [2]float64{cx + r*math.Cos(a), cy + r*math.Sin(a)}
	}
	var b svgBuf
	b.open(size+legendW, size, g.Title)
	b.f(`<defs>`)
	for k := range g.Kinds {
		b.f(`<marker id="%s-arrow%d" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0L6 3L0 6z" fill="%s"/></marker>`, esc(id), k, colour(k))
	}
	b.f(`</defs>`)
	for k, kind := range g.Kinds {
		b.f(`<g data-series="%s" stroke="%s" fill="none">`, esc(kind), colour(k))
		for _, e := range g.Edges {
			if e.Kind != k || e.From < 0 || e.To < 0 || e.From >= len(pos) || e.To >= len(pos) || e.From == e.To {
				continue
			}
			p, q := pos[e.From], pos[e.To]
			dx, dy := q[0]-p[0], q[1]-p[1]
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			// stop short of the node circle; bend slightly so that A→B and B→A differ
			sx, sy := p[0]+dx/l*11, p[1]+dy/l*11
			ex, ey := q[0]-dx/l*12, q[1]-dy/l*12
			mx, my := (sx+ex)/2-dy/l*12, (sy+ey)/2+dx/l*12
			wd := math.Min(1+math.Log2(float64(max(e.Count, 1))), 5)
			b.f(`<path d="M%s %sQ%s %s %s %s" stroke-width="%s" marker-end="url(#%s-arrow%d)"><title>%s → %s: %d</title></path>`,
				n(sx), n(sy), n(mx), n(my), n(ex), n(ey), n(wd), esc(id), k, esc(g.Nodes[e.From]), esc(g.Nodes[e.To]), e.Count)
		}
		b.f(`</g>`)
	}
	b.f(`<g class="nodes">`)
	for i, name := range g.Nodes {
		b.f(`<circle cx="%s" cy="%s" r="10" fill="#fff" stroke="#333"/>`, n(pos[i][0]), n(pos[i][1]))
		b.text(pos[i][0], pos[i][1]+4, "middle", name, ` font-size="9"`)
	}
	b.f(`</g>`)
	legendItems(&b, float64(size)+8, 16, g.Kinds, nil)
	b.f(`</svg>`)
	return Figure{ID: id, Title: g.Title, Caption: caption, Series: len(g.Kinds), SVG: template.HTML(b.String())}
}

// legendWidth is the room a legend of these names needs beside a plot
// (about 6.5 px per character at 11 px), within [110, 240].
func legendWidth(names []string) int {
	longest := 0
	for _, s := range names {
		longest = max(longest, utf8.RuneCountInString(s))
	}
	return min(max(110, 40+longest*13/2), 240)
}

func orInt(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}
