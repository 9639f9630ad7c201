package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/des/harness"
)

// The per-case figures of a scheduling run and the table of its metrics.

// figures are the Gantt chart, power against the cap, the decision-source
// audit and the message counts of the run; id prefixes the figure ids.
func (r *desRun) figures(id string) []Figure {
	var out []Figure
	gc := "Each machine's state over time (every machine of instance.json), replayed from trace.jsonl (idle is blank), and the jobs in flight to each cell (→ cell)."
	if r.spansLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d spans are drawn; %d more are left out.", maxSpans, r.spansLeft)
	}
	if r.transportsLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d transports are drawn; %d more are left out.", maxTransports, r.transportsLeft)
	}
	if r.rowsLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d rows are drawn; %d more (machines or transport rows) are left out.", maxGanttRows, r.rowsLeft)
	}
	out = append(out, Gantt{Title: "Machines and transports", XTitle: "time", Rows: r.rows, Kinds: ganttKinds, Spans: r.spans, End: r.end}.Figure(id+"-gantt", gc))
	pc := "Plant power (power_change records of trace.jsonl, a step function) against the power cap (power_cap_kw of episode_start)."
	if r.powerLeft > 0 {
		pc += fmt.Sprintf(" Only the first %d power changes are drawn; %d more are left out.", maxPowerPoints, r.powerLeft)
	}
	out = append(out, LineChart{Title: "Plant power against the cap", XTitle: "time", YTitle: "kW", XMin: 0, XMax: max(r.end, 1),
		Lines: []Line{{Name: "power", X: r.powerT, Y: r.powerKW, Step: true}, {Name: "cap", X: []float64{0, r.end}, Y: []float64{r.cap, r.cap}, Dashed: true, Step: true}},
	}.Figure(id+"-power", pc))
	var lines []Line
	width := r.end / auditBins
	for i, s := range r.sources {
		l := Line{Name: sourceLabel(s), Step: true}
		for b, v := range r.audit[i] {
			l.X, l.Y = append(l.X, float64(b)*width), append(l.Y, v)
		}
		lines = append(lines, l)
	}
	ac := fmt.Sprintf("Decisions committed so far, by source (decisions.jsonl, %d in all, in %d time bins): builtin = a built-in agent, llm = the model, external = an external controller, fallback = the harness replaced an illegal or missing answer.", r.decisions, auditBins)
	out = append(out, LineChart{Title: "Decision sources over time", XTitle: "time", YTitle: "decisions (cumulative)", XMin: 0, XMax: max(r.end, 1), Lines: lines}.Figure(id+"-audit", ac))
	mc := "Protocol messages by type (secondary.messages_by_type of metrics.json = the lines of messages.jsonl by type)."
	if len(r.msgTypes) == 0 {
		mc += " This run sent none."
	}
	out = append(out, BarChart{Title: "Messages by type", YTitle: "messages", Groups: r.msgTypes, Series: []Bars{{Name: "messages", Values: r.msgCounts}}}.Figure(id+"-messages", mc))
	return out
}

func sourceLabel(s string) string {
	switch s {
	case "builtin":
		return "builtin (agent)"
	case "llm":
		return "llm (model)"
	case "fallback":
		return "fallback (harness)"
	}
	return s
}

// metricsTable is the run's 15 metrics from metrics.json.
func (r *desRun) metricsTable() Table {
	t := Table{Title: "Metrics", Head: []string{"metric", "value", "better", "meaning"}, Left: []int{0, 2, 3}}
	for _, m := range harness.SuiteMetrics() {
		v := "–"
		if raw, ok := r.metrics[m.Key]; ok {
			var f float64
			if json.Unmarshal(raw, &f) == nil {
				v = fnum(f, m.Digits)
			}
		}
		better := "↓ lower"
		if m.HigherBetter {
			better = "↑ higher"
		}
		t.Rows = append(t.Rows, []Cell{{Text: m.Key}, {Text: v}, {Text: better}, {Text: m.Meaning}})
	}
	return t
}

// familyFigures are, for one instance, a bar chart per metric family and
// block (controller × model × framework): a series per paradigm, a group
// per metric, each mean divided by the largest absolute mean of that
// metric in the block.
func (s *desSuite) familyFigures(id, instance string) []Figure {
	metrics := harness.SuiteMetrics()
	var out []Figure
	for bi, blk := range s.blocks() {
		if blk[0].block[0] != instance {
			continue
		}
		label := ""
		for _, k := range s.shownBlockKeys() {
			if k > 0 {
				label += ", " + blk[0].block[k]
			}
		}
		for fi, fam := range harness.MetricFamilies() {
			c := BarChart{Title: fam + label, YTitle: "mean / largest mean"}
			var ks []int
			for k, m := range metrics {
				if m.Family == fam {
					ks = append(ks, k)
					c.Groups = append(c.Groups, m.Key+" "+m.Arrow())
				}
			}
			for _, g := range blk {
				c.Series = append(c.Series, Bars{Name: g.paradigm})
			}
			for _, k := range ks {
				top := 0.0
				for _, g := range blk {
					if v, _, n := g.meanStd(k); n > 0 {
						top = max(top, math.Abs(v))
					}
				}
				for gi, g := range blk {
					v, _, n := g.meanStd(k)
					switch {
					case n == 0:
						v = math.NaN()
					case top > 0:
						v = math.Abs(v) / top
					}
					c.Series[gi].Values = append(c.Series[gi].Values, v)
				}
			}
			caption := ""
			if !slices.ContainsFunc(c.Series, func(b Bars) bool {
				return slices.ContainsFunc(b.Values, func(v float64) bool { return v != 0 && !math.IsNaN(v) })
			}) {
				caption = "Every mean of this family is 0 in this block: no bars."
			}
			out = append(out, c.Figure(fmt.Sprintf("%s-b%d-f%d", id, bi, fi), caption))
		}
	}
	return out
}

// summary is the line under a case's heading.
func (r *desRun) summary() string {
	return "instance " + r.instance + ", seed " + r.seed + ", status " + r.status + ", end time " + strconv.FormatFloat(r.end, 'f', 1, 64) +
		", power cap " + strconv.FormatFloat(r.cap, 'f', -1, 64) + " kW"
}
