package analyze

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/suiterun"
)

// Output files (Report.Write).
const (
	FileRuns     = "runs.csv"
	FileAgents   = "agents.csv"
	FileTopology = "topology.csv"
	FileLeaders  = "leaders.csv"
	FileLabels   = "labels.csv"
	FileRounds   = "rounds.csv"
	FileTasks    = "tasks.csv"
	FileContext  = "context.csv"
	FileMarkdown = "analysis.md"
)

// mdRunsMax bounds the per-run table of the Markdown report (runs.csv has
// every run).
const mdRunsMax = 30

func f4(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if s == "-0.0000" {
		s = "0.0000"
	}
	return s
}

func opt4(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return f4(v)
}

func levelName(l int) string {
	switch l {
	case AllLevels:
		return "all"
	case 0:
		return "?"
	}
	return suite.LevelName(l)
}

func itoa(i int) string             { return strconv.Itoa(i) }
func i64(i int64) string            { return strconv.FormatInt(i, 10) }
func btoa(b bool) string            { return strconv.FormatBool(b) }
func joinLabels(ls []string) string { return strings.Join(ls, ";") }

// RunsHeader is the header of runs.csv.
func RunsHeader() []string {
	return []string{"case_id", "task", "level", "N", "protocol", "agent", "mode", "seed", "success", "S", "rounds",
		"edges", "edge_density", "mean_out_degree", "max_out_degree", "max_in_degree", "degree_gini", "traffic",
		"hub", "hub_degree", "hub_out", "hub_in", "hub_reached", "hub_reached_frac", "hub_share", "leader",
		"merged_from", "hub_submit_round", "hub_reached_at_submit"}
}

func (r *Run) row() []string {
	t := &r.Topology
	seed := ""
	if r.Mode != "official" {
		seed = strconv.FormatUint(r.Seed, 10)
	}
	hub := make([]string, 7)
	if t.Hub >= 0 {
		h := t.Agents[t.Hub]
		frac := 0.0
		if r.N > 1 {
			frac = float64(h.Reached) / float64(r.N-1)
		}
		hub = []string{itoa(t.Hub), itoa(h.Degree), itoa(h.Out), itoa(h.In), itoa(h.Reached), f4(frac), f4(t.HubShare)}
	}
	leader := ""
	if t.LeaderDefined {
		leader = btoa(t.Leader)
	}
	merged, sub, atSub := "", "", ""
	if r.MergedFrom > 0 {
		merged = itoa(r.MergedFrom)
	}
	if t.Hub >= 0 {
		atSub = itoa(t.HubReachedAtSubmit)
		if t.HubSubmit > 0 {
			sub = itoa(t.HubSubmit)
		}
	}
	row := []string{r.ID, r.Task, levelName(r.Level), itoa(r.N), r.Protocol, r.Agent, r.Mode, seed, btoa(r.Success),
		strconv.FormatFloat(r.S, 'f', -1, 64), itoa(r.Rounds), itoa(t.Edges), f4(t.EdgeDensity), f4(t.MeanOut),
		itoa(t.MaxOut), itoa(t.MaxIn), f4(t.Gini), i64(t.Traffic)}
	return append(append(row, hub...), leader, merged, sub, atSub)
}

// AgentsHeader is the header of agents.csv: fixed columns, then one column
// per label field (labels joined by ';').
func AgentsHeader(fields []string) []string {
	h := []string{"case_id", "agent_id", "out_degree", "in_degree", "degree", "reached", "sent", "received", "traffic",
		"hub", "submitted", "correct"}
	return append(h, fields...)
}

func (r *Run) agentRows(fields []string) [][]string {
	var rows [][]string
	for i, a := range r.Topology.Agents {
		o := r.Agents[i]
		row := []string{r.ID, itoa(i), itoa(a.Out), itoa(a.In), itoa(a.Degree), itoa(a.Reached), i64(a.Sent),
			i64(a.Received), i64(a.Traffic), btoa(i == r.Topology.Hub), btoa(o.Submitted), btoa(o.Correct)}
		for _, f := range fields {
			row = append(row, joinLabels(o.Labels[f]))
		}
		rows = append(rows, row)
	}
	return rows
}

