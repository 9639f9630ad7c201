package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// desCase is one finished or failed case of suite_summary.csv.
type desCase struct {
	id       string    // case_id: the directory under cases/
	block    [4]string // instance, controller, model, framework
	paradigm string
	seed     uint64
	failed   bool
	// complete: the episode ended with status done (every job finished);
	// any other status (deadlock, time_limit, ...) left work undone.
	complete bool
	values   []float64 // in harness.SuiteMetrics order; NaN for an empty cell
}

// desGroup is one row of the matrix: the cases of one block and paradigm.
type desGroup struct {
	block    [4]string
	paradigm string
	cases    []*desCase // finished cases, by seed
	failed   int
}

// incomplete is how many of the group's finished cases left work undone.
func (g *desGroup) incomplete() int {
	k := 0
	for _, c := range g.cases {
		if !c.complete {
			k++
		}
	}
	return k
}

// completion is the text of the "complete" column: complete episodes of
// finished ones, flagged when some left work undone.
func (g *desGroup) completion() string {
	s := strconv.Itoa(len(g.cases)-g.incomplete()) + "/" + strconv.Itoa(len(g.cases))
	if g.incomplete() > 0 {
		s += " " + incompleteMark
	}
	return s
}

// incompleteMark flags a group whose means include an episode that left
// work undone (deadlock, truncation).
const incompleteMark = "⚠"

// desSuite is a scheduling suite as read from its directory.
type desSuite struct {
	dir    string
	cfg    desConfig
	groups []*desGroup // in table order
	failed int
	cases  int
}

// desConfig is the part of suite.json (harness.SuiteConfig) the report
// uses: the order of instances, paradigms and controllers.
type desConfig struct {
	Instances []struct {
		Label string `json:"label"`
	} `json:"instances"`
	Paradigms []struct {
		ID string `json:"mode_id"`
	} `json:"paradigms"`
	Controllers []string `json:"controllers"`
}

// blockKeys name the block's columns, then the paradigm.
var blockKeys = []string{"instance", "controller", "model", "framework"}

// readDES reads a des suite directory: suite.json for the order of
// instances, paradigms and controllers, suite_summary.csv for the cases.
func readDES(dir string) (*desSuite, error) {
	metrics := harness.SuiteMetrics()
	s := &desSuite{dir: dir}
	cfgPath := filepath.Join(dir, harness.FileSuiteConfig)
	b, err := readJSONFile(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("%s: a des suite directory needs its %s: %w", dir, harness.FileSuiteConfig, err)
	}
	if err := json.Unmarshal(b, &s.cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", cfgPath, err)
	}
	sumPath := filepath.Join(dir, harness.FileSuiteSummary)
	need := append([]string{"case_id", "instance", "paradigm", "controller", "model", "framework", "seed", "status"}, metricKeys()...)
	f, err := readCSV(sumPath, need)
	if err != nil {
		return nil, err
	}
	rank := make([]map[string]int, len(blockKeys)+1) // per block key, then paradigm
	for i := range rank {
		rank[i] = map[string]int{}
	}
	add := func(i int, v string) {
		if _, ok := rank[i][v]; !ok {
			rank[i][v] = len(rank[i])
		}
	}
	for _, si := range s.cfg.Instances {
		add(0, si.Label)
	}
	for _, c := range s.cfg.Controllers {
		add(1, c)
	}
	for _, m := range s.cfg.Paradigms {
		add(4, m.ID)
	}
	seen := map[string]int{} // case identity → line
	index := map[string]*desGroup{}
	for _, r := range f.rows {
		c := &desCase{paradigm: f.get(r, "paradigm"), id: f.get(r, "case_id")}
		for i, k := range blockKeys {
			c.block[i] = f.get(r, k)
			add(i, c.block[i])
		}
		add(4, c.paradigm)
		c.seed, err = strconv.ParseUint(f.get(r, "seed"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column seed: %q is not a seed (a whole number)", sumPath, r.line, f.get(r, "seed"))
		}
		id := strings.Join(append(c.block[:], c.paradigm, f.get(r, "seed")), "\x00")
		if l, ok := seen[id]; ok {
			return nil, fmt.Errorf("%s:%d: the case of line %d again (same instance, controller, model, framework, paradigm and seed)", sumPath, r.line, l)
		}
		seen[id] = r.line
		gid := strings.Join(append(c.block[:], c.paradigm), "\x00")
		g, ok := index[gid]
		if !ok {
			g = &desGroup{block: c.block, paradigm: c.paradigm}
			index[gid] = g
			s.groups = append(s.groups, g)
		}
		s.cases++
		if f.get(r, "status") == harness.StatusError {
			g.failed++
			s.failed++
			continue
		}
		c.complete = f.get(r, "status") == string(factory.Done)
		for _, m := range metrics {
			v, err := f.float(r, m.Key, true)
			if err != nil {
				return nil, err
			}
			c.values = append(c.values, v)
		}
		g.cases = append(g.cases, c)
	}
	if s.cases == 0 {
		return nil, fmt.Errorf("%s: no case has finished yet (the suite wrote no row)", sumPath)
	}
	for _, g := range s.groups {
		slices.SortFunc(g.cases, func(a, b *desCase) int { return cmp.Compare(a.seed, b.seed) })
	}
	slices.SortStableFunc(s.groups, func(a, b *desGroup) int {
		for i := range blockKeys {
			if c := cmp.Compare(rank[i][a.block[i]], rank[i][b.block[i]]); c != 0 {
				return c
			}
		}
		return cmp.Compare(rank[4][a.paradigm], rank[4][b.paradigm])
	})
	return s, nil
}

func metricKeys() []string {
	var ks []string
	for _, m := range harness.SuiteMetrics() {
		ks = append(ks, m.Key)
	}
	return ks
}

// meanStd is the mean and sample standard deviation (0 for one value) of
// the non-NaN values of metric k over the group's cases.
func (g *desGroup) meanStd(k int) (mean, std float64, n int) {
	var xs []float64
	for _, c := range g.cases {
		if !math.IsNaN(c.values[k]) {
			xs = append(xs, c.values[k])
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) == 1 {
		return mean, 0, 1
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1)), len(xs)
}

// blocks splits the groups into runs of the same block.
func (s *desSuite) blocks() [][]*desGroup {
	var out [][]*desGroup
	for i, g := range s.groups {
		if i == 0 || g.block != s.groups[i-1].block {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], g)
	}
	return out
}

