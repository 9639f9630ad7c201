package report

import (
	"cmp"
	"slices"
	"strconv"
)

// The per-task table of a silo suite (the paper's Table 10), from its
// summary.csv: success rate and mean S per task, one column pair per
// protocol, over the multi-agent runs of each agent.

// siloVsPaperNote points from the silo tables to the page of differences
// from the paper.
const siloVsPaperNote = "Differences from the paper and its published code, each with the switch that removes it where one exists: docs/silo-vs-paper.md."

// siloTasksTable is the per-task table of runs: one row per agent × task,
// for each protocol its multi-agent runs' success rate and mean S, then
// the same over every protocol. Baseline and other N = 1 runs are left
// out, as the paper's Table 10 has teams only.
func siloTasksTable(runs []siloRunRow) Table {
	type key struct{ agent, task, protocol string }
	type acc struct {
		runs       int
		succ, s    float64
		level      string
		firstIndex int
	}
	const all = "all"
	var protoSet distinct[string]
	groups := map[key]*acc{}
	var order []key // agent × task, first seen
	for i, r := range runs {
		if r.baseline || r.n < 2 {
			continue
		}
		protoSet.add(r.protocol)
		for _, p := range []string{r.protocol, all} {
			k := key{r.agent, r.task, p}
			a := groups[k]
			if a == nil {
				a = &acc{level: r.level, firstIndex: i}
				groups[k] = a
				if p == all {
					order = append(order, k)
				}
			}
			a.runs++
			a.succ += r.success
			a.s += r.S // NaN stays NaN: shown as –
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		ga, gb := groups[a], groups[b]
		return cmp.Or(cmp.Compare(levels[ga.level], levels[gb.level]), cmp.Compare(a.task, b.task),
			cmp.Compare(ga.firstIndex, gb.firstIndex))
	})
	protos := append(protoSet.list, all)
	t := Table{Title: "Success and S by task (the paper's Table 10)",
		Caption: "Per task and protocol over the multi-agent runs of each agent (merged and other N = 1 baseline runs left out): " +
			"success rate / mean S, and runs. The paper's Table 10 pools its team sizes the same way.",
		Head: []string{"level", "task", "agent"}, Left: []int{0, 1, 2}, Notes: []string{siloVsPaperNote}}
	for _, p := range protos {
		t.Head = append(t.Head, p+" success ↑", p+" S ↑", p+" runs")
	}
	for _, k := range order {
		row := []Cell{{Text: groups[k].level}, {Text: k.task}, {Text: k.agent}}
		for _, p := range protos {
			a := groups[key{k.agent, k.task, p}]
			if a == nil {
				row = append(row, Cell{Text: "–"}, Cell{Text: "–"}, Cell{Text: "0"})
				continue
			}
			n := float64(a.runs)
			row = append(row, Cell{Text: fnum(a.succ/n, 4)}, Cell{Text: fnum(a.s/n, 4)}, Cell{Text: strconv.Itoa(a.runs)})
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		t.Notes = append([]string{"No multi-agent run has finished yet."}, t.Notes...)
	}
	return t
}