// TopologyHeader is the header of topology.csv.
func TopologyHeader() []string {
	return []string{"agent", "level", "N", "merged_from", "protocol", "runs", "success_rate", "rounds_mean",
		"rounds_success_mean", "rounds_failed_mean", "edge_density_mean", "out_degree_mean", "max_out_mean",
		"max_in_mean", "gini_mean", "hub_share_mean", "hub_reached_mean", "hub_reached_frac_mean",
		"hub_reached_at_submit_frac_mean", "hub0_rate", "leader_rate"}
}

func (t *TopologyRow) row() []string {
	merged := ""
	if t.MergedFrom > 0 {
		merged = itoa(t.MergedFrom)
	}
	return []string{t.Agent, levelName(t.Level), itoa(t.N), merged, t.Protocol, itoa(t.Runs), f4(t.Success),
		f4(t.Rounds), opt4(t.RoundsSuccess, t.HasRoundsSuccess), opt4(t.RoundsFailed, t.HasRoundsFailed),
		f4(t.EdgeDensity), f4(t.MeanOut), f4(t.MaxOut), f4(t.MaxIn), f4(t.Gini), f4(t.HubShare), f4(t.HubReached),
		f4(t.HubReachedFrac), f4(t.HubReachedAtSubmitFrac), f4(t.Hub0), opt4(t.Leader, t.HasLeader)}
}

// RoundsHeader is the header of rounds.csv.
func RoundsHeader() []string {
	return []string{"agent", "runs", "successful_runs", "rounds_success_mean", "rounds_failed_mean"}
}

func (r *RoundsRow) row() []string {
	return []string{r.Agent, itoa(r.Runs), itoa(r.Successes), opt4(r.RoundsSuccess, r.HasRoundsSuccess),
		opt4(r.RoundsFailed, r.HasRoundsFailed)}
}

// TasksHeader is the header of tasks.csv.
func TasksHeader() []string {
	return []string{"agent", "level", "task", "protocol", "runs", "success_rate", "S_mean"}
}

func (r *TaskRow) row() []string {
	return []string{r.Agent, levelName(r.Level), r.Task, r.Protocol, itoa(r.Runs), f4(r.Success), f4(r.S)}
}

// ContextHeader is the header of context.csv.
func ContextHeader() []string {
	h := []string{"agent", "runs", "calls", "prompt_tokens_mean"}
	for _, p := range ContextPercentiles {
		h = append(h, "prompt_tokens_p"+itoa(p))
	}
	return append(h, "prompt_tokens_max", "run_max_prompt_tokens_mean")
}

func (r *ContextRow) row() []string {
	row := []string{r.Agent, itoa(r.Runs), itoa(r.Calls), f4(r.Mean)}
	for _, v := range r.P {
		row = append(row, i64(v))
	}
	return append(row, i64(r.Max), f4(r.RunMaxMean))
}

// LeadersHeader is the header of leaders.csv.
func LeadersHeader() []string {
	return []string{"agent", "level", "protocol", "runs", "leader_runs", "leader_rate", "success_with_leader",
		"success_without_leader"}
}

func (l *LeaderRow) row() []string {
	return []string{l.Agent, levelName(l.Level), l.Protocol, itoa(l.Runs), itoa(l.Leaders),
		f4(float64(l.Leaders) / float64(l.Runs)), opt4(l.SuccessWith, l.HasSuccessWith),
		opt4(l.SuccessWithout, l.HasSuccessWithout)}
}

// LabelsHeader is the header of labels.csv.
func LabelsHeader() []string {
	return []string{"field", "agent", "level", "protocol", "label_a", "label_b", "agents", "runs", "group_runs", "group_agents"}
}

func (l *LabelRow) row() []string {
	return []string{l.Field, l.Agent, levelName(l.Level), l.Protocol, l.A, l.B, itoa(l.Agents), itoa(l.Runs),
		itoa(l.GroupRuns), itoa(l.GroupAgents)}
}

