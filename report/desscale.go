package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/inputfile"
)

// The scaling study of a des suite whose instances have plants of two
// sizes or more (docs/scaling.md): each metric, decisions and messages per
// job and the wall time per episode against plant size (cells), a line per
// paradigm, a figure per controller × model × framework. A suite of one
// plant size has none of it.

// desScale is what a suite holds about plant sizes.
type desScale struct {
	cells   map[string]int     // instance label → cells
	sizes   []int              // distinct, ascending
	unknown []string           // instances whose size could not be told
	wall    map[string]float64 // case id → seconds (episode_timing.json)
	noWall  int                // finished cases without episode_timing.json
	lines   []scaleLine
}

// scaleLine is one paradigm of one block (controller, model, framework):
// its finished cases by plant size.
type scaleLine struct {
	block    [3]string
	paradigm string
	points   []scalePoint // ascending size; sizes without a finished case left out
}

// scalePoint is one size of a line: the instances of that size and their
// finished cases.
type scalePoint struct {
	cells     int
	instances []string
	cases     []*desCase
}

// maxScaleProbes bounds the case directories read to find an instance's
// size (its instance.json) before its label is read instead.
const maxScaleProbes = 3

// labelCells reads the cells from an instance label A<a>C<c>-<n> (the
// reported instances) or gen:A<a>C<c>[J<j>] (generated plants).
var labelCells = regexp.MustCompile(`^(?:gen:)?A[0-9]+C([0-9]+)(?:J[0-9]+)?(?:-[0-9]+)?$`)

// readScale finds the plant size of each instance of s, from the
// instance.json of one of its cases (or, with none, from its label), and
// returns nil when fewer than two sizes are known. Then it also reads
// each finished case's wall time (episode_timing.json; cases run before
// it was written have none).
func readScale(s *desSuite) (*desScale, error) {
	sc := &desScale{cells: map[string]int{}}
	var labels distinct[string]
	byInst := map[string][]*desCase{}
	for _, g := range s.groups {
		labels.add(g.block[0])
		byInst[g.block[0]] = append(byInst[g.block[0]], g.cases...)
	}
	var sizes distinct[int]
	for _, l := range labels.list {
		n, err := instanceCells(s.dir, l, byInst[l])
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			sc.unknown = append(sc.unknown, l)
			continue
		}
		sc.cells[l] = n
		sizes.add(n)
	}
	if len(sizes.list) < 2 {
		return nil, nil
	}
	sc.sizes = slices.Sorted(slices.Values(sizes.list))
	sc.wall = map[string]float64{}
	for _, g := range s.groups {
		if _, ok := sc.cells[g.block[0]]; !ok {
			continue
		}
		for _, c := range g.cases {
			w, ok, err := readWall(filepath.Join(s.dir, "cases", c.id, harness.FileEpisodeTiming))
			if err != nil {
				return nil, err
			}
			if ok {
				sc.wall[c.id] = w
			} else {
				sc.noWall++
			}
		}
	}
	sc.lines = scaleLines(s, sc)
	return sc, nil
}

// instanceCells is the number of cells of instance label: from the
// instance.json of the first of its cases that has one, else from the
// label; 0 when neither tells.
func instanceCells(dir, label string, cases []*desCase) (int, error) {
	for _, c := range cases[:min(len(cases), maxScaleProbes)] {
		cells, err := instanceMachines(filepath.Join(dir, "cases", c.id, fileInstance))
		if err != nil {
			return 0, err
		}
		if len(cells) > 0 {
			return len(cells), nil
		}
	}
	if m := labelCells.FindStringSubmatch(label); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n, nil
		}
	}
	return 0, nil
}

// readWall reads a case's episode_timing.json; ok is false when the case
// has none.
func readWall(path string) (wall float64, ok bool, err error) {
	t, ok, err := readEpisodeTiming(path)
	return t.WallSeconds, ok, err
}

// readEpisodeTiming reads and checks a case's episode_timing.json; ok is
// false when the case has none (run before it was written).
func readEpisodeTiming(path string) (t harness.EpisodeTiming, ok bool, err error) {
	b, err := inputfile.Read(path, "episode timing", 1<<16)
	if errors.Is(err, fs.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, false, fmt.Errorf("%s: %v", path, err)
	}
	if math.IsNaN(t.WallSeconds) || t.WallSeconds < 0 {
		return t, false, fmt.Errorf("%s: wall_s %v is not a duration", path, t.WallSeconds)
	}
	for role, tm := range t.ByRole {
		if tm.Answers < 0 || tm.CachedAnswers < 0 || tm.Retries < 0 || !(tm.LatencyMSSum >= 0) || !(tm.LatencyMSMax >= 0) {
			return t, false, fmt.Errorf("%s: by_role.%s: negative counts or times", path, role)
		}
	}
	return t, true, nil
}

