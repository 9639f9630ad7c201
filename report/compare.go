package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/opterr"
)

// Options.Compare, A against B: two suites of the same benchmark on the same cases (two
// models, controllers, frameworks or settings), paired case by case. A
// case's identity is everything that names it except the compared
// dimension: a key (controller, model, framework; for silo the agent)
// whose values differ between A and B is the compared one and is left out
// of the pairing; the rest must match. Each metric gets the paired
// differences A − B with the same statistics as between paradigms
// (Paired).

// SectionCompare is the kind of the comparison's section.
const SectionCompare = "compare"

// compareSections compares the suites in dirs a and b.
func compareSections(a, b string) ([]Section, error) {
	ka, err := Detect(a)
	if err != nil {
		return nil, err
	}
	kb, err := Detect(b)
	if err != nil {
		return nil, err
	}
	if ka != kb {
		return nil, opterr.New("Compare", "%s is a %s suite and %s a %s suite: compare two suites of the same benchmark", a, ka, b, kb)
	}
	if ka == KindDES {
		return compareDES(a, b)
	}
	return compareSilo(a, b)
}

// pairRow is one compared metric over one group of paired cases.
type pairRow struct {
	group  []string
	metric string
	arrow  string
	digits int
	diffs  []float64
	// unequal counts the pairs left out because the two sides did not
	// complete the same work (sameWorkPair).
	unequal int
}

// add pairs a with b: their difference, unless either is missing (NaN: an
// empty cell of the summary), which leaves the pair out.
func (r *pairRow) add(a, b float64) {
	if !math.IsNaN(a) && !math.IsNaN(b) {
		r.diffs = append(r.diffs, a-b)
	}
}

// compareTable turns paired rows into a displayed table and CSV rows.
// Rows whose differences are all 0 (and that left no pair out) are listed
// in the CSV only; Holm's correction runs over every row of the table.
// work: the rows follow the same-work rule (scheduling suites), and the
// CSV has the unequal_work column.
func compareTable(sec *Section, title, caption string, groupHead []string, rows []pairRow, unpairedA, unpairedB int, work bool) {
	unequal, unRows := 0, 0
	for _, r := range rows {
		if r.unequal > 0 {
			unequal += r.unequal
			unRows++
		}
	}
	t := Table{Title: title, Caption: caption, Head: append(append(slices.Clone(groupHead), "metric"), pairedHeadFor(unequal > 0)...)}
	for i := range len(groupHead) + 1 {
		t.Left = append(t.Left, i)
	}
	t.Left = append(t.Left, pairedLeft(len(groupHead)+1, unequal > 0)...)
	sec.CSVHead = append(append(slices.Clone(groupHead), "metric", "n", "mean_diff", "sd_diff", "t_lo", "t_hi", "boot_lo", "boot_hi", "t_excludes_0"), pairedCSVHead...)
	if work {
		sec.CSVHead = append(sec.CSVHead, unequalCSV)
	}
	diffs := make([][]float64, len(rows))
	for i, r := range rows {
		diffs[i] = r.diffs
	}
	stats := pairedAll(diffs)
	ps := make([]float64, len(stats))
	for i := range stats {
		ps[i] = stats[i].P
	}
	holm := Holm(ps)
	var shown []PairedStats
	zero := 0
	for i, r := range rows {
		st := stats[i]
		csv := append(append(slices.Clone(r.group), r.metric, strconv.Itoa(st.N), fcsv(st.Mean), fcsv(st.SD),
			fcsv(st.T.Lo), fcsv(st.T.Hi), fcsv(st.Boot.Lo), fcsv(st.Boot.Hi), strconv.FormatBool(st.Distinguishable())), pairedCSV(st, holm[i])...)
		if work {
			csv = append(csv, strconv.Itoa(r.unequal))
		}
		sec.CSVRows = append(sec.CSVRows, csv)
		if len(r.diffs) > 0 && r.unequal == 0 && !slices.ContainsFunc(r.diffs, func(d float64) bool { return d != 0 }) {
			zero++
			continue
		}
		shown = append(shown, st)
		var row []Cell
		for _, g := range r.group {
			row = append(row, Cell{Text: g})
		}
		name := r.metric
		if r.arrow != "" {
			name += " " + r.arrow
		}
		t.Rows = append(t.Rows, append(append(row, Cell{Text: name}), pairedCells(st, holm[i], r.digits+1, r.unequal, unequal > 0)...))
	}
	if zero > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d comparisons with difference 0 on every pair are left out here; --format csv lists them.", zero))
	}
	if unequal > 0 {
		t.Notes = append(t.Notes, unequalNote(unRows))
	}
	t.Notes = append(t.Notes, pairedNotes(shown)...)
	if unpairedA+unpairedB > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Left out: %d finished cases of A and %d of B without a partner in the other suite.", unpairedA, unpairedB))
	}
	sec.Tables = append(sec.Tables, t)
}