// Files returns the report's output files.
func (rep *Report) Files() []suiterun.File {
	var runs, agents, topo, leaders, labels, rounds, tasks, ctx [][]string
	for i := range rep.Runs {
		runs = append(runs, rep.Runs[i].row())
		agents = append(agents, rep.Runs[i].agentRows(rep.Fields)...)
	}
	for i := range rep.Topology {
		topo = append(topo, rep.Topology[i].row())
	}
	for i := range rep.Leaders {
		leaders = append(leaders, rep.Leaders[i].row())
	}
	for i := range rep.Rounds {
		rounds = append(rounds, rep.Rounds[i].row())
	}
	for i := range rep.Tasks {
		tasks = append(tasks, rep.Tasks[i].row())
	}
	for i := range rep.Context {
		ctx = append(ctx, rep.Context[i].row())
	}
	for i := range rep.Labels {
		labels = append(labels, rep.Labels[i].row())
	}
	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	return []suiterun.File{
		{Name: FileRuns, Data: suiterun.CSV(RunsHeader(), runs)},
		{Name: FileAgents, Data: suiterun.CSV(AgentsHeader(rep.Fields), agents)},
		{Name: FileTopology, Data: suiterun.CSV(TopologyHeader(), topo)},
		{Name: FileLeaders, Data: suiterun.CSV(LeadersHeader(), leaders)},
		{Name: FileLabels, Data: suiterun.CSV(LabelsHeader(), labels)},
		{Name: FileRounds, Data: suiterun.CSV(RoundsHeader(), rounds)},
		{Name: FileTasks, Data: suiterun.CSV(TasksHeader(), tasks)},
		{Name: FileContext, Data: suiterun.CSV(ContextHeader(), ctx)},
		{Name: FileMarkdown, Data: md.Bytes()},
	}
}

