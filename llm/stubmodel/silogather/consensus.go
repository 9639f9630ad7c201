package silogather

// The gather strategy with the consensus helper (the scaffold consensus,
// whose tools the system prompt then offers): agent 0, once it holds every
// shard, proposes the answer (for a segmented task, the list of every
// agent's answer) instead of shipping it, and submits once every other
// agent has voted; the others, told of the proposal at the start of a
// turn, vote for it and submit it (their part of it) in the same turn.

import (
	"encoding/json"

	"github.com/coordbench/coordbench/silo/proto"
)

// Told is a proposal as the helper's news told it: its id and proposer,
// its value (from the news that first told it), and its latest tally.
type Told struct {
	ID        string
	From      int
	Value     json.RawMessage
	Voted     int // agents that agree or disagree
	Unanimous bool
}

// Proposals are the proposals the agent was told of, in the order first
// told, each with its latest tally.
func (v View) Proposals() []Told {
	var out []Told
	at := map[string]int{}
	for _, o := range v.Results {
		if o.Tool != proto.ToolConsensusNews {
			continue
		}
		var news struct {
			Proposals []struct {
				ID        string          `json:"proposal_id"`
				From      int             `json:"from"`
				Value     json.RawMessage `json:"value"`
				Agree     []int           `json:"agree"`
				Disagree  []int           `json:"disagree"`
				Unanimous bool            `json:"unanimous"`
			} `json:"proposals"`
		}
		if json.Unmarshal(o.Result, &news) != nil {
			continue
		}
		for _, p := range news.Proposals {
			k, ok := at[p.ID]
			if !ok {
				k = len(out)
				at[p.ID] = k
				out = append(out, Told{ID: p.ID, From: p.From, Value: p.Value})
			}
			out[k].Voted, out[k].Unanimous = len(p.Agree)+len(p.Disagree), p.Unanimous
		}
	}
	return out
}

// adopt is the turn of an agent other than 0 that was told of a proposal
// with its value: vote for it and submit it (its part of a segmented
// task's list). False when it knows of none.
func (m Model) adopt(v View) ([]Call, bool) {
	for _, p := range v.Proposals() {
		if p.From == v.ID || p.Value == nil {
			continue
		}
		ans := p.Value
		if t, err := PromptTask(v.Prompt); err == nil && t.Segmented {
			var all []json.RawMessage
			if json.Unmarshal(p.Value, &all) != nil || len(all) != v.N {
				continue // not a list of every agent's answer: not ours to adopt
			}
			ans = all[v.ID]
		}
		return []Call{{Name: proto.ToolVote, Args: []Arg{{"proposal_id", p.ID}, {"agree", json.RawMessage("true")}}}, m.submit(v.ID, ans)}, true
	}
	return nil, false
}

// lead is agent 0's turn once it has computed every answer: propose them
// (once), then wait until every other agent has voted, then submit.
func (m Model) lead(v View, answers []json.RawMessage) []Call {
	var own *Told
	for _, p := range v.Proposals() {
		if p.From == v.ID {
			own = &p
		}
	}
	switch {
	case own != nil && (own.Unanimous || own.Voted == v.N):
		return []Call{m.submit(0, answers[0])}
	case own != nil || v.proposed():
		return []Call{{Name: proto.ToolWait}}
	}
	value := answers[0]
	if t, err := PromptTask(v.Prompt); err == nil && t.Segmented {
		value, _ = json.Marshal(answers)
	}
	return []Call{{Name: proto.ToolPropose, Args: []Arg{{"value", value}}}, {Name: proto.ToolWait}}
}

// proposed reports whether the agent has called propose_answer before.
func (v View) proposed() bool {
	for _, o := range v.Results {
		if o.Tool == proto.ToolPropose {
			return true
		}
	}
	return false
}

// local is a hasty agent's answer over its own shard alone ("null" when
// that cannot be computed).
func (m Model) local(prompt, shard string) json.RawMessage {
	if m.Solve == nil {
		return json.RawMessage("null")
	}
	answers, err := m.Solve(prompt, []string{shard})
	if err != nil || len(answers) != 1 {
		return json.RawMessage("null")
	}
	return answers[0]
}
