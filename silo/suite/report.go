package suite

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/suiterun"
)

// SummaryHeader is the header of summary.csv (one row per finished run).
func SummaryHeader() []string {
	h := []string{"case_id", "task", "level", "N", "protocol", "agent", "mode", "seed",
		"S", "success", "P", "P_paper", "P_paper_crashes", "P_fine", "rounds", "tool_calls", "messages", "bytes", "D", "D_reads",
		"model", "model_calls", "input_tokens", "output_tokens", "C", "C_code", "wasted_calls", "model_errors",
		"max_context_tokens", "capped_turns", "agent_errors"}
	return append(h, failureLabels...)
}

// failureLabels are the failure-label columns of summary.csv: the number of
// agents of the run carrying each label.
var failureLabels = []string{round.LabelPremature, round.LabelConsensus, round.LabelComputation, round.LabelNoSubmission}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func summaryRow(r *CaseResult) []string {
	c, res := &r.Case, r.Result
	seed := ""
	if c.Mode != "official" {
		seed = strconv.FormatUint(c.Seed, 10)
	}
	dr := ""
	if res.DReads != nil {
		dr = ff(*res.DReads)
	}
	row := []string{c.ID, c.Task.ID, LevelName(c.Task.Level), strconv.Itoa(c.N), string(c.Protocol), c.Agent, c.Mode, seed,
		ff(res.S), strconv.FormatBool(res.Success), ff(res.P), ff(res.PPaper), strconv.Itoa(res.PPaperCrashes), ff(res.PFine), strconv.Itoa(res.Rounds),
		strconv.Itoa(res.ToolCalls), strconv.Itoa(res.Messages), strconv.FormatInt(res.Bytes, 10), ff(res.D), dr}
	model := make([]string, 8) // empty for scripted agents
	if u := res.Usage; u != nil && res.C != nil && res.CCode != nil {
		if c.Players.LLM != nil {
			model[0] = c.Players.LLM.Model
		}
		model[1] = strconv.Itoa(u.ModelCalls)
		model[2] = strconv.FormatInt(u.InputTokens, 10)
		model[3] = strconv.FormatInt(u.OutputTokens, 10)
		model[4], model[5] = ff(*res.C), ff(*res.CCode)
		model[6], model[7] = strconv.Itoa(u.WastedCalls), strconv.Itoa(u.ModelErrors)
		model = append(model, strconv.FormatInt(u.MaxContextTokens, 10))
	} else {
		model = append(model, "")
	}
	row = append(row, model...)
	row = append(row, strconv.Itoa(res.CappedTurns), strconv.Itoa(len(res.AgentErrors)))
	for _, l := range failureLabels {
		row = append(row, strconv.Itoa(res.Failures[l]))
	}
	return row
}

// Aggregate is one row of the aggregate table: the runs of one agent,
// level, N and protocol.
type Aggregate struct {
	Agent    string
	Level    int
	N        int
	Protocol string
	Runs     int
	S        float64 // mean S over the runs
	Success  float64 // fraction of runs with S = 1
	P        float64 // mean P (ours)
	// PPaper is the mean P_paper (the published rule); PPaperCrashed
	// counts the runs in which that rule crashed for some agent.
	PPaper        float64
	PPaperCrashed int
	D             float64 // mean D (the published code's count)
	// DReads is the mean D_reads (the paper's sfs density, reads by
	// others), over the runs that have one (HasDReads: sfs).
	DReads     float64
	HasDReads  bool
	dReadsRuns int
	// RCC = 1 − S(N)/S(N=1) for the same agent, level and protocol; HasRCC
	// is false without an N = 1 row or when its S is 0.
	RCC    float64
	HasRCC bool
	// C and CCode are the mean token cost (paper and code form) over the
	// runs, for agents that call a model (HasC).
	C, CCode float64
	HasC     bool
}

