package round

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
)

// TestByModel: the figures per model of a mixed team add up to the run's,
// and a run without models writes neither the agents' model nor by_model.
func TestByModel(t *testing.T) {
	in := seeded(t, "I-01", 5, 3)
	for _, p := range protocols {
		agents := NewReferenceTeam(5)
		agents[4] = wrongSubmitter{}
		res := mustRun(t, Config{Instance: in, Protocol: p, Models: []string{"a", "a", "a", "b", "b"}}, agents)
		if len(res.ByModel) != 2 {
			t.Fatalf("%s: by_model %+v", p, res.ByModel)
		}
		a, b := res.ByModel[0], res.ByModel[1]
		if a.Model != "a" || !slices.Equal(a.Agents, []int{0, 1, 2}) || b.Model != "b" || !slices.Equal(b.Agents, []int{3, 4}) {
			t.Errorf("%s: models %+v", p, res.ByModel)
		}
		if a.Correct != 3 || a.S != 1 || b.Correct != 1 || b.S != 0.5 || b.Submitted != 2 {
			t.Errorf("%s: correct a %d (S %v), b %d (S %v)", p, a.Correct, a.S, b.Correct, b.S)
		}
		if a.Messages+b.Messages != res.Messages || a.ToolCalls+b.ToolCalls != res.ToolCalls || a.Bytes+b.Bytes != res.Bytes {
			t.Errorf("%s: messages %d+%d of %d, calls %d+%d of %d", p, a.Messages, b.Messages, res.Messages, a.ToolCalls, b.ToolCalls, res.ToolCalls)
		}
		if d := a.D + b.D; d < res.D-1e-12 || d > res.D+1e-12 {
			t.Errorf("%s: D %v + %v != %v", p, a.D, b.D, res.D)
		}
		failures := map[string]int{}
		for _, mr := range res.ByModel {
			for k, v := range mr.Failures {
				failures[k] += v
			}
		}
		if !maps.Equal(failures, res.Failures) || b.Failures[LabelPremature]+b.Failures[LabelComputation] != 1 {
			t.Errorf("%s: failures by model %v, run %v", p, failures, res.Failures)
		}
		for i, ar := range res.Agents {
			if want := []string{"a", "a", "a", "b", "b"}[i]; ar.Model != want {
				t.Errorf("%s: agent %d model %q", p, i, ar.Model)
			}
		}
		plain := mustRun(t, Config{Instance: in, Protocol: p}, NewReferenceTeam(5))
		b1, _ := json.Marshal(plain)
		if strings.Contains(string(b1), `"by_model"`) || strings.Contains(string(b1), `"model"`) {
			t.Errorf("%s: a run without models writes them: %s", p, b1)
		}
	}
	if _, err := Run(context.Background(), Config{Instance: in, Protocol: proto.P2P, Models: []string{"a"}}, NewReferenceTeam(5)); err == nil {
		t.Error("one model label for five agents: no error")
	}
	if _, err := Run(context.Background(), Config{Instance: in, Protocol: proto.P2P, Models: []string{"a", "", "a", "a", "a"}}, NewReferenceTeam(5)); err == nil {
		t.Error("an empty model label: no error")
	}
}

// proposer proposes, in round 1, the answer over its own shard alone (a
// value it could have sent itself), then submits it; the others wait for
// the news, vote for the proposal and submit its value. news keeps what
// the agent was told (one proposer per agent: agents run concurrently).
type proposer struct {
	news []json.RawMessage
}

func (p *proposer) Turn(_ context.Context, t *Turn) error {
	if n := t.ConsensusNews(); n != nil {
		p.news = append(p.news, n)
	}
	if t.ID == 0 {
		var shard []int
		if err := json.Unmarshal(t.Shard, &shard); err != nil {
			return err
		}
		local := slices.Max(shard)
		if _, _, err := t.Call(proto.ToolPropose, map[string]any{"value": local}); err != nil {
			return err
		}
		_, _, err := t.Call(proto.ToolSubmit, map[string]any{"answer": local})
		return err
	}
	news := p.news
	if len(news) == 0 {
		_, _, err := t.Call(proto.ToolWait, nil)
		return err
	}
	var n struct {
		Proposals []struct {
			ID    string          `json:"proposal_id"`
			Value json.RawMessage `json:"value"`
		} `json:"proposals"`
	}
	if err := json.Unmarshal(news[0], &n); err != nil {
		return err
	}
	if _, _, err := t.Call(proto.ToolVote, map[string]any{"proposal_id": n.Proposals[0].ID}); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolSubmit, map[string]any{"answer": n.Proposals[0].Value})
	return err
}