// compared returns, for each key, whether its values differ between the
// two suites (then it is the compared dimension, not part of the pairing).
func compared(valsA, valsB []map[string]bool) []bool {
	out := make([]bool, len(valsA))
	for i := range valsA {
		ka, kb := mapKeys(valsA[i]), mapKeys(valsB[i])
		slices.Sort(ka)
		slices.Sort(kb)
		out[i] = !slices.Equal(ka, kb)
	}
	return out
}

func compareDES(a, b string) ([]Section, error) {
	sa, err := readDES(a)
	if err != nil {
		return nil, err
	}
	sb, err := readDES(b)
	if err != nil {
		return nil, err
	}
	return compareDESSuites(sa, sb, a, b)
}

// compareDESSuites pairs the cases of sa (named a) with those of sb (b).
func compareDESSuites(sa, sb *desSuite, a, b string) ([]Section, error) {
	metrics := harness.SuiteMetrics()
	vals := func(s *desSuite) []map[string]bool {
		m := []map[string]bool{{}, {}, {}}
		for _, g := range s.groups {
			for i := 1; i < 4; i++ {
				m[i-1][g.block[i]] = true
			}
		}
		return m
	}
	diff := compared(vals(sa), vals(sb))
	var dims []string
	for i, d := range diff {
		if d {
			dims = append(dims, blockKeys[i+1])
		}
	}
	key := func(g *desGroup, seed uint64) string {
		parts := []string{g.block[0], g.paradigm, strconv.FormatUint(seed, 10)}
		for i, d := range diff {
			if !d {
				parts = append(parts, g.block[i+1])
			}
		}
		return strings.Join(parts, "\x00")
	}
	type entry struct {
		g *desGroup
		c *desCase
	}
	inB := map[string]entry{}
	for _, g := range sb.groups {
		for _, c := range g.cases {
			inB[key(g, c.seed)] = entry{g, c}
		}
	}
	// Group the pairs by instance × paradigm (× the keys that are equal).
	var order []string
	groups := map[string][][2]*desCase{}
	label := map[string][]string{}
	used := map[string]bool{}
	unA := 0
	for _, g := range sa.groups {
		for _, c := range g.cases {
			k := key(g, c.seed)
			e, ok := inB[k]
			if !ok {
				unA++
				continue
			}
			used[k] = true
			gk := key(g, 0)
			if _, ok := groups[gk]; !ok {
				order = append(order, gk)
				lab := []string{g.block[0], g.paradigm}
				for i, d := range diff {
					if !d {
						lab = append(lab, g.block[i+1])
					}
				}
				label[gk] = lab
			}
			groups[gk] = append(groups[gk], [2]*desCase{c, e.c})
		}
	}
	if len(order) == 0 {
		return nil, opterr.New("Compare", "no case of %s has a partner in %s (same instance, paradigm and seed%s)", a, b, sameNote(diff, blockKeys[1:]))
	}
	head := []string{"instance", "paradigm"}
	for i, d := range diff {
		if !d {
			head = append(head, blockKeys[i+1])
		}
	}
	var rows []pairRow
	cj := cjIndex()
	for _, gk := range order {
		for k, m := range metrics {
			r := pairRow{group: label[gk], metric: m.Key, arrow: m.Arrow(), digits: m.Digits}
			for _, p := range groups[gk] {
				if math.IsNaN(p[0].values[k]) || math.IsNaN(p[1].values[k]) {
					continue
				}
				if !completionMetric(m) && !sameWorkPair(p[0], p[1], cj) {
					r.unequal++
					continue
				}
				r.diffs = append(r.diffs, p[0].values[k]-p[1].values[k])
			}
			rows = append(rows, r)
		}
	}
	sec := Section{Suite: a + " vs " + b, Kind: SectionCompare, Title: "Comparison of two scheduling suites: A = " + a + ", B = " + b}
	compareTable(&sec, "Paired differences A − B", compareCaption("seed", dims), head, rows, unA, len(inB)-len(used), true)
	return []Section{sec}, nil
}

func sameNote(diff []bool, names []string) string {
	var s []string
	for i, d := range diff {
		if !d {
			s = append(s, names[i])
		}
	}
	if len(s) == 0 {
		return ""
	}
	return ", and " + strings.Join(s, ", ")
}