// scaleLines gathers the finished cases of every block × paradigm by plant
// size, in the suite's order of blocks and paradigms.
func scaleLines(s *desSuite, sc *desScale) []scaleLine {
	var blocks distinct[[3]string]
	var paradigms distinct[string]
	type key struct {
		block    [3]string
		paradigm string
		cells    int
	}
	points := map[key]*scalePoint{}
	for _, g := range s.groups {
		n, ok := sc.cells[g.block[0]]
		if !ok || len(g.cases) == 0 {
			continue
		}
		b := [3]string(g.block[1:])
		blocks.add(b)
		paradigms.add(g.paradigm)
		k := key{b, g.paradigm, n}
		p := points[k]
		if p == nil {
			p = &scalePoint{cells: n}
			points[k] = p
		}
		p.instances = append(p.instances, g.block[0])
		p.cases = append(p.cases, g.cases...)
	}
	var out []scaleLine
	for _, b := range blocks.list {
		for _, m := range paradigms.list {
			l := scaleLine{block: b, paradigm: m}
			for _, n := range sc.sizes {
				if p := points[key{b, m, n}]; p != nil {
					l.points = append(l.points, *p)
				}
			}
			if len(l.points) > 0 {
				out = append(out, l)
			}
		}
	}
	return out
}

// scaleStat is a point's statistic of f: the mean over the cases where f
// is a number, and the sample standard deviation over seeds of the
// per-seed mean (the instances of that size averaged within a seed; 0
// with one seed), as the silo figures' error bars over seeds.
func scaleStat(cases []*desCase, f func(*desCase) float64) (avg, sd float64, n int) {
	bySeed := map[uint64][]float64{}
	var all []float64
	for _, c := range cases {
		if v := f(c); !math.IsNaN(v) {
			bySeed[c.seed] = append(bySeed[c.seed], v)
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	var perSeed []float64
	for _, seed := range slices.Sorted(maps.Keys(bySeed)) {
		perSeed = append(perSeed, mean(bySeed[seed]))
	}
	return mean(all), sampleSD(perSeed), len(all)
}

// scaleValue is one quantity drawn against plant size.
type scaleValue struct {
	key     string // the metric's key, or the CSV column's stem
	title   string // the figure's title, before "against plant size"
	ytitle  string
	caption string
	family  string // a metric's family; "" for the cost quantities
	digits  int
	noFig   bool // in the tables only
	f       func(*desCase) float64
}

// scaleValues are the 15 metrics, then decisions and messages per job and
// the wall time per episode.
func (sc *desScale) scaleValues() []scaleValue {
	metrics := harness.SuiteMetrics()
	idx := func(key string) int {
		return slices.IndexFunc(metrics, func(m harness.SuiteMetric) bool { return m.Key == key })
	}
	ds, cm, cj, dj := idx("G_ds"), idx("G_cm"), idx("G_cj"), idx("G_dj")
	jobs := func(c *desCase) float64 { return c.values[cj] + c.values[dj] }
	var out []scaleValue
	for k, m := range metrics {
		unit := m.Unit
		if unit == "time" {
			unit = "time units"
		}
		out = append(out, scaleValue{key: m.Key, title: m.Key + " " + m.Arrow(), ytitle: m.Key + " (" + unit + ")",
			caption: m.Key + ": " + m.Meaning + ".", family: m.Family, digits: m.Digits,
			f: func(c *desCase) float64 { return c.values[k] }})
	}
	return append(out,
		scaleValue{key: "jobs", title: "Jobs", digits: 1, noFig: true, f: jobs},
		scaleValue{key: "decisions_per_job", title: "Decisions per job", ytitle: "G_ds / jobs", digits: 2,
			caption: "Decision steps (G_ds) per job of the instance (jobs = G_cj + G_dj: completed and unfinished).",
			f:       func(c *desCase) float64 { return c.values[ds] / jobs(c) }},
		scaleValue{key: "messages_per_job", title: "Messages per job", ytitle: "G_cm / jobs", digits: 2,
			caption: "Coordination messages (G_cm) per job of the instance (jobs = G_cj + G_dj).",
			f:       func(c *desCase) float64 { return c.values[cm] / jobs(c) }},
		scaleValue{key: "wall_ms", title: "Wall time per episode", ytitle: "ms", digits: 1,
			caption: "Wall-clock time of one episode (episode_timing.json of each case): the machine's, at its load and with the suite's workers; not a result.",
			f: func(c *desCase) float64 {
				if w, ok := sc.wall[c.id]; ok {
					return w * 1000
				}
				return math.NaN()
			}},
	)
}

// blockLabel names a block (controller, model, framework) by its non-empty
// parts.
func blockLabel(b [3]string) string {
	var parts []string
	for _, p := range b {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// blocks are the suite's blocks (controller, model, framework) with a
// line, in order.
func (sc *desScale) blocks() [][3]string {
	var d distinct[[3]string]
	for _, l := range sc.lines {
		d.add(l.block)
	}
	return d.list
}

// sizesNote names the instances of each plant size.
func (sc *desScale) sizesNote() string {
	var parts []string
	for _, n := range sc.sizes {
		var ls []string
		for l, c := range sc.cells {
			if c == n {
				ls = append(ls, l)
			}
		}
		slices.Sort(ls)
		parts = append(parts, fmt.Sprintf("%d cells: %s", n, strings.Join(ls, ", ")))
	}
	s := "Plant sizes: " + strings.Join(parts, "; ") + "."
	if len(sc.unknown) > 0 {
		s += " Left out, size unknown (no instance.json in their cases, no A<areas>C<cells> name): " + strings.Join(sc.unknown, ", ") + "."
	}
	return s
}

// scaleErrNote says what a point and its error bar are.
const scaleErrNote = " Points: the mean over the finished cases at that size (its instances × seeds); error bars: ± one sample standard deviation over seeds of the per-seed mean (instances of one size averaged within a seed; none with one seed)."

// figures are, for one block, a figure per metric (those that are 0 in
// every case of the block are left out and named in skipped), then
// decisions and messages per job and the wall time per episode (when some
// case has one).
func (sc *desScale) figures(id string, b [3]string, label string) (figs []Figure, skipped []string) {
	for vi, v := range sc.scaleValues() {
		if v.noFig {
			continue
		}
		var lines []Line
		nonzero := false
		for _, l := range sc.lines {
			if l.block != b {
				continue
			}
			ln := Line{Name: l.paradigm}
			for _, p := range l.points {
				m, sd, n := scaleStat(p.cases, v.f)
				if n == 0 {
					continue
				}
				nonzero = nonzero || m != 0 || sd != 0
				ln.X, ln.Y, ln.Err = append(ln.X, float64(p.cells)), append(ln.Y, m), append(ln.Err, sd)
			}
			if len(ln.X) > 0 {
				lines = append(lines, ln)
			}
		}
		if len(lines) == 0 {
			continue
		}
		if !nonzero && v.family != "" {
			skipped = append(skipped, v.key)
			continue
		}
		title := v.title + " against plant size"
		if label != "" {
			title += ", " + label
		}
		c := nAxis(LineChart{Title: title, XTitle: "plant size (cells)", YTitle: v.ytitle, Lines: lines})
		figs = append(figs, c.Figure(fmt.Sprintf("%s-v%d", id, vi), v.caption+scaleErrNote))
	}
	return figs, skipped
}

// scalingBlock is the page's block of the scaling figures and tables.
func (sc *desScale) scalingBlock(id string, sec Section) *block {
	paras := []string{"How each metric, the decisions and messages per job and the wall time per episode change with the plant's size, a line per paradigm " +
		"(a figure per controller when the suite has several). Generated plants scale the jobs with the cells, so counts such as G_cj, G_ds or G_cm grow by construction: " +
		"read them against the per-job figures. " + sc.sizesNote()}
	sb := &block{ID: id + "-scaling", Heading: "Against plant size", Level: 3, Paras: paras}
	blocks := sc.blocks()
	for bi, b := range blocks {
		label := ""
		if len(blocks) > 1 {
			label = blockLabel(b)
		}
		figs, skipped := sc.figures(fmt.Sprintf("%s-scale%d", id, bi), b, label)
		target := sb
		if len(blocks) > 1 {
			target = &block{ID: fmt.Sprintf("%s-scaling-%d", id, bi), Heading: blockLabel(b), Level: 4}
			sb.Children = append(sb.Children, target)
		}
		target.Figures = append(target.Figures, figs...)
		if len(skipped) > 0 {
			target.Paras = append(target.Paras, "0 in every case, no figure: "+strings.Join(skipped, ", ")+".")
		}
	}
	tb := &block{ID: id + "-scaling-tables", Heading: "Against plant size: tables", Level: 4}
	for _, t := range sec.Tables {
		tb.Tables = append(tb.Tables, htmlTable(t))
	}
	sb.Children = append(sb.Children, tb)
	return sb
}

// scalingSection is the scaling tables: a table per metric family and one
// of the cost (jobs, decisions and messages per job, wall time), a row per
// block × paradigm × plant size.
func (s *desSuite) scalingSection(sc *desScale) Section {
	sec := Section{Suite: s.dir, Kind: SectionScaling, Title: desTitle(s.dir) + ": against plant size"}
	var shown []int // block keys 1..3 with a value
	for _, k := range s.shownBlockKeys() {
		if k > 0 {
			shown = append(shown, k-1)
		}
	}
	values := sc.scaleValues()
	head := func() (h []string, left []int) {
		for _, k := range shown {
			left = append(left, len(h))
			h = append(h, blockKeys[k+1])
		}
		left = append(left, len(h), len(h)+2)
		return append(h, "paradigm", "cells", "instances", "n"), left
	}
	row := func(l scaleLine, p scalePoint) []Cell {
		var r []Cell
		for _, k := range shown {
			r = append(r, Cell{Text: l.block[k]})
		}
		return append(r, Cell{Text: l.paradigm}, Cell{Text: strconv.Itoa(p.cells)}, Cell{Text: strings.Join(p.instances, ", ")}, Cell{Text: strconv.Itoa(len(p.cases))})
	}
	cell := func(v scaleValue, p scalePoint) Cell {
		m, sd, n := scaleStat(p.cases, v.f)
		if n == 0 {
			return Cell{Text: "–"}
		}
		return Cell{Text: fnum(m, v.digits) + " ± " + fnum(sd, v.digits)}
	}
	families := append(harness.MetricFamilies(), "")
	for fi, fam := range families {
		t := Table{Title: "Against plant size: " + cmp.Or(fam, "cost")}
		t.Head, t.Left = head()
		var vs []scaleValue
		for _, v := range values {
			if v.family == fam {
				vs = append(vs, v)
				switch {
				case v.family != "":
					t.Head = append(t.Head, v.title)
				case v.key == "wall_ms":
					t.Head = append(t.Head, "wall ms / episode")
				default:
					t.Head = append(t.Head, strings.ToLower(v.title))
				}
			}
		}
		for _, l := range sc.lines {
			for _, p := range l.points {
				r := row(l, p)
				for _, v := range vs {
					r = append(r, cell(v, p))
				}
				t.Rows = append(t.Rows, r)
			}
		}
		switch {
		case fi == 0:
			t.Caption = "Mean ± sample standard deviation over seeds of the per-seed mean (instances of one size averaged within a seed), over the n finished cases of each block × paradigm × plant size. ↑ higher is better, ↓ lower. " + sc.sizesNote()
		case fam == "":
			t.Caption = "Jobs = G_cj + G_dj. Wall time: episode_timing.json of each case, the machine's at its load (measure with --workers 1 for comparable times); not a result."
			if sc.noWall > 0 {
				t.Notes = append(t.Notes, fmt.Sprintf("%d finished cases have no episode_timing.json (run before it was written): left out of the wall time.", sc.noWall))
			}
		}
		sec.Tables = append(sec.Tables, t)
	}
	sec.CSVHead = []string{"controller", "model", "framework", "paradigm", "cells", "instances", "n"}
	for _, v := range values {
		sec.CSVHead = append(sec.CSVHead, v.key+"_mean", v.key+"_sd")
	}
	sec.CSVHead = append(sec.CSVHead, "wall_n")
	wall := values[len(values)-1]
	for _, l := range sc.lines {
		for _, p := range l.points {
			r := append(l.block[:len(l.block):len(l.block)], l.paradigm, strconv.Itoa(p.cells), strings.Join(p.instances, " "), strconv.Itoa(len(p.cases)))
			for _, v := range values {
				m, sd, _ := scaleStat(p.cases, v.f)
				r = append(r, fcsv(m), fcsv(sd))
			}
			_, _, n := scaleStat(p.cases, wall.f)
			sec.CSVRows = append(sec.CSVRows, append(r, strconv.Itoa(n)))
		}
	}
	return sec
}
