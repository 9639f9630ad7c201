package report

import (
	"html/template"
	"math"
	"strings"
)

// Panels draws small multiples of grouped bars: a panel per metric, each
// with its own y axis (metrics of different units and directions never
// share a scale), a bar per series with its interval as a whisker. A
// series is one <g data-series> across the panels.
type Panels struct {
	Title  string
	Series []string
	Panels []Panel
}

// Panel is one metric: a value per series and its interval [Lo, Hi]
// (NaN bounds: no interval, say from one seed). Fixed, when YMax > YMin,
// pins the axis (a rate on [0, 1], so that 0.1 never draws as a full bar).
type Panel struct {
	Title      string
	Values     []float64
	Lo, Hi     []float64
	YMin, YMax float64
}

// Figure draws the panels in one row, the legend on the right.
func (c Panels) Figure(id, caption string) Figure {
	lw := legendWidth(c.Series)
	pw := max(90.0, float64(len(c.Series))*14+62)
	h := 250.0
	w := pw*float64(len(c.Panels)) + float64(lw) + 10
	var b svgBuf
	b.open(int(math.Ceil(w)), int(h), c.Title)
	frames := make([]frame, len(c.Panels))
	for pi, p := range c.Panels {
		fr := frame{x0: float64(pi)*pw + 52, y0: 24, w: pw - 62, h: h - 24 - 40, xlo: 0, xhi: 1}
		fr.ylo, fr.yhi = 0, 0
		for i, v := range p.Values {
			for _, x := range []float64{v, at(p.Lo, i), at(p.Hi, i)} {
				if !math.IsNaN(x) {
					fr.ylo, fr.yhi = math.Min(fr.ylo, x), math.Max(fr.yhi, x)
				}
			}
		}
		if p.YMax > p.YMin {
			fr.ylo, fr.yhi = math.Min(p.YMin, fr.ylo), math.Max(p.YMax, fr.yhi)
		} else {
			if fr.yhi == fr.ylo {
				fr.yhi = fr.ylo + 1
			}
			fr.yhi += (fr.yhi - fr.ylo) * 0.05
		}
		fr.yTicks = niceTicks(fr.ylo, fr.yhi, 4)
		fr.ylo, fr.yhi = math.Min(fr.ylo, fr.yTicks[0]), math.Max(fr.yhi, fr.yTicks[len(fr.yTicks)-1])
		b.f(`<g class="panel">`)
		b.text(fr.x0+fr.w/2, 14, "middle", p.Title, ` font-weight="bold"`)
		fr.axes(&b)
		b.f(`</g>`)
		frames[pi] = fr
	}
	for si, name := range c.Series {
		b.f(`<g data-series="%s" fill="%s" stroke="#222">`, esc(name), colour(si))
		for pi, p := range c.Panels {
			v := at(p.Values, si)
			if math.IsNaN(v) {
				continue
			}
			fr := frames[pi]
			bw := fr.w / math.Max(1, float64(len(c.Series)))
			x := fr.x0 + float64(si)*bw + 1
			y0, y1 := fr.py(math.Max(0, fr.ylo)), fr.py(v)
			top, ht := math.Min(y0, y1), math.Abs(y0-y1)
			lo, hi := at(p.Lo, si), at(p.Hi, si)
			tip := p.Title + " · " + name + ": " + tickLabel(v)
			if math.IsNaN(lo) {
				tip += " (no interval: fewer than two seeds)"
			} else {
				tip += " [" + tickLabel(lo) + ", " + tickLabel(hi) + "]"
			}
			b.f(`<rect x="%s" y="%s" width="%s" height="%s" stroke="none"><title>%s</title></rect>`, n(x), n(top), n(math.Max(bw-2, 1)), n(math.Max(ht, 0.5)), esc(tip))
			if !math.IsNaN(lo) {
				cx := x + (bw-2)/2
				b.f(`<path class="interval" d="M%s %sV%sM%s %sh6M%s %sh6" fill="none"/>`, n(cx), n(fr.py(lo)), n(fr.py(hi)), n(cx-3), n(fr.py(lo)), n(cx-3), n(fr.py(hi)))
			}
		}
		b.f(`</g>`)
	}
	swatches(&b, pw*float64(len(c.Panels))+6, 24, c.Series)
	b.f(`</svg>`)
	return Figure{ID: id, Title: c.Title, Caption: caption, Series: len(c.Series), SVG: template.HTML(b.String())}
}

// at is xs[i], NaN when out of range.
func at(xs []float64, i int) float64 {
	if i < 0 || i >= len(xs) {
		return math.NaN()
	}
	return xs[i]
}

// swatches draws a legend of filled squares (for bars and spans, where a
// line sample would not match what is drawn).
func swatches(b *svgBuf, x, y float64, names []string) {
	for i, name := range names {
		yy := y + float64(i)*16
		b.f(`<g class="legend"><rect x="%s" y="%s" width="12" height="12" fill="%s" stroke="#444" stroke-width="0.5"/>`, n(x), n(yy-6), colour(i))
		b.text(x+17, yy+4, "start", strings.TrimSpace(name), "")
		b.f(`</g>`)
	}
}
