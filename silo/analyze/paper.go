package analyze

import (
	"cmp"
	"slices"
)

// RoundsRow compares the rounds of successful and failed runs of one agent
// kind over all its multi-agent runs (the paper's Table 16 overall: 8.3
// against 12.7 rounds); TopologyRow has the same per level × N × protocol.
type RoundsRow struct {
	Agent     string
	Runs      int
	Successes int
	// RoundsSuccess and RoundsFailed are the mean rounds of the successful
	// and of the failed runs (Has… false when there are none).
	RoundsSuccess, RoundsFailed       float64
	HasRoundsSuccess, HasRoundsFailed bool
}

// TaskRow is one task's results for one agent kind and protocol over its
// multi-agent runs (the paper's Table 10; AllProtocols: every protocol).
type TaskRow struct {
	Agent    string
	Task     string
	Level    int
	Protocol string
	Runs     int
	Success  float64 // success rate
	S        float64 // mean S
}

// roundsRows groups the runs with N >= 2 by agent kind.
func roundsRows(runs []Run) []RoundsRow {
	type acc struct{ runs, succ, succRounds, failRounds int }
	groups := map[string]*acc{}
	for i := range runs {
		r := &runs[i]
		if r.N < 2 {
			continue
		}
		a := entry(groups, r.Agent)
		a.runs++
		if r.Success {
			a.succ++
			a.succRounds += r.Rounds
		} else {
			a.failRounds += r.Rounds
		}
	}
	var out []RoundsRow
	for agent, a := range groups {
		row := RoundsRow{Agent: agent, Runs: a.runs, Successes: a.succ}
		if a.succ > 0 {
			row.RoundsSuccess, row.HasRoundsSuccess = float64(a.succRounds)/float64(a.succ), true
		}
		if fail := a.runs - a.succ; fail > 0 {
			row.RoundsFailed, row.HasRoundsFailed = float64(a.failRounds)/float64(fail), true
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b RoundsRow) int { return cmp.Compare(a.Agent, b.Agent) })
	return out
}

// taskRows groups the runs with N >= 2 by agent × task × protocol, and by
// agent × task over every protocol.
func taskRows(runs []Run) []TaskRow {
	type key struct{ agent, task, protocol string }
	type acc struct {
		level, runs, succ int
		s                 float64
	}
	groups := map[key]*acc{}
	for i := range runs { // in run order: sums are deterministic
		r := &runs[i]
		if r.N < 2 {
			continue
		}
		for _, p := range []string{r.Protocol, AllProtocols} {
			k := key{r.Agent, r.Task, p}
			a := groups[k]
			if a == nil {
				a = &acc{level: r.Level}
				groups[k] = a
			}
			a.runs++
			a.s += r.S
			if r.Success {
				a.succ++
			}
		}
	}
	var out []TaskRow
	for k, a := range groups {
		out = append(out, TaskRow{Agent: k.agent, Task: k.task, Level: a.level, Protocol: k.protocol, Runs: a.runs,
			Success: float64(a.succ) / float64(a.runs), S: a.s / float64(a.runs)})
	}
	slices.SortFunc(out, func(a, b TaskRow) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Level, b.Level), cmp.Compare(a.Task, b.Task),
			cmpProto(a.Protocol, b.Protocol))
	})
	return out
}

// entry is groups[k], added (zero) when missing.
func entry[K comparable, V any](groups map[K]*V, k K) *V {
	a := groups[k]
	if a == nil {
		a = new(V)
		groups[k] = a
	}
	return a
}