// TestConsensusRevealsNothing: what the helper tells the agents is the
// proposal and the votes, never data the proposer did not have nor the
// expected answer; being told a proposal informs an agent of what the
// proposer knew and no more (so adopting a proposal made from one shard
// is a premature submission), and the helper's messages count in D.
func TestConsensusRevealsNothing(t *testing.T) {
	for _, p := range protocols {
		in := seeded(t, "I-01", 3, 2)
		var shards [3][]int
		for i := range shards {
			if err := json.Unmarshal(in.Shards[i], &shards[i]); err != nil {
				t.Fatal(err)
			}
		}
		local := slices.Max(shards[0])
		var gold int
		if err := json.Unmarshal(in.Expected[0], &gold); err != nil {
			t.Fatal(err)
		}
		if local == gold {
			t.Fatal("pick a seed whose agent 0 does not hold the maximum")
		}
		prs := []*proposer{{}, {}, {}}
		res := mustRun(t, Config{Instance: in, Protocol: p, Options: proto.Options{Consensus: true}}, []Agent{prs[0], prs[1], prs[2]})
		for i := 1; i < 3; i++ {
			news := prs[i].news
			if len(news) != 1 {
				t.Fatalf("%s: agent %d told %d times", p, i, len(news))
			}
			var n struct {
				Proposals []map[string]json.RawMessage `json:"proposals"`
			}
			if err := json.Unmarshal(news[0], &n); err != nil {
				t.Fatal(err)
			}
			if len(n.Proposals) != 1 {
				t.Fatalf("%s: news %s", p, news[0])
			}
			keys := slices.Sorted(maps.Keys(n.Proposals[0]))
			if want := []string{"agree", "disagree", "from", "not_voted", "proposal_id", "round", "unanimous", "value"}; !reflect.DeepEqual(keys, want) {
				t.Errorf("%s: news fields %v", p, keys)
			}
			if v := string(n.Proposals[0]["value"]); v != string(mustJSON(t, local)) {
				t.Errorf("%s: told value %s, proposed %d", p, v, local)
			}
			// No number of another shard, and not the expected answer,
			// appears in what the helper said.
			text := string(news[0])
			for j := 1; j < 3; j++ {
				for _, x := range shards[j] {
					if x != local && strings.Contains(text, string(mustJSON(t, x))) && len(mustJSON(t, x)) > 1 {
						t.Errorf("%s: news to agent %d holds %d of shard %d: %s", p, i, x, j, text)
					}
				}
			}
			if strings.Contains(text, string(mustJSON(t, gold))) {
				t.Errorf("%s: news holds the expected answer %d: %s", p, gold, text)
			}
			// Agent i adopted a value made from shard 0 alone: informed of
			// shards 0 and i, not the third, so a premature submission.
			ar := res.Agents[i]
			if ar.Correct || !slices.Equal(ar.Labels, []string{LabelPremature}) || len(ar.Informed) != 2 {
				t.Errorf("%s: agent %d correct %v, labels %v, informed %v", p, i, ar.Correct, ar.Labels, ar.Informed)
			}
		}
		// One proposal and two votes: each sent to everyone.
		k := 1
		if p == proto.P2P {
			k = 2
		}
		msgs := 3 * k
		if p == proto.SFS { // files written, not messages
			msgs = 0
		}
		if res.Messages != msgs || res.D != float64(3*k)/6 || res.CallsByTool[proto.ToolPropose] != 1 || res.CallsByTool[proto.ToolVote] != 2 {
			t.Errorf("%s: messages %d, D %v, calls %v", p, res.Messages, res.D, res.CallsByTool)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
