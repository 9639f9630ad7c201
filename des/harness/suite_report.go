package harness

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/suiterun"
)

// SuiteMetric is one of the 15 metrics as a summary column.
type SuiteMetric struct {
	Key    string // G_mk, ...
	Family string // effectiveness, constraint, coordination, robustness
	Digits int    // decimals of mean and std in the Markdown tables
	Int    bool   // integer-valued
	Value  func(*Metrics) float64
}

// MetricFamilies are the four metric families, in table order.
var MetricFamilies = []string{"effectiveness", "constraint", "coordination", "robustness"}

// SuiteMetrics are the 15 metrics in the order of the summary columns.
var SuiteMetrics = []SuiteMetric{
	{"G_mk", "effectiveness", 1, false, func(m *Metrics) float64 { return m.GMk }},
	{"G_td", "effectiveness", 1, false, func(m *Metrics) float64 { return m.GTd }},
	{"G_cj", "effectiveness", 1, true, func(m *Metrics) float64 { return float64(m.GCj) }},
	{"G_vc", "constraint", 1, true, func(m *Metrics) float64 { return float64(m.GVc) }},
	{"G_eo", "constraint", 4, false, func(m *Metrics) float64 { return m.GEo }},
	{"G_ed", "constraint", 1, false, func(m *Metrics) float64 { return m.GEd }},
	{"G_en", "constraint", 3, false, func(m *Metrics) float64 { return m.GEn }},
	{"G_ds", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GDs) }},
	{"G_cm", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GCm) }},
	{"G_fb", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GFb) }},
	{"G_llm", "coordination", 1, true, func(m *Metrics) float64 { return float64(m.GLlm) }},
	{"G_tr", "robustness", 2, true, func(m *Metrics) float64 { return float64(m.GTr) }},
	{"G_dj", "robustness", 1, true, func(m *Metrics) float64 { return float64(m.GDj) }},
	{"G_ut", "robustness", 1, false, func(m *Metrics) float64 { return m.GUt }},
	{"G_do", "robustness", 1, true, func(m *Metrics) float64 { return float64(m.GDo) }},
}

// SummaryHeader is the header of suite_summary.csv.
func SummaryHeader() []string {
	h := []string{"case_id", "instance", "paradigm", "controller", "model", "framework", "seed", "status"}
	for _, m := range SuiteMetrics {
		h = append(h, m.Key)
	}
	return append(h, "llm_calls", "prompt_tokens", "completion_tokens", "error")
}

