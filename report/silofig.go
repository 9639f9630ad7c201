package report

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/coordbench/coordbench/silo/suite"
)

// The figures of an information-silo suite, from its summary.csv (one row
// per run) and aggregate.csv (RCC): success and partial correctness
// against N per level and protocol with error bars over seeds, RCC against
// N, density and tokens against N, failure-mode bars and their
// co-occurrence.

// siloRunRow is one run of summary.csv.
type siloRunRow struct {
	caseID, task, level, protocol, agent string
	n                                    int
	seed                                 string
	baseline                             bool // a merged N = 1 baseline run
	S, success, P, D, tokens             float64
	failures                             []float64 // failureModes order: agents with each label
}

// failureModes are the failure labels of summary.csv.
var failureModes = []string{"premature_submission", "consensus_failure", "computation_error", "no_submission"}

// readSiloRuns reads a silo suite's summary.csv.
func readSiloRuns(dir string) ([]siloRunRow, error) {
	path := filepath.Join(dir, suite.FileSummary)
	need := append([]string{"case_id", "task", "level", "N", "protocol", "agent", "seed", "S", "success", "P", "D", "input_tokens", "output_tokens"}, failureModes...)
	f, err := readCSV(path, need)
	if err != nil {
		return nil, err
	}
	var out []siloRunRow
	for _, r := range f.rows {
		row := siloRunRow{caseID: f.get(r, "case_id"), task: f.get(r, "task"), level: f.get(r, "level"), protocol: f.get(r, "protocol"),
			agent: f.get(r, "agent"), seed: f.get(r, "seed")}
		row.baseline = strings.Contains(row.caseID, "-merged-n")
		if row.n, err = strconv.Atoi(f.get(r, "N")); err != nil || row.n < 1 {
			return nil, fmt.Errorf("%s:%d: column N: %q is not a team size", path, r.line, f.get(r, "N"))
		}
		switch f.get(r, "success") {
		case "true":
			row.success = 1
		case "false":
		default:
			return nil, fmt.Errorf("%s:%d: column success: %q is not true or false", path, r.line, f.get(r, "success"))
		}
		for _, c := range []struct {
			name string
			to   *float64
		}{{"S", &row.S}, {"P", &row.P}, {"D", &row.D}} {
			if *c.to, err = f.float(r, c.name, true); err != nil {
				return nil, err
			}
		}
		in, err := f.float(r, "input_tokens", true)
		if err != nil {
			return nil, err
		}
		outT, err := f.float(r, "output_tokens", true)
		if err != nil {
			return nil, err
		}
		row.tokens = in + outT // NaN without a model
		for _, m := range failureModes {
			v, err := f.float(r, m, true)
			if err != nil {
				return nil, err
			}
			row.failures = append(row.failures, v)
		}
		out = append(out, row)
	}
	return out, nil
}

// siloSeries identifies one curve: protocol and agent within a level.
type siloSeries struct{ protocol, agent string }

func (s siloSeries) name(agents int) string {
	if agents > 1 {
		return s.protocol + " · " + s.agent
	}
	return s.protocol
}