// shownBlockKeys are the block keys with a value in some row (model and
// framework are empty for built-in controllers).
func (s *desSuite) shownBlockKeys() []int {
	var ks []int
	for i := range blockKeys {
		if slices.ContainsFunc(s.groups, func(g *desGroup) bool { return g.block[i] != "" }) {
			ks = append(ks, i)
		}
	}
	return ks
}

// completionMetric reports whether metric m measures the work left undone
// itself (G_cj and the robustness family): it is ranked over every group.
// Every other metric shrinks when less work is done (a deadlocked episode
// has a short makespan, little tardiness counted, little energy, few
// decisions), so it is ranked only among groups that did the same work
// (sameWork).
func completionMetric(m harness.SuiteMetric) bool {
	return m.Key == "G_cj" || m.Family == "robustness"
}

// sameWork marks the groups of a block that did the same work: a finished
// case on every seed any group of the block finished, each completing the
// most jobs (G_cj) any group completed on that seed. When some group
// finished every episode (status done), these are the groups that did.
func sameWork(blk []*desGroup) map[*desGroup]bool {
	cj := cjIndex()
	most := map[uint64]float64{}
	for _, g := range blk {
		for _, c := range g.cases {
			if v, ok := most[c.seed]; !ok || c.values[cj] > v || math.IsNaN(v) {
				most[c.seed] = c.values[cj]
			}
		}
	}
	out := map[*desGroup]bool{}
	for _, g := range blk {
		ok := len(g.cases) == len(most)
		for _, c := range g.cases {
			ok = ok && c.values[cj] == most[c.seed]
		}
		out[g] = ok
	}
	return out
}

// sameWorkPair reports whether the cases a and b of one seed completed the
// same work: both finished every job (status done) or both stopped early,
// with the same jobs completed (G_cj, column cj; an empty G_cj is not
// known to be the same). A paired difference of any metric but a
// completion one (completionMetric) is taken only on such pairs.
func sameWorkPair(a, b *desCase, cj int) bool {
	return a.complete == b.complete && a.values[cj] == b.values[cj]
}

// cjIndex is the index of G_cj in harness.SuiteMetrics.
func cjIndex() int {
	return slices.IndexFunc(harness.SuiteMetrics(), func(m harness.SuiteMetric) bool { return m.Key == "G_cj" })
}

