package analyze

import (
	"fmt"
	"io"
	"slices"

	"github.com/coordbench/coordbench/internal/mdtable"
)

// writeRounds writes the rounds of successful against failed runs over
// all multi-agent runs (Table 16 overall).
func (rep *Report) writeRounds(w io.Writer) {
	fmt.Fprintf(w, "\n## Rounds of successful and failed runs, overall\n\n")
	if len(rep.Rounds) == 0 {
		fmt.Fprintf(w, "No multi-agent run.\n")
		return
	}
	fmt.Fprintf(w, "Over every multi-agent run of each agent (the paper's Table 16 overall: 8.3 rounds against 12.7); "+
		"the topology table above has them per level × N × protocol.\n\n")
	var rows [][]string
	for i := range rep.Rounds {
		r := rep.Rounds[i].row()
		rows = append(rows, []string{r[0], r[1], r[2], dash(r[3]), dash(r[4])})
	}
	mdtable.Write(w, []string{"agent", "runs", "successful", "rounds ok", "rounds failed"}, rows, 0)
}

// writeTasks writes the per-task table (the paper's Table 10): per agent,
// one row per task, one column per protocol.
func (rep *Report) writeTasks(w io.Writer) {
	fmt.Fprintf(w, "\n## Results by task\n\n")
	if len(rep.Tasks) == 0 {
		fmt.Fprintf(w, "No multi-agent run.\n")
		return
	}
	fmt.Fprintf(w, "The paper's Table 10: per task and protocol over the multi-agent runs, "+
		"success rate / mean S (runs in tasks.csv).\n\n")
	var protos []string
	seen := map[string]bool{}
	for _, t := range rep.Tasks { // sorted by protocol within a task
		if !seen[t.Protocol] {
			seen[t.Protocol] = true
			protos = append(protos, t.Protocol)
		}
	}
	slices.SortFunc(protos, cmpProto)
	col := map[string]int{}
	head := []string{"agent", "level", "task"}
	for i, p := range protos {
		col[p] = 3 + i
		head = append(head, p)
	}
	var rows [][]string
	for _, t := range rep.Tasks {
		if n := len(rows); n == 0 || rows[n-1][0] != t.Agent || rows[n-1][2] != t.Task {
			row := []string{t.Agent, levelName(t.Level), t.Task}
			rows = append(rows, append(row, make([]string, len(protos))...))
		}
		rows[len(rows)-1][col[t.Protocol]] = f4(t.Success) + " / " + f4(t.S)
	}
	for _, r := range rows {
		for i := range r {
			r[i] = dash(r[i])
		}
	}
	mdtable.Write(w, head, rows, 0, 1, 2)
}

// writeContext writes the context use of the runs with a turn log (the
// paper's appendix D).
func (rep *Report) writeContext(w io.Writer) {
	fmt.Fprintf(w, "\n## Context use\n\n")
	if len(rep.Context) == 0 {
		fmt.Fprintf(w, "No run has a turn log (%s): scripted agents make no model calls.\n", FileTurnsLog)
		return
	}
	fmt.Fprintf(w, "Prompt tokens of each model call as the server counted them (%s), the paper's appendix D; "+
		"percentiles by nearest rank; run max: mean over runs of a run's largest prompt. "+
		"Divide by the model's context window for utilisation.\n\n", FileTurnsLog)
	head := []string{"agent", "runs", "calls", "mean"}
	for _, p := range ContextPercentiles {
		head = append(head, "p"+itoa(p))
	}
	head = append(head, "max", "run max")
	var rows [][]string
	for i := range rep.Context {
		rows = append(rows, rep.Context[i].row())
	}
	mdtable.Write(w, head, rows, 0)
}
