package suite

import (
	"bytes"
	"fmt"
	"io"
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
		model[0] = modelNames(c)
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

// AggregateHeader is the header of aggregate.csv.
func AggregateHeader() []string {
	return []string{"agent", "level", "N", "merged_from", "protocol", "runs", "S_mean", "success_rate", "P_mean", "P_paper_mean",
		"P_paper_crashed_runs", "D_mean", "D_reads_mean", "RCC", "RCC_success", "rcc_baseline", "C_mean", "C_code_mean"}
}

// opt4 is v with 4 decimals, or "" when !ok.
func opt4(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return f4(v)
}

func f4(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if s == "-0.0000" {
		s = "0.0000"
	}
	return s
}

func (a *Aggregate) row() []string {
	c, cc, from := "", "", ""
	if a.HasC {
		c, cc = strconv.FormatFloat(a.C, 'f', 1, 64), strconv.FormatFloat(a.CCode, 'f', 1, 64)
	}
	if a.MergedFrom > 0 {
		from = strconv.Itoa(a.MergedFrom)
	}
	return []string{a.Agent, LevelName(a.Level), strconv.Itoa(a.N), from, a.Protocol, strconv.Itoa(a.Runs),
		f4(a.S), f4(a.Success), f4(a.P), f4(a.PPaper), strconv.Itoa(a.PPaperCrashed), f4(a.D), opt4(a.DReads, a.HasDReads),
		opt4(a.RCC, a.HasRCC), opt4(a.RCCSuccess, a.HasRCCSuccess), a.RCCBaseline, c, cc}
}

// modelNames is the summary's model column of case c: the model name, or
// a mixed team's model names joined by "+".
func modelNames(c *Case) string {
	if c.Players.LLM != nil {
		return c.Players.LLM.Model
	}
	s := ""
	if c.Players.Team != nil {
		for i, m := range c.Players.Team.Members {
			if i > 0 {
				s += "+"
			}
			s += m.LLM.Model
		}
	}
	return s
}

func writeFiles(dir string, rep *Report) error {
	return suiterun.WriteFiles(dir, Files(rep)...)
}

// Files are the summary and aggregate files of rep, as a suite writes
// them (summary.csv, aggregate.csv and .md, and for mixed teams the
// per-model ones).
func Files(rep *Report) []suiterun.File {
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
	WriteModelTable(&md, rep.ModelAggregate)
	files := []suiterun.File{
		{Name: FileSummary, Data: suiterun.CSV(SummaryHeader(), rows)},
		{Name: FileAggregate, Data: suiterun.CSV(AggregateHeader(), aggRows)},
		{Name: FileAggregateMD, Data: md.Bytes()}}
	if rep.Suite.HasTeams() { // per model: only suites with mixed teams
		var mrows, marows [][]string
		for i := range rep.Cases {
			mrows = append(mrows, summaryModelRows(&rep.Cases[i])...)
		}
		for i := range rep.ModelAggregate {
			marows = append(marows, rep.ModelAggregate[i].row())
		}
		files = append(files, suiterun.File{Name: FileSummaryModels, Data: suiterun.CSV(SummaryModelsHeader(), mrows)},
			suiterun.File{Name: FileAggregateModels, Data: suiterun.CSV(AggregateModelsHeader(), marows)})
	}
	return files
}

func scope(rep *Report) string {
	base := "the merged baseline: one agent holding the merged data of the same N = k instances (rows with merged_from k)"
	if rep.Suite.Options.Baseline == BaselineSeeded {
		base = "the seeded baseline: the N = 1 row (fresh single-agent instances, one shard's worth of data)"
	}
	s := fmt.Sprintf("Mean over the runs of each agent × level × N × protocol. "+
		"RCC = 1 − S(N)/S(baseline) with S the mean fraction of correct agents (the paper's), RCC_success the same with the success rate, "+
		"for the same agent, level and protocol, against %s; empty without baseline runs or when the baseline's figure is 0. "+
		"P is ours and P_paper the published P rule (P_paper_crashed: runs where that rule crashes, scored 0); "+
		"D is the published code's density and D_reads the paper's sfs density (reads by others). "+
		"For model-backed agents C = output tokens / max rounds (paper) and C_code = (input + output tokens) / rounds run (published code). "+
		"%d of %d runs finished", base, len(rep.Cases), len(rep.Suite.Cases))
	if len(rep.Failures) > 0 {
		s += fmt.Sprintf(", %d failed (left out)", len(rep.Failures))
	}
	s += "."
	if rep.Suite.HasTeams() {
		s += " Mixed teams (agents llm-mix-…) have no baseline runs, so no RCC; the table by model breaks their runs down by each agent's model."
	}
	return s
}

// aggregateLegend says, for each figure of the aggregate table, whether
// higher (↑) or lower (↓) is better ("" for a descriptive figure,
// neither) and what it is; the table's headers carry the same arrows.
var aggregateLegend = []struct{ Col, Arrow, Meaning string }{
	{"S", "↑", "mean fraction of agents whose answer is correct (the paper's S)"},
	{"success", "↑", "fraction of runs in which every agent is correct"},
	{"P", "↑", "partial correctness, our rule (docs/silo-rounds.md)"},
	{"P_paper", "↑", "partial correctness, the published rule (the paper's tables)"},
	{"P_paper_crashed", "", "runs the published P rule cannot score (scored 0)"},
	{"D", "", "communication density as the published code counts it (descriptive)"},
	{"D_reads", "", "the paper's sfs density, reads by others counted (descriptive)"},
	{"RCC", "↓", "relative coordination cost 1 − S(N)/S(baseline)"},
	{"RCC_success", "↓", "the same from the success rate"},
	{"C", "↓", "output tokens per max round (the paper's token cost)"},
	{"C_code", "↓", "(input + output tokens) per round run (the published code's)"},
}

// WriteAggregateTable writes the aggregate as an aligned Markdown table:
// the columns of aggregate.csv under shorter names, "–" for an empty cell,
// and without the token-cost columns when no agent calls a model; the
// figures' headers carry ↑ or ↓ (which way is better), and a legend
// follows.
func WriteAggregateTable(w io.Writer, aggs []Aggregate) {
	head := []string{"agent", "level", "N", "merged_from", "protocol", "runs", "S", "success", "P", "P_paper", "P_paper_crashed",
		"D", "D_reads", "RCC", "RCC_success", "rcc_baseline", "C", "C_code"}
	arrows := map[string]string{}
	for _, l := range aggregateLegend {
		if l.Arrow != "" {
			arrows[l.Col] = " " + l.Arrow
		}
	}
	for i, h := range head {
		head[i] = h + arrows[h]
	}
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
	mdtable.Write(w, head[:keep], rows, 0, 1, 4, 15)
	var legend [][]string
	for _, l := range aggregateLegend {
		if !withC && (l.Col == "C" || l.Col == "C_code") {
			continue
		}
		better := map[string]string{"↑": "↑ higher", "↓": "↓ lower", "": "–"}[l.Arrow]
		legend = append(legend, []string{l.Col, better, l.Meaning})
	}
	fmt.Fprintf(w, "\nlegend\n")
	mdtable.Write(w, []string{"figure", "better", "meaning"}, legend, 0, 1, 2)
}
