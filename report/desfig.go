package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/coordbench/coordbench/des/harness"
)

// The per-case figures of a scheduling run and the table of its metrics.

// figures are the Gantt chart, power against the cap, the decision-source
// audit and the message counts of the run; id prefixes the figure ids.
func (r *desRun) figures(id string) []Figure {
	var out []Figure
	gc := "Each machine's state over time (every machine of instance.json), replayed from trace.jsonl (idle is blank), and the jobs in flight to each cell (→ cell). Hover a bar for its job, operation and interval."
	if r.spansLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d spans are drawn; %d more are left out.", maxSpans, r.spansLeft)
	}
	if r.transportsLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d transports are drawn; %d more are left out.", maxTransports, r.transportsLeft)
	}
	if r.rowsLeft > 0 {
		gc += fmt.Sprintf(" Only the first %d rows are drawn; %d more (machines or transport rows) are left out.", maxGanttRows, r.rowsLeft)
	}
	out = append(out, Gantt{Title: "Machines and transports", XTitle: r.timeTitle(), Rows: r.rows, Kinds: ganttKinds, Spans: r.spans, End: r.end}.Figure(id+"-gantt", gc))
	pc := "Plant power (power_change records of trace.jsonl, a step function) against the power cap (power_cap_kw of episode_start)."
	if r.powerLeft > 0 {
		pc += fmt.Sprintf(" Only the first %d power changes are drawn; %d more are left out.", maxPowerPoints, r.powerLeft)
	}
	out = append(out, LineChart{Title: "Plant power against the cap", XTitle: r.timeTitle(), YTitle: "kW", XMin: 0, XMax: max(r.end, 1),
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
	out = append(out, LineChart{Title: "Decision sources over time", XTitle: r.timeTitle(), YTitle: "decisions (cumulative)", XMin: 0, XMax: max(r.end, 1), Lines: lines}.Figure(id+"-audit", ac))
	mc := "Protocol messages by type (secondary.messages_by_type of metrics.json = the lines of messages.jsonl by type)."
	mf := BarChart{Title: "Messages by type", YTitle: "messages", Groups: r.msgTypes, Series: []Bars{{Name: "messages", Values: r.msgCounts}}}.Figure(id+"-messages", mc)
	if len(r.msgTypes) == 0 {
		mf = mf.empty("No bars: this run sent no protocol message (its paradigm decides without messages).")
	}
	out = append(out, mf)
	return out
}

// timeTitle is the time axis' title with the instance's time unit.
func (r *desRun) timeTitle() string {
	if r.timeUnitS > 0 {
		return "time (1 unit = " + strconv.FormatFloat(r.timeUnitS, 'g', -1, 64) + " s)"
	}
	return "time (the instance's time unit)"
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

// familyFigures are, for one instance, a figure per metric family and
// block (controller × model × framework): a panel per metric with its own
// axis, a bar per paradigm at its mean, the whisker its 95% t interval
// over seeds (meanInterval). A rate (unit 0/1) is drawn on [0, 1].
func (s *desSuite) familyFigures(id, instance string) []Figure {
	metrics := harness.SuiteMetrics()
	var out []Figure
	for bi, blk := range s.blocks() {
		if blk[0].block[0] != instance {
			continue
		}
		var label []string
		for _, k := range s.shownBlockKeys() {
			if k > 0 && blk[0].block[k] != "" {
				label = append(label, blk[0].block[k])
			}
		}
		var names []string
		flagged, single := 0, 0
		for _, g := range blk {
			name := g.paradigm
			if g.incomplete() > 0 {
				name += " " + incompleteMark
				flagged++
			}
			names = append(names, name)
		}
		for fi, fam := range harness.MetricFamilies() {
			c := Panels{Title: strings.Join(append([]string{fam}, label...), ", "), Series: names}
			allZero := true
			for k, m := range metrics {
				if m.Family != fam {
					continue
				}
				p := Panel{Title: m.Key + " " + m.Arrow()}
				if m.Unit == "0/1" {
					p.YMax = 1
				}
				for _, g := range blk {
					mean, sd, n := g.meanStd(k)
					lo, hi := meanInterval(mean, sd, n)
					if n == 1 {
						single++
					}
					p.Values, p.Lo, p.Hi = append(p.Values, mean), append(p.Lo, lo), append(p.Hi, hi)
					allZero = allZero && (n == 0 || mean == 0)
				}
				c.Panels = append(c.Panels, p)
			}
			caption := "Bars: each paradigm's mean over seeds, each metric on its own axis (mind the arrows: ↑ higher is better, ↓ lower); " +
				"whiskers: the 95% t interval of the mean, mean ± t(0.975, n−1)·sd/√n. A rate (0/1) is drawn on [0, 1]."
			if flagged > 0 {
				caption += " " + incompleteMark + ": the paradigm's means include an episode that left work undone (see the complete column)."
			}
			if single > 0 {
				caption += " A bar from one seed has no interval."
			}
			f := c.Figure(fmt.Sprintf("%s-b%d-f%d", id, bi, fi), caption)
			if allZero {
				f = f.empty("Every mean of this family is 0 in this block (for robustness: every episode finished every job): the bars have no height.")
			}
			out = append(out, f)
		}
	}
	return out
}

// meanInterval is the 95% Student t interval of a mean over n values of
// sample standard deviation sd; NaN bounds for fewer than two values.
func meanInterval(mean, sd float64, n int) (lo, hi float64) {
	if n < 2 || math.IsNaN(sd) {
		return math.NaN(), math.NaN()
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1-(1-Level)/2) * sd / math.Sqrt(float64(n))
	return mean - half, mean + half
}

// summary is the line under a case's heading.
func (r *desRun) summary() string {
	return "instance " + r.instance + ", seed " + r.seed + ", status " + r.status + ", end time " + strconv.FormatFloat(r.end, 'f', 1, 64) +
		", power cap " + strconv.FormatFloat(r.cap, 'f', -1, 64) + " kW"
}
