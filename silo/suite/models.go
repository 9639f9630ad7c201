package suite

// The figures per model of mixed teams: one summary row per run × model
// (FileSummaryModels) and their means by team × model × level × N ×
// protocol (FileAggregateModels, and a table in aggregate.md). Written
// only by suites with mixed teams, so that the directories of other
// suites hold what they held.

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/silo/round"
)

// Files of a suite with mixed teams.
const (
	FileSummaryModels   = "summary_models.csv"
	FileAggregateModels = "aggregate_models.csv"
)

// SummaryModelsHeader is the header of summary_models.csv: one row per
// model of each finished run of a mixed team.
func SummaryModelsHeader() []string {
	h := []string{"case_id", "task", "level", "N", "protocol", "agent", "mode", "seed", "model", "agents", "agent_ids",
		"submitted", "correct", "S", "P", "P_paper", "tool_calls", "messages", "bytes", "D",
		"model_calls", "input_tokens", "output_tokens", "wasted_calls", "model_errors", "max_context_tokens",
		"capped_turns", "agent_errors"}
	return append(h, failureLabels...)
}

func summaryModelRows(r *CaseResult) [][]string {
	lead := summaryRow(r)[:8] // case_id … seed
	var out [][]string
	for _, m := range r.Result.ByModel {
		row := append(slices.Clone(lead), m.Model, strconv.Itoa(len(m.Agents)), round.AgentRange(m.Agents),
			strconv.Itoa(m.Submitted), strconv.Itoa(m.Correct), ff(m.S), ff(m.P), ff(m.PPaper),
			strconv.Itoa(m.ToolCalls), strconv.Itoa(m.Messages), strconv.FormatInt(m.Bytes, 10), ff(m.D))
		u := m.Usage
		if u == nil {
			u = &round.Usage{}
		}
		row = append(row, strconv.Itoa(u.ModelCalls), strconv.FormatInt(u.InputTokens, 10), strconv.FormatInt(u.OutputTokens, 10),
			strconv.Itoa(u.WastedCalls), strconv.Itoa(u.ModelErrors), strconv.FormatInt(u.MaxContextTokens, 10),
			strconv.Itoa(m.CappedTurns), strconv.Itoa(m.AgentErrors))
		for _, l := range failureLabels {
			row = append(row, strconv.Itoa(m.Failures[l]))
		}
		out = append(out, row)
	}
	return out
}

// ModelAggregate is one row of the per-model aggregate: the agents one
// model played in the runs of one mixed team, level, N and protocol.
type ModelAggregate struct {
	Agent, Model string // the team's label, the model's
	Level, N     int
	Protocol     string
	Runs         int
	Agents       int     // agents the model played per run
	S            float64 // mean fraction of its agents correct
	Success      float64 // fraction of runs in which all its agents are correct
	P, PPaper    float64 // mean partial correctness of its agents
	D            float64 // mean part of D its agents' messages make
	Messages     float64 // mean messages its agents sent per run
	// Per agent of the model, over all runs: turns (model calls), input
	// and output tokens, and the fraction carrying each failure label
	// (failureLabels order).
	Turns, InputTokens, OutputTokens float64
	Labels                           []float64
	agentRuns                        int
}

type modelKey struct {
	agent, model string
	level, n     int
	protocol     string
}