// siloFigures are the suite's figures.
func siloFigures(id string, runs []siloRunRow, agg []siloRow) []Figure {
	var seen distinct[string]
	protoRank, agentRank := map[string]int{}, map[string]int{}
	for _, r := range runs {
		seen.add(r.level)
		if _, ok := protoRank[r.protocol]; !ok {
			protoRank[r.protocol] = len(protoRank)
		}
		if _, ok := agentRank[r.agent]; !ok {
			agentRank[r.agent] = len(agentRank)
		}
	}
	lvls := seen.list
	slices.SortFunc(lvls, func(a, b string) int { return cmp.Compare(levels[a], levels[b]) })
	series := func(lvl string) []siloSeries {
		var d distinct[siloSeries]
		for _, r := range runs {
			if r.level == lvl {
				d.add(siloSeries{r.protocol, r.agent})
			}
		}
		ss := d.list
		slices.SortFunc(ss, func(a, b siloSeries) int {
			return cmp.Or(cmp.Compare(protoRank[a.protocol], protoRank[b.protocol]), cmp.Compare(agentRank[a.agent], agentRank[b.agent]))
		})
		return ss
	}
	errNote := " Points: the mean over the runs at that N (tasks × seeds); error bars: ± one sample standard deviation over seeds of the per-seed mean (none with one seed); small faint rings: each seed's mean, at the series' N. Merged N = 1 baseline runs are left out (they enter RCC)."
	var out []Figure
	vsN := func(title, ytitle, what string, val func(siloRunRow) float64, fixed bool) {
		for _, lvl := range lvls {
			var lines []Line
			for _, s := range series(lvl) {
				l := Line{Name: s.name(len(agentRank))}
				byN := map[int]map[string][]float64{} // N → seed → values
				for _, r := range runs {
					if r.level != lvl || r.protocol != s.protocol || r.agent != s.agent || r.baseline || math.IsNaN(val(r)) {
						continue
					}
					if byN[r.n] == nil {
						byN[r.n] = map[string][]float64{}
					}
					byN[r.n][r.seed] = append(byN[r.n][r.seed], val(r))
				}
				ns := mapKeys(byN)
				slices.Sort(ns)
				for _, nn := range ns {
					seeds := mapKeys(byN[nn])
					slices.Sort(seeds)
					var all, perSeed []float64
					for _, sd := range seeds {
						all = append(all, byN[nn][sd]...)
						perSeed = append(perSeed, mean(byN[nn][sd]))
					}
					l.X, l.Y, l.Err = append(l.X, float64(nn)), append(l.Y, mean(all)), append(l.Err, sampleSD(perSeed))
					l.Spread = append(l.Spread, perSeed)
				}
				if len(l.X) > 0 {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 {
				continue
			}
			c := nAxis(LineChart{Title: title + ", level " + lvl, XTitle: "N (agents)", YTitle: ytitle, Lines: lines})
			if fixed {
				c.YMin, c.YMax = 0, 1.05
			}
			out = append(out, c.Figure(id+"-"+slug(ytitle)+"-"+lvl, what+errNote))
		}
	}
	vsN("Success rate against N", "success", "Success: the fraction of runs in which every agent answered correctly (S = 1).", func(r siloRunRow) float64 { return r.success }, true)
	vsN("Partial correctness against N", "P", "P: partial correctness (ours; docs/silo-tasks.md), the mean over agents.", func(r siloRunRow) float64 { return r.P }, true)
	// RCC against N, from aggregate.csv.
	for _, lvl := range lvls {
		var lines []Line
		for _, s := range series(lvl) {
			for ci, col := range []string{"RCC", "RCC_success"} {
				l := Line{Name: s.name(len(agentRank)) + " " + col, Dashed: ci == 1}
				k := slices.IndexFunc(siloCols, func(c siloCol) bool { return c.name == col })
				for _, a := range agg {
					if a.level == lvl && a.protocol == s.protocol && a.agent == s.agent && a.mergedFrom == 0 && !math.IsNaN(a.vals[k]) {
						l.X, l.Y = append(l.X, float64(a.n)), append(l.Y, a.vals[k])
					}
				}
				if len(l.X) > 0 {
					lines = append(lines, l)
				}
			}
		}
		if len(lines) == 0 {
			continue
		}
		rf := nAxis(LineChart{Title: "RCC against N, level " + lvl, XTitle: "N (agents)", YTitle: "RCC (lower is better)", Lines: lines, Dodge: true}).Figure(id+"-rcc-"+lvl,
			"Solid: RCC = 1 − S(N)/S(baseline), the paper's, with S the mean fraction of agents correct; dashed: RCC_success, the same with the success rate. From aggregate.csv, against its baseline (rcc_baseline).")
		if !slices.ContainsFunc(lines, func(l Line) bool { return slices.ContainsFunc(l.Y, func(v float64) bool { return v != 0 }) }) {
			rf = rf.empty("Every RCC is 0: at every N the team was as correct as its baseline, so the lines lie on the axis.")
		}
		out = append(out, rf)
	}
	vsN("Communication density against N", "D", "D: the published code's communication density.", func(r siloRunRow) float64 { return r.D }, false)
	hasTokens := slices.ContainsFunc(runs, func(r siloRunRow) bool { return !math.IsNaN(r.tokens) })
	if hasTokens {
		vsN("Model tokens against N", "tokens", "Tokens: input + output tokens of every model call of a run.", func(r siloRunRow) float64 { return r.tokens }, false)
	}
	// Failure modes per level × protocol (× agent).
	var groups []string
	var vals [][]float64 // group → mode → mean share of agents
	co := make([][]float64, len(failureModes))
	for i := range co {
		co[i] = make([]float64, len(failureModes))
	}
	for _, lvl := range lvls {
		for _, s := range series(lvl) {
			sums, k := make([]float64, len(failureModes)), 0
			for _, r := range runs {
				if r.level != lvl || r.protocol != s.protocol || r.agent != s.agent || r.baseline {
					continue
				}
				k++
				for m, v := range r.failures {
					if !math.IsNaN(v) {
						sums[m] += v / float64(r.n)
					}
				}
			}
			if k == 0 {
				continue
			}
			for m := range sums {
				sums[m] /= float64(k)
			}
			groups = append(groups, lvl+" · "+s.name(len(agentRank)))
			vals = append(vals, sums)
		}
	}
	for _, r := range runs {
		if r.baseline {
			continue
		}
		for a, va := range r.failures {
			for b, vb := range r.failures {
				if va > 0 && vb > 0 {
					co[a][b]++
				}
			}
		}
	}
	var bars []Bars
	for m, mode := range failureModes {
		b := Bars{Name: mode}
		for g := range groups {
			b.Values = append(b.Values, vals[g][m])
		}
		bars = append(bars, b)
	}
	ff := BarChart{Title: "Failure modes per level × protocol", YTitle: "share of agents", Groups: groups, Series: bars}.Figure(id+"-failures",
		"The mean share of a run's agents carrying each failure label (summary.csv; an agent may carry two), per level × protocol. docs/silo-analyze.md defines the labels.")
	cf := Heatmap{Title: "Failure-mode co-occurrence", Rows: failureModes, Cols: failureModes, Values: co}.Figure(id+"-cooccurrence",
		"Runs (merged baselines left out) in which both the row's and the column's failure label occur (each on at least one agent); the diagonal counts runs with that label.")
	if !slices.ContainsFunc(co, func(r []float64) bool { return slices.ContainsFunc(r, func(v float64) bool { return v > 0 }) }) {
		ff = ff.empty("No bars: no agent of any run carries a failure label.")
		cf = cf.empty("Every count is 0: no agent of any run carries a failure label.")
	}
	out = append(out, ff, cf)
	return out
}

// nAxis puts the x ticks at the team sizes drawn, on a log scale when
// they span a factor of 10 or more (2, 5, 10, …, 100).
func nAxis(c LineChart) LineChart {
	var d distinct[float64]
	for _, l := range c.Lines {
		for _, x := range l.X {
			d.add(x)
		}
	}
	ns := d.list
	slices.Sort(ns)
	c.XTicks, c.Dodge = ns, true
	if len(ns) > 0 && ns[0] > 0 && ns[len(ns)-1]/ns[0] >= 10 {
		c.LogX = true
	}
	return c
}

func mean(xs []float64) float64 { return stat.Mean(xs, nil) } // NaN for none

// sampleSD is the sample standard deviation, 0 for fewer than two values.
func sampleSD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return stat.StdDev(xs, nil)
}

// slug makes a string safe inside an element id.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