// Write writes the output files into dir (created if needed), each
// through a temporary file and a rename.
func (rep *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return suiterun.WriteFiles(dir, rep.Files()...)
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// WriteMarkdown writes the Markdown report.
func (rep *Report) WriteMarkdown(w io.Writer) {
	what := "one run"
	if rep.Suite {
		what = fmt.Sprintf("a suite of %d finished runs", len(rep.Runs))
	}
	fmt.Fprintf(w, "# SILO-BENCH analysis\n\nAnalysis of %s. Definitions: docs/silo-analyze.md. "+
		"Edges: p2p messages, broadcasts (to every other agent), sfs reads of another agent's file.\n\n", what)

	fmt.Fprintf(w, "## Topology by agent × level × N × protocol\n\n")
	fmt.Fprintf(w, "Means over the runs. N \"1 (of k)\": the merged baseline runs of N = k. "+
		"rounds ok / failed: mean rounds of successful / failed runs. "+
		"reach: peers the hub reached / (N−1); at submit: by the end of the round the hub submitted in. "+
		"hub0: runs whose hub is agent 0. leader: leader-emergence rate (N ≥ 3).\n\n")
	head := []string{"agent", "level", "N", "protocol", "runs", "success", "rounds ok", "rounds failed", "density",
		"mean out", "max out", "max in", "Gini", "hub share", "reach", "reach at submit", "hub0", "leader"}
	var rows [][]string
	for i := range rep.Topology {
		r := rep.Topology[i].row()
		n := r[2]
		if r[3] != "" {
			n += " (of " + r[3] + ")"
		}
		rows = append(rows, []string{r[0], r[1], n, r[4], r[5], r[6], dash(r[8]), dash(r[9]), r[10], r[11], r[12],
			r[13], r[14], r[15], r[17], r[18], r[19], dash(r[20])})
	}
	mdtable.Write(w, head, rows, 0, 1, 3)

	rep.writeRounds(w)
	rep.writeTasks(w)

	fmt.Fprintf(w, "\n## Leader emergence and success (runs with N ≥ 3)\n\n")
	if len(rep.Leaders) == 0 {
		fmt.Fprintf(w, "No run has N ≥ 3.\n")
	} else {
		rows = rows[:0]
		for i := range rep.Leaders {
			r := rep.Leaders[i].row()
			rows = append(rows, []string{r[0], r[1], r[2], r[3], r[4], r[5], dash(r[6]), dash(r[7])})
		}
		mdtable.Write(w, []string{"agent", "level", "protocol", "runs", "leader runs", "leader rate",
			"success with leader", "success without"}, rows, 0, 1, 2)
	}

	fmt.Fprintf(w, "\n## Failure-mode co-occurrence\n\n")
	fmt.Fprintf(w, "Multi-agent runs only, as in the paper's appendix G.2: single-agent (N = 1) baseline runs are left out.\n")
	rep.writeLabelMatrices(w)

	rep.writeContext(w)

	if len(rep.Runs) <= mdRunsMax {
		fmt.Fprintf(w, "\n## Runs\n\n")
		rows = rows[:0]
		for i := range rep.Runs {
			r := rep.Runs[i].row()
			peers := " / " + itoa(rep.Runs[i].N-1)
			rows = append(rows, []string{r[0], r[8], r[10], r[11], r[12], r[16], dash(r[18]), dash(r[22]) + peers,
				dash(r[27]), dash(r[28]) + peers, dash(r[24]), dash(r[25])})
		}
		mdtable.Write(w, []string{"run", "success", "rounds", "edges", "density", "Gini", "hub", "hub reached",
			"hub submit round", "reached at submit", "hub share", "leader"}, rows, 0, 1)
	}
	if !rep.Suite && len(rep.Runs) == 1 {
		r := &rep.Runs[0]
		fmt.Fprintf(w, "\n## Agents\n\n")
		rows = rows[:0]
		left := []int{8, 9, 10} // hub, submitted, correct, then the label fields
		for j := range rep.Fields {
			left = append(left, 11+j)
		}
		for _, a := range r.agentRows(rep.Fields) {
			row := slices.Clone(a[1:12])
			for _, l := range a[12:] {
				row = append(row, dash(l))
			}
			rows = append(rows, row)
		}
		mdtable.Write(w, append([]string{"agent", "out", "in", "degree", "reached", "sent", "received", "traffic", "hub",
			"submitted", "correct"}, rep.Fields...), rows, left...)
	}
}

// writeLabelMatrices writes, per label field and agent, the co-occurrence
// matrix over everything and per level × protocol.
func (rep *Report) writeLabelMatrices(w io.Writer) {
	if len(rep.Labels) == 0 {
		fmt.Fprintf(w, "No agent carries a failure label.\n")
		return
	}
	fmt.Fprintf(w, "Cell: agents carrying both labels (runs in which both occur, on any agents); "+
		"the diagonal counts one label.\n")
	type gkey struct {
		field, agent string
		level        int
		protocol     string
	}
	var keys []gkey
	cells := map[gkey]map[[2]string]string{}
	totals := map[gkey][2]int{}
	for _, l := range rep.Labels {
		k := gkey{l.Field, l.Agent, l.Level, l.Protocol}
		if cells[k] == nil {
			cells[k] = map[[2]string]string{}
			keys = append(keys, k)
			totals[k] = [2]int{l.GroupRuns, l.GroupAgents}
		}
		cell := fmt.Sprintf("%d (%d)", l.Agents, l.Runs)
		cells[k][[2]string{l.A, l.B}] = cell
		cells[k][[2]string{l.B, l.A}] = cell
	}
	for _, k := range keys { // LabelRow order: field, agent, level, protocol
		scope := "all levels and protocols"
		if k.level != AllLevels || k.protocol != AllProtocols {
			scope = "level " + levelName(k.level) + ", " + k.protocol
		}
		tot := totals[k]
		fmt.Fprintf(w, "\n### `%s`, agent %s, %s (%d runs, %d agents)\n\n", k.field, k.agent, scope, tot[0], tot[1])
		ls := rep.LabelOrder[k.field]
		var rows [][]string
		for _, a := range ls {
			row := []string{a}
			for _, b := range ls {
				row = append(row, dash(cells[k][[2]string{a, b}]))
			}
			rows = append(rows, row)
		}
		mdtable.Write(w, append([]string{""}, ls...), rows, 0)
	}
}
