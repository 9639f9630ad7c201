package round

// Per-model figures of a mixed team (Config.Models): the agent-level
// figures of the run, summed or averaged over the agents each model plays.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/silo/proto"
)

// ModelResult is what the agents of one model did in a run of a mixed
// team: how many of them submitted and were correct (S, the paper's
// fraction of correct agents, over this model's agents; P and P_paper,
// the mean partial correctness of its agents), their tool calls and
// messages (Messages, and D, the part of the run's D their messages make:
// the models' parts sum to the run's D), failures and model usage.
type ModelResult struct {
	Model       string         `json:"model"`
	Agents      []int          `json:"agents"`
	Submitted   int            `json:"submitted"`
	Correct     int            `json:"correct"`
	S           float64        `json:"S"`
	P           float64        `json:"P"`
	PPaper      float64        `json:"P_paper"`
	ToolCalls   int            `json:"tool_calls"`
	Messages    int            `json:"messages"`
	Bytes       int64          `json:"bytes"`
	D           float64        `json:"D"`
	CappedTurns int            `json:"capped_turns"`
	AgentErrors int            `json:"agent_errors"`
	Failures    map[string]int `json:"failures"`
	Usage       *Usage         `json:"usage,omitempty"`
}

// checkModels checks Config.Models against the team size n: none, or one
// non-empty label per agent.
func checkModels(models []string, n int) error {
	if len(models) == 0 {
		return nil
	}
	if len(models) != n {
		return fmt.Errorf("round: %d model labels for N=%d", len(models), n)
	}
	for i, m := range models {
		if m == "" {
			return fmt.Errorf("round: agent %d has an empty model label", i)
		}
	}
	return nil
}

// byModel labels each agent with its model and fills res.ByModel, in the
// order the models first appear among the agents; nothing without models.
// Call it once the agents are scored, labelled and their usage known.
func byModel(res *Result, models []string, c proto.Counts) {
	if len(models) == 0 {
		return
	}
	idx := map[string]int{}
	var ms []int // m of each model's agents
	for i, m := range models {
		ar := &res.Agents[i]
		ar.Model = m
		k, ok := idx[m]
		if !ok {
			k = len(res.ByModel)
			idx[m] = k
			res.ByModel = append(res.ByModel, ModelResult{Model: m, Agents: []int{}, Failures: map[string]int{}})
			ms = append(ms, 0)
		}
		mr := &res.ByModel[k]
		mr.Agents = append(mr.Agents, i)
		mr.ToolCalls += ar.Calls
		mr.CappedTurns += ar.CappedTurns
		if ar.Error != "" {
			mr.AgentErrors++
		}
		if i < len(c.ByAgent) {
			t := c.ByAgent[i]
			mr.Messages += t.MessagesSent
			mr.Bytes += t.BytesSent
			ms[k] += t.M
		}
		if ar.Usage != nil {
			if mr.Usage == nil {
				mr.Usage = &Usage{}
			}
			mr.Usage.Add(*ar.Usage)
		}
	}
	for k := range res.ByModel {
		res.ByModel[k].D = density(ms[k], res.N)
	}
	modelScores(res)
}

// modelScores sets the scores of each model of res.ByModel from its
// agents' (submitted, correct, P, P_paper, S, failure labels).
func modelScores(res *Result) {
	for k := range res.ByModel {
		mr := &res.ByModel[k]
		mr.Submitted, mr.Correct, mr.P, mr.PPaper, mr.Failures = 0, 0, 0, 0, map[string]int{}
		for _, i := range mr.Agents {
			if i < 0 || i >= len(res.Agents) {
				continue
			}
			ar := &res.Agents[i]
			if ar.Submitted {
				mr.Submitted++
			}
			if ar.Correct {
				mr.Correct++
			}
			mr.P += ar.Partial
			mr.PPaper += ar.PartialPaper
			for _, l := range ar.Labels {
				mr.Failures[l]++
			}
		}
		n := float64(len(mr.Agents))
		mr.S, mr.P, mr.PPaper = float64(mr.Correct)/n, mr.P/n, mr.PPaper/n
	}
}

// density is m / (N(N−1)), 0 when N = 1 (proto's D, for a part of m).
func density(m, n int) float64 {
	if n <= 1 {
		return 0
	}
	return float64(m) / float64(n*(n-1))
}

// AgentRange writes agent ids (ascending) as their runs: consecutive ids
// as a range, runs separated by spaces ("0-2 5").
func AgentRange(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		part := strconv.Itoa(ids[i])
		if j > i {
			part += "-" + strconv.Itoa(ids[j])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, " ")
}