// best marks, per block and metric, the rows holding the best mean; none
// when every ranked row of the block has the same mean. A completion
// metric ranks every row; any other ranks only the rows of sameWork, so
// that no mean lowered by an unfinished episode is marked best.
func (s *desSuite) best() map[*desGroup][]bool {
	metrics := harness.SuiteMetrics()
	out := map[*desGroup][]bool{}
	for _, g := range s.groups {
		out[g] = make([]bool, len(metrics))
	}
	for _, blk := range s.blocks() {
		same := sameWork(blk)
		for k, m := range metrics {
			ranked := blk
			if !completionMetric(m) {
				ranked = slices.DeleteFunc(slices.Clone(blk), func(g *desGroup) bool { return !same[g] })
			}
			best, set, allSame, first := 0.0, false, true, math.NaN()
			for _, g := range ranked {
				v, _, n := g.meanStd(k)
				if n == 0 {
					continue
				}
				if math.IsNaN(first) {
					first = v
				} else if v != first {
					allSame = false
				}
				if !set || (m.HigherBetter && v > best) || (!m.HigherBetter && v < best) {
					best, set = v, true
				}
			}
			if !set || (allSame && len(ranked) == len(blk)) {
				continue
			}
			for _, g := range ranked {
				if v, _, n := g.meanStd(k); n > 0 && v == best {
					out[g][k] = true
				}
			}
		}
	}
	return out
}

func desTitle(dir string) string { return dir + ": scheduling suite (des suite)" }

// matrixSection is the paradigm matrix: one table per metric family, a
// row per instance × controller × model × framework × paradigm, then the
// legend.
func (s *desSuite) matrixSection() Section {
	metrics := harness.SuiteMetrics()
	sec := Section{Suite: s.dir, Kind: SectionMatrix, Title: desTitle(s.dir) + ": paradigm matrix"}
	shown, best := s.shownBlockKeys(), s.best()
	caption := "Mean ± sample standard deviation over the n finished cases (one per seed) of each " +
		"instance × controller × model × framework × paradigm (columns empty in every row are left out). " +
		"complete: the episodes that finished every job (status done) of the n; " + incompleteMark + " flags a row whose means include " +
		"an episode that left work undone (deadlock, time limit, ...), where a short makespan or little tardiness can mean little work done. " +
		"Bold: the best mean of its column within its instance × controller × model × framework block " +
		"(every tied row; none when all rows of the block are equal). G_cj and the robustness metrics rank every row; " +
		"the other metrics rank only the rows that did the same work: a finished case on every seed of the block, each completing " +
		"the most jobs of that seed (when a row finished every episode, the rows that did). ↑ higher is better, ↓ lower."
	if s.failed > 0 {
		caption += fmt.Sprintf(" %d of %d cases failed and are left out.", s.failed, s.cases)
	}
	for fi, fam := range harness.MetricFamilies() {
		t := Table{Title: "Paradigm matrix: " + fam}
		if fi == 0 {
			t.Caption = caption
		}
		for _, i := range shown {
			t.Left = append(t.Left, len(t.Head))
			t.Head = append(t.Head, blockKeys[i])
		}
		t.Left = append(t.Left, len(t.Head))
		t.Head = append(t.Head, "paradigm", "n", "complete")
		var ks []int
		for k, m := range metrics {
			if m.Family == fam {
				ks = append(ks, k)
				t.Head = append(t.Head, m.Key+" "+m.Arrow())
			}
		}
		for _, g := range s.groups {
			var row []Cell
			for _, i := range shown {
				row = append(row, Cell{Text: g.block[i]})
			}
			row = append(row, Cell{Text: g.paradigm}, Cell{Text: strconv.Itoa(len(g.cases))}, Cell{Text: g.completion()})
			for _, k := range ks {
				mean, std, n := g.meanStd(k)
				text := "–"
				if n > 0 {
					d := metrics[k].Digits
					text = fnum(mean, d) + " ± " + fnum(std, d)
				}
				row = append(row, Cell{Text: text, Best: best[g][k]})
			}
			t.Rows = append(t.Rows, row)
		}
		sec.Tables = append(sec.Tables, t)
	}
	legend := Table{Title: "Legend", Head: []string{"metric", "family", "better", "unit", "meaning"}, Left: []int{0, 1, 2, 3, 4}}
	for _, m := range metrics {
		better := "↓ lower"
		if m.HigherBetter {
			better = "↑ higher"
		}
		legend.Rows = append(legend.Rows, []Cell{{Text: m.Key}, {Text: m.Family}, {Text: better}, {Text: m.Unit}, {Text: m.Meaning}})
	}
	legend.Notes = []string{"docs/metrics.md defines each metric; unit \"time\" is each instance's time unit (its time_unit_s)."}
	sec.Tables = append(sec.Tables, legend)

	sec.CSVHead = append(slices.Clone(blockKeys), "paradigm", "n", "failed", "complete", "same_work")
	for _, m := range metrics {
		sec.CSVHead = append(sec.CSVHead, m.Key+"_mean", m.Key+"_std", m.Key+"_best")
	}
	same := map[*desGroup]bool{}
	for _, blk := range s.blocks() {
		maps.Copy(same, sameWork(blk))
	}
	for _, g := range s.groups {
		row := append(g.block[:len(g.block):len(g.block)], g.paradigm, strconv.Itoa(len(g.cases)), strconv.Itoa(g.failed),
			strconv.Itoa(len(g.cases)-g.incomplete()), strconv.FormatBool(same[g]))
		for k := range metrics {
			mean, std, _ := g.meanStd(k)
			row = append(row, fcsv(mean), fcsv(std), strconv.FormatBool(best[g][k]))
		}
		sec.CSVRows = append(sec.CSVRows, row)
	}
	return sec
}