// ModelAggregates groups the per-model figures of the finished runs of
// mixed teams by team × model × level × N × protocol, in first-seen suite
// order of teams, their models (member order), levels, N and protocols;
// nil when no run is of a mixed team.
func ModelAggregates(cases []CaseResult) []ModelAggregate {
	idx := map[modelKey]int{}
	var out []ModelAggregate
	for i := range cases {
		c, res := &cases[i].Case, cases[i].Result
		for _, m := range res.ByModel {
			k := modelKey{c.Agent, m.Model, c.Task.Level, c.N, string(c.Protocol)}
			j, ok := idx[k]
			if !ok {
				j = len(out)
				idx[k] = j
				out = append(out, ModelAggregate{Agent: c.Agent, Model: m.Model, Level: c.Task.Level, N: c.N, Protocol: string(c.Protocol),
					Agents: len(m.Agents), Labels: make([]float64, len(failureLabels))})
			}
			a := &out[j]
			a.Runs++
			a.agentRuns += len(m.Agents)
			a.S += m.S
			if m.Correct == len(m.Agents) {
				a.Success++
			}
			a.P += m.P
			a.PPaper += m.PPaper
			a.D += m.D
			a.Messages += float64(m.Messages)
			if u := m.Usage; u != nil {
				a.Turns += float64(u.ModelCalls)
				a.InputTokens += float64(u.InputTokens)
				a.OutputTokens += float64(u.OutputTokens)
			}
			for l, name := range failureLabels {
				a.Labels[l] += float64(m.Failures[name])
			}
		}
	}
	for i := range out {
		a := &out[i]
		n, per := float64(a.Runs), float64(a.agentRuns)
		a.S, a.Success, a.P, a.PPaper, a.D, a.Messages = a.S/n, a.Success/n, a.P/n, a.PPaper/n, a.D/n, a.Messages/n
		a.Turns, a.InputTokens, a.OutputTokens = a.Turns/per, a.InputTokens/per, a.OutputTokens/per
		for l := range a.Labels {
			a.Labels[l] /= per
		}
	}
	// Rows of one team and model together, as in the aggregate; the
	// order within is the suite's (level, N, protocol as first seen).
	teams, models := []string{}, map[string][]string{}
	for _, a := range out {
		if !slices.Contains(teams, a.Agent) {
			teams = append(teams, a.Agent)
		}
		if !slices.Contains(models[a.Agent], a.Model) {
			models[a.Agent] = append(models[a.Agent], a.Model)
		}
	}
	slices.SortStableFunc(out, func(a, b ModelAggregate) int {
		if c := slices.Index(teams, a.Agent) - slices.Index(teams, b.Agent); c != 0 {
			return c
		}
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		if a.N != b.N {
			return a.N - b.N
		}
		return slices.Index(models[a.Agent], a.Model) - slices.Index(models[b.Agent], b.Model)
	})
	return out
}

// AggregateModelsHeader is the header of aggregate_models.csv.
func AggregateModelsHeader() []string {
	h := []string{"agent", "model", "level", "N", "protocol", "runs", "agents", "S_mean", "success_rate", "P_mean", "P_paper_mean",
		"D_mean", "messages_mean", "turns_per_agent", "input_tokens_per_agent", "output_tokens_per_agent"}
	for _, l := range failureLabels {
		h = append(h, l+"_rate")
	}
	return h
}

func (a *ModelAggregate) row() []string {
	f1 := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	r := []string{a.Agent, a.Model, LevelName(a.Level), strconv.Itoa(a.N), a.Protocol, strconv.Itoa(a.Runs), strconv.Itoa(a.Agents),
		f4(a.S), f4(a.Success), f4(a.P), f4(a.PPaper), f4(a.D), f1(a.Messages), f1(a.Turns), f1(a.InputTokens), f1(a.OutputTokens)}
	for _, v := range a.Labels {
		r = append(r, f4(v))
	}
	return r
}

// WriteModelTable writes the per-model aggregate as an aligned Markdown
// table (nothing without rows), under a heading line.
func WriteModelTable(w io.Writer, aggs []ModelAggregate) {
	if len(aggs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nby model (mixed teams): the agents each model played; S, success, P per model's agents; tokens and turns per agent; labels as rates per agent\n")
	head := []string{"team", "model", "level", "N", "protocol", "runs", "agents", "S ↑", "success ↑", "P ↑", "P_paper ↑", "D", "messages",
		"turns ↓", "input tok ↓", "output tok ↓", "premature", "consensus", "computation", "no_submission"}
	rows := make([][]string, len(aggs))
	for i := range aggs {
		rows[i] = aggs[i].row()
	}
	mdtable.Write(w, head, rows, 0, 1, 2, 4)
}
