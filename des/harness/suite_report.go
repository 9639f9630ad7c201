package harness

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/suiterun"
)

// SuiteMetric is one of the 15 metrics as a summary column.
type SuiteMetric struct {
	Key    string // G_mk, ...
	Family string // effectiveness, constraint, coordination, robustness
	Digits int    // decimals of mean and std in the Markdown tables
	Int    bool   // integer-valued
	Value  func(*Metrics) float64
	// Meaning, Unit and HigherBetter are the legend under the tables
	// (docs/metrics.md defines each metric). A unit "time" is the
	// instance's time unit.
	Meaning      string
	Unit         string
	HigherBetter bool
}

// Arrow is ↑ for a metric where higher is better, ↓ where lower is.
func (m *SuiteMetric) Arrow() string {
	if m.HigherBetter {
		return "↑"
	}
	return "↓"
}

// metricFamilies backs MetricFamilies.
var metricFamilies = []string{"effectiveness", "constraint", "coordination", "robustness"}

// MetricFamilies returns the four metric families, in table order.
func MetricFamilies() []string { return slices.Clone(metricFamilies) }

// suiteMetrics backs SuiteMetrics.
var suiteMetrics = []SuiteMetric{
	{"G_mk", "effectiveness", 1, false, func(m *Metrics) float64 { return m.GMk }, "makespan: last completion; the horizon if truncated", "time", false},
	{"G_td", "effectiveness", 1, false, func(m *Metrics) float64 { return m.GTd }, "total tardiness, unfinished jobs counted to the horizon", "time", false},
	{"G_cj", "effectiveness", 1, true, func(m *Metrics) float64 { return float64(m.GCj) }, "completed jobs", "jobs", true},
	{"G_vc", "constraint", 1, true, func(m *Metrics) float64 { return float64(m.GVc) }, "violations: seconds over the power cap + blocking incidents + WIP breaches", "count", false},
	{"G_eo", "constraint", 4, false, func(m *Metrics) float64 { return m.GEo }, "energy above the power cap", "kWh", false},
	{"G_ed", "constraint", 1, false, func(m *Metrics) float64 { return m.GEd }, "time with plant power above the cap", "time", false},
	{"G_en", "constraint", 3, false, func(m *Metrics) float64 { return m.GEn }, "total energy", "kWh", false},
	{"G_ds", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GDs) }, "decision steps", "steps", false},
	{"G_cm", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GCm) }, "coordination messages", "messages", false},
	{"G_fb", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GFb) }, "decisions by the contract-safe fallback", "decisions", false},
	{"G_llm", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GLlm) }, "decisions by an LLM (model cost)", "decisions", false},
	{"G_tr", "robustness", 2, true, func(m *Metrics) float64 { return float64(m.GTr) }, "truncated episode (the mean is the truncation rate)", "0/1", false},
	{"G_dj", "robustness", 1, true, func(m *Metrics) float64 { return float64(m.GDj) }, "unfinished jobs at the end", "jobs", false},
	{"G_ut", "robustness", 1, false, func(m *Metrics) float64 { return m.GUt }, "overdue debt of unfinished jobs at the horizon", "time", false},
	{"G_do", "robustness", 1, true, func(m *Metrics) float64 { return float64(m.GDo) }, "unfinished operations at the end", "operations", false},
}

// SuiteMetrics returns the 15 metrics in the order of the summary
// columns.
func SuiteMetrics() []SuiteMetric { return slices.Clone(suiteMetrics) }

// SummaryHeader is the header of suite_summary.csv.
func SummaryHeader() []string {
	h := []string{"case_id", "instance", "paradigm", "controller", "model", "framework", "seed", "status"}
	for _, m := range suiteMetrics {
		h = append(h, m.Key)
	}
	return append(h, "llm_calls", "prompt_tokens", "completion_tokens", "error")
}

// SummaryRow is the line of suite_summary.csv of case r.
func SummaryRow(r *CaseResult) []string {
	c := r.Case
	row := []string{c.ID, c.Instance.Label, c.Paradigm.ID, c.Controller, c.Model, c.Framework,
		strconv.FormatUint(c.Seed, 10), r.Status}
	for _, m := range suiteMetrics {
		row = append(row, formatValue(m.Value(&r.Metrics), m.Int))
	}
	sec := &r.Metrics.Secondary
	return append(row, strconv.Itoa(sec.LLMCalls), strconv.FormatInt(sec.PromptTokens, 10),
		strconv.FormatInt(sec.CompletionTokens, 10), r.Err)
}

