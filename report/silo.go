package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/silo/suite"
)

// siloRow is one row of a silo suite's aggregate.csv.
type siloRow struct {
	agent, level, protocol, baseline string
	n, mergedFrom, runs              int
	vals                             []float64 // siloCols order; NaN for an empty cell
}

// siloCol is a number column of a silo table: its name in the suite's
// CSV, in the table, its direction ("" where neither is better) and the
// decimals shown.
type siloCol struct {
	csv, name, arrow string
	dec              int
}

// head is the column's table heading: its name and direction.
func (c siloCol) head() string {
	if c.arrow == "" {
		return c.name
	}
	return c.name + " " + c.arrow
}

var siloCols = []siloCol{
	{"S_mean", "S", "↑", 4},
	{"success_rate", "success", "↑", 4},
	{"P_mean", "P", "↑", 4},
	{"P_paper_mean", "P_paper", "↑", 4},
	{"D_mean", "D", "", 4},
	{"D_reads_mean", "D_reads", "", 4},
	{"RCC", "RCC", "↓", 4},
	{"RCC_success", "RCC_success", "↓", 4},
}

// levels orders the task levels.
var levels = map[string]int{"I": 1, "II": 2, "III": 3}

// readSilo reads a silo suite's aggregate.csv (the suite computes RCC
// against its baseline there; the report does not recompute it).
func readSilo(dir string) ([]siloRow, error) {
	path := filepath.Join(dir, suite.FileAggregate)
	need := []string{"agent", "level", "N", "merged_from", "protocol", "runs", "rcc_baseline"}
	for _, c := range siloCols {
		need = append(need, c.csv)
	}
	f, err := readCSV(path, need)
	if err != nil {
		return nil, err
	}
	var rows []siloRow
	agents, protos := map[string]int{}, map[string]int{}
	for _, r := range f.rows {
		row := siloRow{agent: f.get(r, "agent"), level: f.get(r, "level"), protocol: f.get(r, "protocol"), baseline: f.get(r, "rcc_baseline")}
		ints := []struct {
			col   string
			to    *int
			empty bool
		}{{"N", &row.n, false}, {"merged_from", &row.mergedFrom, true}, {"runs", &row.runs, false}}
		for _, c := range ints {
			if c.empty && f.get(r, c.col) == "" {
				continue
			}
			v, err := f.count(r, c.col)
			if err != nil {
				return nil, err
			}
			*c.to = v
		}
		if _, ok := levels[row.level]; !ok {
			return nil, fmt.Errorf("%s:%d: column level: %q is not a level (I, II or III)", path, r.line, row.level)
		}
		for _, c := range siloCols {
			v, err := f.float(r, c.csv, true)
			if err != nil {
				return nil, err
			}
			row.vals = append(row.vals, v)
		}
		if _, ok := agents[row.agent]; !ok {
			agents[row.agent] = len(agents)
		}
		if _, ok := protos[row.protocol]; !ok {
			protos[row.protocol] = len(protos)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no run has finished yet (the suite wrote no row)", path)
	}
	size := func(r *siloRow) int {
		if r.mergedFrom > 0 {
			return r.mergedFrom
		}
		return r.n
	}
	slices.SortStableFunc(rows, func(a, b siloRow) int {
		return cmp.Or(cmp.Compare(levels[a.level], levels[b.level]), cmp.Compare(size(&a), size(&b)),
			cmp.Compare(a.n, b.n), // a merged baseline (N = 1) before the runs of its N
			cmp.Compare(protos[a.protocol], protos[b.protocol]), cmp.Compare(agents[a.agent], agents[b.agent]))
	})
	return rows, nil
}

func siloSection(dir string, rows []siloRow, runs []siloRunRow) Section {
	sec := Section{Suite: dir, Kind: SectionSilo, Title: dir + ": information-silo suite (silo suite)"}
	t := Table{Title: "S, success, P, D and RCC by level × N × protocol × agent",
		Caption: "Means over the runs of each row, from the suite's aggregate.csv. S: mean fraction of agents with a correct answer; " +
			"success: fraction of runs with S = 1; P: partial correctness (ours), P_paper: the published rule; " +
			"D: the published code's communication density, D_reads: the paper's sfs density (reads by others); " +
			"RCC = 1 − S(N)/S(baseline) (the paper's, S the mean fraction correct), RCC_success the same from the success rate, against the baseline named in the last column. " +
			"Rows with \"baseline of k\" are the merged N = 1 baseline runs of N = k. ↑ higher is better, ↓ lower; D has no direction. " +
			"docs/cli.md (silo suite) defines each column.",
		Head: []string{"level", "N", "baseline of", "protocol", "agent", "runs"},
		Left: []int{0, 3, 4}}
	for _, c := range siloCols {
		t.Head = append(t.Head, c.head())
	}
	t.Head = append(t.Head, "RCC baseline")
	t.Left = append(t.Left, len(t.Head)-1)
	sec.CSVHead = []string{"level", "N", "merged_from", "protocol", "agent", "runs"}
	for _, c := range siloCols {
		sec.CSVHead = append(sec.CSVHead, c.name)
	}
	sec.CSVHead = append(sec.CSVHead, "rcc_baseline")
	for _, r := range rows {
		from, fromCSV := "–", ""
		if r.mergedFrom > 0 {
			from, fromCSV = strconv.Itoa(r.mergedFrom), strconv.Itoa(r.mergedFrom)
		}
		base := r.baseline
		if base == "" {
			base = "–"
		}
		row := []Cell{{Text: r.level}, {Text: strconv.Itoa(r.n)}, {Text: from}, {Text: r.protocol}, {Text: r.agent}, {Text: strconv.Itoa(r.runs)}}
		csvRow := []string{r.level, strconv.Itoa(r.n), fromCSV, r.protocol, r.agent, strconv.Itoa(r.runs)}
		for i, v := range r.vals {
			row = append(row, Cell{Text: fnum(v, siloCols[i].dec)})
			csvRow = append(csvRow, fcsv(v))
		}
		t.Rows = append(t.Rows, append(row, Cell{Text: base}))
		sec.CSVRows = append(sec.CSVRows, append(csvRow, r.baseline))
	}
	sec.Tables = []Table{t, siloTasksTable(runs)}
	return sec
}