func compareCaption(unit string, dims []string) string {
	what := "the settings of the two suites (no key differs: the suites differ in something the summaries do not name)"
	if len(dims) > 0 {
		what = strings.Join(dims, " and ") + " (the key whose values differ between A and B)"
	}
	return fmt.Sprintf("A and B compared on %s: each row is over the paired cases of its group (same %s), of the differences A − B. "+
		"95%% t interval: mean ± t(0.975, n−1)·sd/√n; bootstrap: percentiles of %d resample means. ≠ 0: the t interval excludes 0. "+
		"The arrow says whether a positive difference favours A (↑) or B (↓).", what, unit, Resamples)
}

func compareSilo(a, b string) ([]Section, error) {
	ra, err := readSiloRuns(a)
	if err != nil {
		return nil, err
	}
	rb, err := readSiloRuns(b)
	if err != nil {
		return nil, err
	}
	return compareSiloRuns(ra, rb, a, b)
}

// compareSiloRuns pairs the runs ra (of a) with rb (of b).
func compareSiloRuns(ra, rb []siloRunRow, a, b string) ([]Section, error) {
	agents := func(rs []siloRunRow) []map[string]bool {
		m := []map[string]bool{{}}
		for _, r := range rs {
			m[0][r.agent] = true
		}
		return m
	}
	diff := compared(agents(ra), agents(rb))
	key := func(r siloRunRow) string {
		parts := []string{r.task, r.level, strconv.Itoa(r.n), r.protocol, r.seed, strconv.FormatBool(r.baseline)}
		if !diff[0] {
			parts = append(parts, r.agent)
		}
		return strings.Join(parts, "\x00")
	}
	inB := map[string]siloRunRow{}
	for _, r := range rb {
		if !r.baseline {
			inB[key(r)] = r
		}
	}
	type gkey struct {
		level    string
		n        int
		protocol string
		agent    string
	}
	var order []gkey
	pairs := map[gkey][][2]siloRunRow{}
	used := map[string]bool{}
	unA := 0
	for _, r := range ra {
		if r.baseline {
			continue
		}
		p, ok := inB[key(r)]
		if !ok {
			unA++
			continue
		}
		used[key(r)] = true
		g := gkey{r.level, r.n, r.protocol, ""}
		if !diff[0] {
			g.agent = r.agent
		}
		if _, ok := pairs[g]; !ok {
			order = append(order, g)
		}
		pairs[g] = append(pairs[g], [2]siloRunRow{r, p})
	}
	if len(order) == 0 {
		return nil, opterr.New("Compare", "no run of %s has a partner in %s (same task, N, protocol and seed)", a, b)
	}
	slices.SortStableFunc(order, func(x, y gkey) int {
		if c := levels[x.level] - levels[y.level]; c != 0 {
			return c
		}
		return x.n - y.n
	})
	head := []string{"level", "N", "protocol"}
	if !diff[0] {
		head = append(head, "agent")
	}
	metrics := siloPairMetrics
	var rows []pairRow
	for _, g := range order {
		lab := []string{g.level, strconv.Itoa(g.n), g.protocol}
		if !diff[0] {
			lab = append(lab, g.agent)
		}
		for _, m := range metrics {
			r := pairRow{group: lab, metric: m.name, arrow: m.arrow, digits: 3}
			for _, p := range pairs[g] {
				r.add(m.get(p[0]), m.get(p[1]))
			}
			if len(r.diffs) > 0 {
				rows = append(rows, r)
			}
		}
	}
	var dims []string
	if diff[0] {
		dims = []string{"agent"}
	}
	sec := Section{Suite: a + " vs " + b, Kind: SectionCompare, Title: "Comparison of two information-silo suites: A = " + a + ", B = " + b}
	compareTable(&sec, "Paired differences A − B", compareCaption("task and seed", dims), head, rows, unA, len(inB)-len(used), false)
	return []Section{sec}, nil
}

// siloPairMetrics are the silo run metrics the paired tables compare.
var siloPairMetrics = []struct {
	name, arrow string
	get         func(siloRunRow) float64
}{{"S", "↑", func(r siloRunRow) float64 { return r.S }}, {"success", "↑", func(r siloRunRow) float64 { return r.success }},
	{"P", "↑", func(r siloRunRow) float64 { return r.P }}, {"D", "", func(r siloRunRow) float64 { return r.D }},
	{"tokens", "↓", func(r siloRunRow) float64 { return r.tokens }}}