// summaryRow is one line of suite_summary.csv.
func summaryRow(r *CaseResult) []string {
	c := r.Case
	row := []string{c.ID, c.Instance.Label, c.Paradigm.ID, c.Controller, c.Model, c.Framework,
		strconv.FormatUint(c.Seed, 10), r.Status}
	for _, m := range SuiteMetrics {
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

// ParadigmAggregate is one row of the aggregate: a paradigm's metrics
// over its cases that ran without error.
type ParadigmAggregate struct {
	Paradigm string
	Cases    int // cases averaged
	Failed   int // cases with status error, left out
	// Mean and Std (sample standard deviation, 0 for one case) of each
	// metric, in SuiteMetrics order; NaN without cases.
	Mean, Std []float64
}

// Aggregate computes one row per paradigm, in the order given.
func Aggregate(paradigms []coord.AuthorityMode, cases []CaseResult) []ParadigmAggregate {
	var out []ParadigmAggregate
	for _, p := range paradigms {
		a := ParadigmAggregate{Paradigm: p.ID}
		cols := make([][]float64, len(SuiteMetrics))
		for i := range cases {
			r := &cases[i]
			if r.Case.Paradigm.ID != p.ID {
				continue
			}
			if r.Status == StatusError {
				a.Failed++
				continue
			}
			a.Cases++
			for k, m := range SuiteMetrics {
				cols[k] = append(cols[k], m.Value(&r.Metrics))
			}
		}
		for _, xs := range cols {
			mean, std := meanStd(xs)
			a.Mean, a.Std = append(a.Mean, mean), append(a.Std, std)
		}
		out = append(out, a)
	}
	return out
}

func meanStd(xs []float64) (mean, std float64) {
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

// AggregateHeader is the header of suite_aggregate.csv.
func AggregateHeader() []string {
	h := []string{"paradigm", "cases", "failed"}
	for _, m := range SuiteMetrics {
		h = append(h, m.Key+"_mean", m.Key+"_std")
	}
	return h
}

func writeSuiteFiles(dir string, rep *SuiteReport) error {
	rows := make([][]string, len(rep.Cases))
	for i := range rep.Cases {
		rows[i] = summaryRow(&rep.Cases[i])
	}
	aggRows := make([][]string, len(rep.Aggregate))
	for i, a := range rep.Aggregate {
		row := []string{a.Paradigm, strconv.Itoa(a.Cases), strconv.Itoa(a.Failed)}
		for k := range SuiteMetrics {
			row = append(row, formatValue(a.Mean[k], false), formatValue(a.Std[k], false))
		}
		aggRows[i] = row
	}
	var md bytes.Buffer
	WriteAggregateMarkdown(&md, rep)
	return suiterun.WriteFiles(dir,
		suiterun.File{Name: FileSuiteSummary, Data: suiterun.CSV(SummaryHeader(), rows)},
		suiterun.File{Name: FileSuiteAggregate, Data: suiterun.CSV(AggregateHeader(), aggRows)},
		suiterun.File{Name: FileSuiteAggregateMD, Data: md.Bytes()})
}

// cell formats mean ± std of metric k.
func (a *ParadigmAggregate) cell(k int) string {
	if a.Cases == 0 {
		return "–"
	}
	d := SuiteMetrics[k].Digits
	return fmt.Sprintf("%.*f ± %.*f", d, a.Mean[k], d, a.Std[k])
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

// WriteAggregateMarkdown writes suite_aggregate.md: the Table 3 layout,
// one row per paradigm and one column per metric, grouped by family.
func WriteAggregateMarkdown(w io.Writer, rep *SuiteReport) {
	fmt.Fprintf(w, "# Suite aggregate\n\nMean ± sample standard deviation of each metric over the cases of each paradigm (n); %s\n\n", scope(rep))
	head := []string{"paradigm", "n"}
	keys := []string{"", ""}
	for k, m := range SuiteMetrics {
		if k == 0 || SuiteMetrics[k-1].Family != m.Family {
			head = append(head, m.Family)
		} else {
			head = append(head, "")
		}
		keys = append(keys, m.Key)
	}
	rows := [][]string{keys}
	for i := range rep.Aggregate {
		a := &rep.Aggregate[i]
		row := []string{a.Paradigm, strconv.Itoa(a.Cases)}
		for k := range SuiteMetrics {
			row = append(row, a.cell(k))
		}
		rows = append(rows, row)
	}
	mdtable.Write(w, head, rows, 0)
}

// WriteAggregateText writes the aggregate for a terminal: one
// Markdown-like table per metric family, one row per paradigm.
func WriteAggregateText(w io.Writer, rep *SuiteReport) {
	fmt.Fprintf(w, "Mean ± std per paradigm over n cases: %s\n", scope(rep))
	for _, fam := range MetricFamilies {
		head := []string{fam, "n"}
		var ks []int
		for k, m := range SuiteMetrics {
			if m.Family == fam {
				head = append(head, m.Key)
				ks = append(ks, k)
			}
		}
		var rows [][]string
		for i := range rep.Aggregate {
			a := &rep.Aggregate[i]
			row := []string{a.Paradigm, strconv.Itoa(a.Cases)}
			for _, k := range ks {
				row = append(row, a.cell(k))
			}
			rows = append(rows, row)
		}
		fmt.Fprintln(w)
		mdtable.Write(w, head, rows, 0)
	}
}