func formatValue(v float64, isInt bool) string {
	if math.IsNaN(v) {
		return ""
	}
	if isInt {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// groupKeys backs GroupKeys.
var groupKeys = []string{"instance", "controller", "model", "framework", "paradigm"}

// GroupKeys returns the keys the aggregate can group cases by, in the
// order of the default grouping: the paper's Table 3 layout, one block of
// rows per scenario, controller, model and framework, one row per
// paradigm in each block.
func GroupKeys() []string { return slices.Clone(groupKeys) }

// groupValue is the value of a group key for case c, as in the summary's
// column of the same name.
func groupValue(key string, c *Case) string {
	switch key {
	case "instance":
		return c.Instance.Label
	case "controller":
		return c.Controller
	case "model":
		return c.Model
	case "framework":
		return c.Framework
	case "paradigm":
		return c.Paradigm.ID
	}
	panic("harness: unknown group key " + key)
}

// ParseGroupBy parses a comma list of GroupKeys, each at most once; ""
// gives the default, every key in GroupKeys order.
func ParseGroupBy(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return slices.Clone(groupKeys), nil
	}
	var keys []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		switch {
		case !slices.Contains(groupKeys, k):
			return nil, opterr.New("GroupBy", "%q is not a group key (keys: %s)", k, strings.Join(groupKeys, ", "))
		case slices.Contains(keys, k):
			return nil, opterr.New("GroupBy", "%q is given twice", k)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// GroupAggregate is one row of the aggregate: the metrics of the cases
// that share the values of the group keys and ran without error.
type GroupAggregate struct {
	// Group holds the values of the group keys, in the grouping's order.
	Group  []string
	Cases  int // cases averaged
	Failed int // cases with status error, left out
	// Mean and Std (sample standard deviation, 0 for one case) of each
	// metric, in SuiteMetrics order; NaN without cases.
	Mean, Std []float64
}

// Aggregate groups the cases by keys (GroupKeys when empty) and computes one
// row per group of the suite s, including groups none of whose cases has
// ended yet. Rows are sorted by the keys in the order given, each key's
// values in the order the suite lists them (instances, paradigms and
// controllers as configured; models and frameworks as their cases come).
func Aggregate(s *Suite, keys []string, cases []CaseResult) []GroupAggregate {
	if len(keys) == 0 {
		keys = groupKeys
	}
	// rank[k][v] orders the values v of key k.
	rank := make([]map[string]int, len(keys))
	for i, k := range keys {
		rank[i] = map[string]int{}
		var listed []string
		switch k {
		case "instance":
			for _, si := range s.Config.Instances {
				listed = append(listed, si.Label)
			}
		case "paradigm":
			for _, m := range s.Config.Paradigms {
				listed = append(listed, m.ID)
			}
		case "controller":
			listed = s.Config.Controllers
		}
		for j := range s.Cases {
			listed = append(listed, groupValue(k, &s.Cases[j]))
		}
		for _, v := range listed {
			if _, ok := rank[i][v]; !ok {
				rank[i][v] = len(rank[i])
			}
		}
	}
	groupOf := func(c *Case) []string {
		g := make([]string, len(keys))
		for i, k := range keys {
			g[i] = groupValue(k, c)
		}
		return g
	}
	index := map[string]int{} // group (joined by NUL) → row
	var groups [][]string
	for j := range s.Cases {
		g := groupOf(&s.Cases[j])
		id := strings.Join(g, "\x00")
		if _, ok := index[id]; !ok {
			index[id] = len(groups)
			groups = append(groups, g)
		}
	}
	cols := make([][][]float64, len(groups)) // row, metric, values
	out := make([]GroupAggregate, len(groups))
	for i, g := range groups {
		out[i].Group = g
		cols[i] = make([][]float64, len(suiteMetrics))
	}
	for j := range cases {
		r := &cases[j]
		i, ok := index[strings.Join(groupOf(&r.Case), "\x00")]
		if !ok {
			continue
		}
		if r.Status == StatusError {
			out[i].Failed++
			continue
		}
		out[i].Cases++
		for k, m := range suiteMetrics {
			cols[i][k] = append(cols[i][k], m.Value(&r.Metrics))
		}
	}
	for i := range out {
		for _, xs := range cols[i] {
			mean, std := MeanStd(xs)
			out[i].Mean, out[i].Std = append(out[i].Mean, mean), append(out[i].Std, std)
		}
	}
	slices.SortStableFunc(out, func(a, b GroupAggregate) int {
		for i := range keys {
			if c := cmp.Compare(rank[i][a.Group[i]], rank[i][b.Group[i]]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// MeanStd is the mean and the sample standard deviation of xs (0 for one
// value, NaN for none): the aggregates' mean ± std.
func MeanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// AggregateHeader is the header of suite_aggregate.csv for a grouping by
// keys (GroupKeys when empty): the group keys, then cases, failed and the
// mean and std of each metric.
func AggregateHeader(keys []string) []string {
	if len(keys) == 0 {
		keys = groupKeys
	}
	h := append(slices.Clone(keys), "cases", "failed")
	for _, m := range suiteMetrics {
		h = append(h, m.Key+"_mean", m.Key+"_std")
	}
	return h
}

func writeSuiteFiles(dir string, rep *SuiteReport) error {
	return suiterun.WriteFiles(dir, SuiteFiles(rep)...)
}

// SuiteFiles are the summary and aggregate files of rep, as a suite
// writes them (suite_summary.csv, suite_aggregate.csv and .md).
func SuiteFiles(rep *SuiteReport) []suiterun.File {
	rows := make([][]string, len(rep.Cases))
	for i := range rep.Cases {
		rows[i] = SummaryRow(&rep.Cases[i])
	}
	aggRows := make([][]string, len(rep.Aggregate))
	for i, a := range rep.Aggregate {
		row := append(slices.Clone(a.Group), strconv.Itoa(a.Cases), strconv.Itoa(a.Failed))
		for k := range suiteMetrics {
			row = append(row, formatValue(a.Mean[k], false), formatValue(a.Std[k], false))
		}
		aggRows[i] = row
	}
	var md bytes.Buffer
	WriteAggregateMarkdown(&md, rep)
	return []suiterun.File{
		{Name: FileSuiteSummary, Data: suiterun.CSV(SummaryHeader(), rows)},
		{Name: FileSuiteAggregate, Data: suiterun.CSV(AggregateHeader(rep.GroupBy), aggRows)},
		{Name: FileSuiteAggregateMD, Data: md.Bytes()}}
}

// cell formats mean ± std of metric k.
func (a *GroupAggregate) cell(k int) string {
	if a.Cases == 0 {
		return "–"
	}
	d := suiteMetrics[k].Digits
	return fmt.Sprintf("%.*f ± %.*f", d, a.Mean[k], d, a.Std[k])
}

// groupBy is the report's grouping.
func (rep *SuiteReport) groupBy() []string {
	if len(rep.GroupBy) == 0 {
		return groupKeys
	}
	return rep.GroupBy
}

// shownKeys are the indexes of the group keys the Markdown and terminal
// tables show: a key whose value is empty in every row (model and
// framework for built-in controllers) is left out, unless no key is left.
func (rep *SuiteReport) shownKeys() []int {
	var ks []int
	for i := range rep.groupBy() {
		for _, a := range rep.Aggregate {
			if a.Group[i] != "" {
				ks = append(ks, i)
				break
			}
		}
	}
	if len(ks) == 0 {
		for i := range rep.groupBy() {
			ks = append(ks, i)
		}
	}
	return ks
}

// scope describes what the aggregate covers, for the table captions.
func scope(rep *SuiteReport) string {
	cfg := &rep.Suite.Config
	var names []string
	for _, si := range cfg.Instances {
		names = append(names, si.Label)
	}
	s := fmt.Sprintf("instances %s; controllers %s; seeds %s. %d of %d cases finished",
		strings.Join(names, ", "), strings.Join(cfg.Controllers, ", "), cfg.Seeds, len(rep.Cases), len(rep.Suite.Cases))
	if rep.Failed > 0 {
		s += fmt.Sprintf(", %d failed (left out)", rep.Failed)
	}
	return s + "."
}

// tableRows are the aggregate's rows for the Markdown and terminal
// tables: the shown group keys, n, and mean ± std of the metrics ks.
func (rep *SuiteReport) tableRows(ks []int) (head []string, rows [][]string, left []int) {
	keys, shown := rep.groupBy(), rep.shownKeys()
	for _, i := range shown {
		left = append(left, len(head))
		head = append(head, keys[i])
	}
	head = append(head, "n")
	for _, k := range ks {
		head = append(head, suiteMetrics[k].Key+" "+suiteMetrics[k].Arrow())
	}
	for j := range rep.Aggregate {
		a := &rep.Aggregate[j]
		var row []string
		for _, i := range shown {
			row = append(row, a.Group[i])
		}
		row = append(row, strconv.Itoa(a.Cases))
		for _, k := range ks {
			row = append(row, a.cell(k))
		}
		rows = append(rows, row)
	}
	return head, rows, left
}

// caption says what a row is.
func (rep *SuiteReport) caption() string {
	return "Mean ± sample standard deviation of each metric over the n cases of each " +
		strings.Join(rep.groupBy(), " × ") + "; " + scope(rep)
}

// WriteAggregateMarkdown writes suite_aggregate.md: the Table 3 layout
// (with the default grouping), one table per metric family with a row
// per group, then the legend.
func WriteAggregateMarkdown(w io.Writer, rep *SuiteReport) {
	fmt.Fprintf(w, "# Suite aggregate\n\n")
	writeAggregate(w, rep, "## ")
}

// WriteAggregateText writes the aggregate for a terminal: one
// Markdown-like table per metric family, one row per group, then the
// legend.
func WriteAggregateText(w io.Writer, rep *SuiteReport) {
	writeAggregate(w, rep, "")
}

// writeAggregate writes the caption, a table per family and the legend,
// each table under a title line starting with heading.
func writeAggregate(w io.Writer, rep *SuiteReport, heading string) {
	fmt.Fprintln(w, rep.caption())
	for _, fam := range metricFamilies {
		fmt.Fprintf(w, "\n%s%s\n", heading, fam)
		if heading != "" {
			fmt.Fprintln(w)
		}
		head, rows, left := rep.tableRows(familyMetrics(fam))
		mdtable.Write(w, head, rows, left...)
	}
	if heading != "" {
		fmt.Fprintf(w, "\n%sLegend\n\n", heading)
	} else {
		fmt.Fprintf(w, "\nlegend\n")
	}
	writeLegend(w, rep)
}

// familyMetrics are the indexes in SuiteMetrics of family fam's metrics.
func familyMetrics(fam string) []int {
	var ks []int
	for k, m := range suiteMetrics {
		if m.Family == fam {
			ks = append(ks, k)
		}
	}
	return ks
}

// writeLegend writes the metrics' legend: name, whether lower or higher
// is better, unit and meaning, and what a time unit is.
func writeLegend(w io.Writer, rep *SuiteReport) {
	var rows [][]string
	for _, m := range suiteMetrics {
		better := "↓ lower"
		if m.HigherBetter {
			better = "↑ higher"
		}
		rows = append(rows, []string{m.Key, better, m.Unit, m.Meaning})
	}
	mdtable.Write(w, []string{"metric", "better", "unit", "meaning"}, rows, 0, 1, 2, 3)
	fmt.Fprintf(w, "\n%s\n", timeUnitNote(rep.Suite.Config.Instances))
}

// timeUnitNote says what the unit "time" is for the suite's instances.
func timeUnitNote(insts []*SuiteInstance) string {
	const each = "Unit \"time\" is each instance's time unit (its time_unit_s)."
	unit := -1.0
	for _, si := range insts {
		if si.Inst == nil || (unit >= 0 && si.Inst.TimeUnitS != unit) {
			return each
		}
		unit = si.Inst.TimeUnitS
	}
	if unit < 0 {
		return each
	}
	return fmt.Sprintf("Unit \"time\" is the instances' time unit, %s s.", strconv.FormatFloat(unit, 'f', -1, 64))
}
