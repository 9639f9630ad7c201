package round

import (
	"slices"

	"github.com/coordbench/coordbench/silo/task"
)

// Failure labels (AgentResult.Labels, Result.Failures; the flow-based upper
// bound in AgentResult.LabelsFlow, Result.FailuresFlow). Only agents that
// are not correct get labels; labels can co-occur. See docs/silo-rounds.md.
const (
	// LabelNoSubmission: the agent never called submit_result.
	LabelNoSubmission = "no_submission"
	// LabelPremature: the agent submitted a wrong answer without the data
	// of every shard its answer depends on (Instance.Deps): by content
	// (Labels), the shards the contents it read carry (Informed); by flow
	// (LabelsFlow), its provenance set (Seen).
	LabelPremature = "premature_submission"
	// LabelComputation: the agent submitted a wrong answer although it had
	// the data of every shard it depends on (by content, or by flow).
	LabelComputation = "computation_error"
	// LabelConsensus: on a global (non-segmented) task, the agent submitted
	// a wrong answer and the team did not converge on it: some other agent
	// submitted a different answer (task.Correct of one against the other
	// is false) or submitted nothing.
	LabelConsensus = "consensus_failure"
)

// label fills the labels of every agent and the run's failure counts from
// the scored agents (Submitted, Correct, Answer, Seen, Informed) and the
// instance.
func label(res *Result, in *task.Instance) {
	res.Failures, res.FailuresFlow = map[string]int{}, map[string]int{}
	for i := range res.Agents {
		ar := &res.Agents[i]
		ar.Labels, ar.LabelsFlow = []string{}, []string{}
		if ar.Correct {
			continue
		}
		consensus := ar.Submitted && !in.Task.Segmented && disagrees(res, in.Task, i)
		ar.Labels = labelsOf(ar.Submitted, covers(ar.Informed, in.Deps[i]), consensus)
		ar.LabelsFlow = labelsOf(ar.Submitted, covers(ar.Seen, in.Deps[i]), consensus)
		for _, l := range ar.Labels {
			res.Failures[l]++
		}
		for _, l := range ar.LabelsFlow {
			res.FailuresFlow[l]++
		}
	}
}

// labelsOf is the sorted label set of a wrong agent.
func labelsOf(submitted, informed, consensus bool) []string {
	if !submitted {
		return []string{LabelNoSubmission}
	}
	out := []string{LabelPremature}
	if informed {
		out[0] = LabelComputation
	}
	if consensus {
		out = append(out, LabelConsensus)
	}
	slices.Sort(out)
	return out
}

// covers reports whether the sorted set seen contains every element of deps.
func covers(seen, deps []int) bool {
	for _, d := range deps {
		if _, ok := slices.BinarySearch(seen, d); !ok {
			return false
		}
	}
	return true
}

// disagrees reports whether another agent's final answer differs from
// agent i's: it never submitted, or its answer differs (compared with the
// task's S rule, both ways, so that normalisation applies to each side).
func disagrees(res *Result, t *task.Task, i int) bool {
	a := res.Agents[i].Answer
	for j := range res.Agents {
		o := &res.Agents[j]
		if j == i {
			continue
		}
		if !o.Submitted || !task.Correct(t, a, o.Answer) || !task.Correct(t, o.Answer, a) {
			return true
		}
	}
	return false
}
