package round

import (
	"slices"

	"github.com/coordbench/coordbench/silo/task"
)

// Failure labels (AgentResult.Labels, Result.Failures). Only agents that
// are not correct get labels; labels can co-occur. See docs/silo-rounds.md.
const (
	// LabelNoSubmission: the agent never called submit_result.
	LabelNoSubmission = "no_submission"
	// LabelPremature: the agent submitted a wrong answer while its
	// provenance set lacked part of its dependency set (Instance.Deps).
	LabelPremature = "premature_submission"
	// LabelComputation: the agent submitted a wrong answer although its
	// provenance set covered its whole dependency set.
	LabelComputation = "computation_error"
	// LabelConsensus: on a global (non-segmented) task, the agent submitted
	// a wrong answer and some other agent submitted an answer that differs
	// from it (task.Correct of one against the other is false).
	LabelConsensus = "consensus_failure"
)

// label fills AgentResult.Labels and Result.Failures from the scored
// agents (Submitted, Correct, Answer, Seen) and the instance.
func label(res *Result, in *task.Instance) {
	res.Failures = map[string]int{}
	for i := range res.Agents {
		ar := &res.Agents[i]
		ar.Labels = []string{}
		if ar.Correct {
			continue
		}
		if !ar.Submitted {
			ar.Labels = append(ar.Labels, LabelNoSubmission)
		} else {
			if covers(ar.Seen, in.Deps[i]) {
				ar.Labels = append(ar.Labels, LabelComputation)
			} else {
				ar.Labels = append(ar.Labels, LabelPremature)
			}
			if !in.Task.Segmented && disagrees(res, in.Task, i) {
				ar.Labels = append(ar.Labels, LabelConsensus)
			}
		}
		slices.Sort(ar.Labels)
		for _, l := range ar.Labels {
			res.Failures[l]++
		}
	}
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

// disagrees reports whether another submitted answer differs from agent i's
// (compared with the task's S rule, both ways, so that normalisation
// applies to each side).
func disagrees(res *Result, t *task.Task, i int) bool {
	a := res.Agents[i].Answer
	for j := range res.Agents {
		o := &res.Agents[j]
		if j == i || !o.Submitted {
			continue
		}
		if !task.Correct(t, a, o.Answer) || !task.Correct(t, o.Answer, a) {
			return true
		}
	}
	return false
}