// Aggregates groups finished runs by agent × level × N × protocol, in
// that order (agents and protocols in first-seen suite order).
func Aggregates(cases []CaseResult) []Aggregate {
	type key struct {
		agent    string
		level, n int
		protocol string
	}
	idx := map[key]int{}
	var out []Aggregate
	var agents, protos []string
	for i := range cases {
		c, res := &cases[i].Case, cases[i].Result
		if !slices.Contains(agents, c.Agent) {
			agents = append(agents, c.Agent)
		}
		if !slices.Contains(protos, string(c.Protocol)) {
			protos = append(protos, string(c.Protocol))
		}
		k := key{c.Agent, c.Task.Level, c.N, string(c.Protocol)}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, Aggregate{Agent: c.Agent, Level: c.Task.Level, N: c.N, Protocol: string(c.Protocol)})
		}
		a := &out[j]
		a.Runs++
		a.S += res.S
		a.P += res.P
		a.PPaper += res.PPaper
		if res.PPaperCrashes > 0 {
			a.PPaperCrashed++
		}
		a.D += res.D
		if res.DReads != nil {
			a.DReads += *res.DReads
			a.dReadsRuns++
		}
		if res.Success {
			a.Success++
		}
		if res.C != nil && res.CCode != nil {
			a.C += *res.C
			a.CCode += *res.CCode
			a.HasC = true
		}
	}
	for i := range out {
		a := &out[i]
		n := float64(a.Runs)
		a.S, a.P, a.PPaper, a.D, a.Success = a.S/n, a.P/n, a.PPaper/n, a.D/n, a.Success/n
		if a.dReadsRuns > 0 {
			a.DReads, a.HasDReads = a.DReads/float64(a.dReadsRuns), true
		}
		a.C, a.CCode = a.C/n, a.CCode/n
	}
	for i := range out {
		a := &out[i]
		if j, ok := idx[key{a.Agent, a.Level, 1, a.Protocol}]; ok && out[j].S != 0 {
			a.RCC, a.HasRCC = 1-a.S/out[j].S, true
		}
	}
	slices.SortStableFunc(out, func(a, b Aggregate) int {
		if c := slices.Index(agents, a.Agent) - slices.Index(agents, b.Agent); c != 0 {
			return c
		}
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		if a.N != b.N {
			return a.N - b.N
		}
		return slices.Index(protos, a.Protocol) - slices.Index(protos, b.Protocol)
	})
	return out
}

// AggregateHeader is the header of aggregate.csv.
func AggregateHeader() []string {
	return []string{"agent", "level", "N", "protocol", "runs", "S_mean", "success_rate", "P_mean", "P_paper_mean", "P_paper_crashed_runs",
		"D_mean", "D_reads_mean", "RCC", "C_mean", "C_code_mean"}
}

func (a *Aggregate) rcc() string {
	if !a.HasRCC {
		return ""
	}
	return f4(a.RCC)
}

func f4(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if s == "-0.0000" {
		s = "0.0000"
	}
	return s
}

func (a *Aggregate) row() []string {
	c, cc, dr := "", "", ""
	if a.HasDReads {
		dr = f4(a.DReads)
	}
	if a.HasC {
		c, cc = strconv.FormatFloat(a.C, 'f', 1, 64), strconv.FormatFloat(a.CCode, 'f', 1, 64)
	}
	return []string{a.Agent, LevelName(a.Level), strconv.Itoa(a.N), a.Protocol, strconv.Itoa(a.Runs),
		f4(a.S), f4(a.Success), f4(a.P), f4(a.PPaper), strconv.Itoa(a.PPaperCrashed), f4(a.D), dr, a.rcc(), c, cc}
}

func writeFiles(dir string, rep *Report) error {
	rows := make([][]string, len(rep.Cases))
	for i := range rep.Cases {
		rows[i] = summaryRow(&rep.Cases[i])
	}
	aggRows := make([][]string, len(rep.Aggregate))
	for i := range rep.Aggregate {
		aggRows[i] = rep.Aggregate[i].row()
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# SILO-BENCH suite aggregate\n\n%s\n\n", scope(rep))
	WriteAggregateTable(&md, rep.Aggregate)
	return suiterun.WriteFiles(dir,
		suiterun.File{Name: FileSummary, Data: suiterun.CSV(SummaryHeader(), rows)},
		suiterun.File{Name: FileAggregate, Data: suiterun.CSV(AggregateHeader(), aggRows)},
		suiterun.File{Name: FileAggregateMD, Data: md.Bytes()})
}

func scope(rep *Report) string {
	s := fmt.Sprintf("Mean over the runs of each agent × level × N × protocol; RCC = 1 − S(N)/S(N=1) "+
		"for the same agent, level and protocol (empty without an N = 1 run or when S(N=1) = 0); "+
		"for model-backed agents C = output tokens / max rounds (paper) and C_code = (input + output tokens) / rounds run (published code). "+
		"%d of %d runs finished", len(rep.Cases), len(rep.Suite.Cases))
	if len(rep.Failures) > 0 {
		s += fmt.Sprintf(", %d failed (left out)", len(rep.Failures))
	}
	return s + "."
}

// WriteAggregateTable writes the aggregate as an aligned Markdown table:
// the columns of aggregate.csv under shorter names, "–" for an empty cell,
// and without the token-cost columns when no agent calls a model.
func WriteAggregateTable(w io.Writer, aggs []Aggregate) {
	head := []string{"agent", "level", "N", "protocol", "runs", "S", "success", "P", "P_paper", "P_paper_crashed",
		"D", "D_reads", "RCC", "C", "C_code"}
	withC := false
	for i := range aggs {
		withC = withC || aggs[i].HasC
	}
	keep := len(head)
	if !withC { // scripted agents only: no token cost columns
		keep -= 2
	}
	rows := make([][]string, len(aggs))
	for i := range aggs {
		r := aggs[i].row()[:keep]
		for j := range r {
			if r[j] == "" {
				r[j] = "–"
			}
		}
		rows[i] = r
	}
	mdtable.Write(w, head[:keep], rows, 0, 1, 3)
}