// Comparison is the paired comparison of two paradigms of one block on
// one metric: the differences a − b over the seeds where both finished
// and, unless the metric is a completion one, completed the same work
// (sameWorkPair).
type Comparison struct {
	Block  [4]string // instance, controller, model, framework
	A, B   string    // paradigms, A before B in the suite's order
	Metric int       // index in harness.SuiteMetrics
	Seeds  []uint64
	Diffs  []float64
	// Unequal counts the seeds where both finished with a value but did
	// not complete the same work: left out of Diffs.
	Unequal int
	Stats   PairedStats
}

// allZero: identical values on every seed (no seed left out for unequal
// work).
func (c *Comparison) allZero() bool {
	return len(c.Diffs) > 0 && c.Unequal == 0 && !slices.ContainsFunc(c.Diffs, func(d float64) bool { return d != 0 })
}

// comparisons are every paired comparison of the suite, in table order:
// block, paradigm a, paradigm b, metric; their statistics are computed on
// every core (pairedAll).
func (s *desSuite) comparisons() []Comparison {
	out := s.pairs()
	diffs := make([][]float64, len(out))
	for i := range out {
		diffs[i] = out[i].Diffs
	}
	for i, st := range pairedAll(diffs) {
		out[i].Stats = st
	}
	return out
}

// maxPairedParadigms bounds the paradigms of one block that are compared
// pairwise (the pairs grow as the square of their number): a block with
// more is left out of the paired differences, and the report says so.
const maxPairedParadigms = 32

