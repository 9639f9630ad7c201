package round

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/coordbench/coordbench/silo/task"
)

// fault selects a faulty variant of the reference agent.
type fault int

const (
	faultNone       fault = iota
	faultDisagree         // submits a perturbed copy of its own answer
	faultMiscompute       // its computation is wrong
)

// NewDisagreer returns a reference agent that plays its part in full
// (gathering, distributing the correct answers if it is the gatherer) but
// submits a perturbed copy (Perturb) of its own answer, so its answer
// differs from the rest of the team. Expected labels: computation_error,
// plus consensus_failure on a global (non-segmented) task.
func NewDisagreer() Agent { return &Reference{fault: faultDisagree} }

// NewMiscompute returns a reference agent whose computation is wrong: as
// the gatherer it perturbs every answer it computes (so the whole team
// receives and submits wrong answers, all equal on a global task); as any
// other agent it perturbs the answer it received before submitting it.
// Expected labels: computation_error for every agent it misinforms (no
// consensus failure when the team agrees on the wrong answer).
func NewMiscompute() Agent { return &Reference{fault: faultMiscompute} }

// NewPremature returns an agent that, in round 1, publishes its shard as
// the reference agent does (so the rest of the team can finish) and at
// once submits an answer computed from its own shard only (task.Solve on N
// copies of its shard; its shard itself if that fails). Use it at a
// position other than the gatherer. Expected labels (when wrong, as it
// usually is): premature_submission, plus consensus_failure on a global
// task.
func NewPremature() Agent { return premature{} }

// NewTeam returns n fresh reference agents with the agents of faulty put
// in at their ids.
func NewTeam(n int, faulty map[int]Agent) []Agent {
	out := NewReferenceTeam(n)
	for i, a := range faulty {
		if i >= 0 && i < n {
			out[i] = a
		}
	}
	return out
}

// own is the answer the agent submits for itself.
func (a *Reference) own(t *Turn, ans json.RawMessage) json.RawMessage {
	switch {
	case a.fault == faultDisagree:
		return Perturb(ans)
	case a.fault == faultMiscompute && t.ID != Gatherer:
		return Perturb(ans) // the gatherer's answers are already perturbed
	}
	return ans
}

// Perturb returns a deliberately wrong variant of a JSON answer: an
// integer plus one, anything else wrapped in a one-element list.
func Perturb(ans json.RawMessage) json.RawMessage {
	s := bytes.TrimSpace(ans)
	if v, ok := new(big.Int).SetString(string(s), 10); ok {
		return json.RawMessage(v.Add(v, big.NewInt(1)).String())
	}
	out := make([]byte, 0, len(s)+2)
	out = append(out, '[')
	out = append(out, s...)
	return append(out, ']')
}

type premature struct{}

func (premature) Turn(_ context.Context, t *Turn) error {
	if t.MaxCalls > 0 && t.MaxCalls < 2 {
		return fmt.Errorf("premature agent needs at least 2 calls per turn, have %d", t.MaxCalls)
	}
	if t.ID != Gatherer {
		if err := publish(t); err != nil {
			return err
		}
	}
	shards := make([]json.RawMessage, t.N)
	for i := range shards {
		shards[i] = t.Shard
	}
	ans := t.Shard
	if all, err := task.SolveScaled(t.Task, shards, t.Params, t.Scale); err == nil && len(all) == t.N {
		ans = all[t.ID]
	}
	return submit(t, ans)
}