// pairs are the comparisons with their differences, without statistics.
func (s *desSuite) pairs() []Comparison {
	metrics, cj := harness.SuiteMetrics(), cjIndex()
	var out []Comparison
	for _, blk := range s.blocks() {
		if len(blk) > maxPairedParadigms {
			continue
		}
		for i, ga := range blk {
			for _, gb := range blk[i+1:] {
				for k := range metrics {
					c := Comparison{Block: ga.block, A: ga.paradigm, B: gb.paradigm, Metric: k}
					bySeed := map[uint64]*desCase{}
					for _, cb := range gb.cases {
						bySeed[cb.seed] = cb
					}
					for _, ca := range ga.cases { // by seed
						cb, ok := bySeed[ca.seed]
						if !ok || math.IsNaN(cb.values[k]) || math.IsNaN(ca.values[k]) {
							continue
						}
						if !completionMetric(metrics[k]) && !sameWorkPair(ca, cb, cj) {
							c.Unequal++
							continue
						}
						c.Seeds = append(c.Seeds, ca.seed)
						c.Diffs = append(c.Diffs, ca.values[k]-cb.values[k])
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// pairedSection is the paired differences: a table per block, a row per
// pair of paradigms and metric. Holm's correction runs over the
// comparisons of a block (its table), the rows with difference 0 on every
// seed included.
func (s *desSuite) pairedSection() Section {
	metrics := harness.SuiteMetrics()
	sec := Section{Suite: s.dir, Kind: SectionPaired, Title: desTitle(s.dir) + ": paired differences between paradigms"}
	comps := s.comparisons()
	shown := s.shownBlockKeys()
	holm := make([]float64, len(comps))
	for lo := 0; lo < len(comps); {
		hi := lo + 1
		for hi < len(comps) && comps[hi].Block == comps[lo].Block {
			hi++
		}
		ps := make([]float64, hi-lo)
		var stats []PairedStats
		for i := lo; i < hi; i++ {
			ps[i-lo] = comps[i].Stats.P
			if !comps[i].allZero() {
				stats = append(stats, comps[i].Stats)
			}
		}
		copy(holm[lo:hi], Holm(ps))
		var parts []string
		for _, k := range shown {
			parts = append(parts, blockKeys[k]+" "+comps[lo].Block[k])
		}
		unequal, unRows := 0, 0
		for i := lo; i < hi; i++ {
			if comps[i].Unequal > 0 {
				unequal += comps[i].Unequal
				unRows++
			}
		}
		t := Table{Title: "Paired differences: " + strings.Join(parts, ", "),
			Head: append([]string{"A", "B", "metric"}, pairedHeadFor(unequal > 0)...), Left: append([]int{0, 1, 2}, pairedLeft(3, unequal > 0)...)}
		if len(sec.Tables) == 0 {
			t.Caption = fmt.Sprintf("Paradigms A and B ran on the same seeds (common random numbers): each row is over the n seeds "+
				"where both finished (and, on every metric but G_cj and the robustness ones, completed the same work), of the differences A − B. The t interval is mean ± t(0.975, n−1)·sd/√n; the bootstrap "+
				"interval is the 2.5%% and 97.5%% percentiles of the means of %d resamples (fixed seed). "+
				"≠ 0: the t interval excludes 0. Direction: the metric's arrow says whether a positive difference favours A (↑) or B (↓).", Resamples)
		}
		left := 0
		for i := lo; i < hi; i++ {
			c := &comps[i]
			if c.allZero() {
				left++
				continue
			}
			m := metrics[c.Metric]
			t.Rows = append(t.Rows, append([]Cell{{Text: c.A}, {Text: c.B}, {Text: m.Key + " " + m.Arrow()}}, pairedCells(c.Stats, holm[i], m.Digits+1, c.Unequal, unequal > 0)...))
		}
		if left > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%d comparisons with the same value on every seed (difference 0) are left out here; --format csv lists them.", left))
		}
		if unequal > 0 {
			t.Notes = append(t.Notes, unequalNote(unRows))
		}
		t.Notes = append(t.Notes, pairedNotes(stats)...)
		sec.Tables = append(sec.Tables, t)
		lo = hi
	}
	var many [][]*desGroup
	for _, blk := range s.blocks() {
		if len(blk) > maxPairedParadigms {
			many = append(many, blk)
		}
	}
	if len(many) > 0 {
		t := Table{Title: "Paired differences left out", Left: []int{0}, Head: []string{"block", "paradigms"},
			Notes: []string{fmt.Sprintf("These blocks have more than %d paradigms: their pairs are not compared.", maxPairedParadigms)}}
		for _, blk := range many {
			var parts []string
			for _, k := range shown {
				parts = append(parts, blockKeys[k]+" "+blk[0].block[k])
			}
			t.Rows = append(t.Rows, []Cell{{Text: strings.Join(parts, ", ")}, {Text: strconv.Itoa(len(blk))}})
		}
		sec.Tables = append(sec.Tables, t)
	}
	sec.CSVHead = append(slices.Clone(blockKeys), "paradigm_a", "paradigm_b", "metric", "higher_better", "n",
		"mean_diff", "sd_diff", "t_quantile", "t_lo", "t_hi", "boot_lo", "boot_hi", "t_excludes_0")
	sec.CSVHead = append(append(sec.CSVHead, pairedCSVHead...), unequalCSV)
	for i, c := range comps {
		m := metrics[c.Metric]
		st := c.Stats
		row := append(c.Block[:len(c.Block):len(c.Block)], c.A, c.B, m.Key, strconv.FormatBool(m.HigherBetter),
			strconv.Itoa(st.N), fcsv(st.Mean), fcsv(st.SD), fcsv(st.TQuantile), fcsv(st.T.Lo), fcsv(st.T.Hi),
			fcsv(st.Boot.Lo), fcsv(st.Boot.Hi), strconv.FormatBool(st.Distinguishable()))
		sec.CSVRows = append(sec.CSVRows, append(append(row, pairedCSV(st, holm[i])...), strconv.Itoa(c.Unequal)))
	}
	return sec
}
