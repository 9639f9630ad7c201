package proto

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func openConsensus(t testing.TB, p Protocol, n int) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "run.db"), p, n, Options{Consensus: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type news struct {
	Proposals []struct {
		ProposalID string          `json:"proposal_id"`
		From       int             `json:"from"`
		Round      int             `json:"round"`
		Value      json.RawMessage `json:"value"`
		Agree      []int           `json:"agree"`
		Disagree   []int           `json:"disagree"`
		NotVoted   []int           `json:"not_voted"`
		Unanimous  bool            `json:"unanimous"`
	} `json:"proposals"`
}

func readNews(t *testing.T, s *Store, agent int) news {
	t.Helper()
	var n news
	raw := s.ConsensusNews(agent)
	if raw == nil {
		return n
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("news %s: %v", raw, err)
	}
	return n
}

func TestToolsWith(t *testing.T) {
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		if got := ToolsWith(p, false); !reflect.DeepEqual(got, Tools(p)) {
			t.Errorf("%s without consensus: %v", p, got)
		}
		got := ToolsWith(p, true)
		n := len(got)
		if n != len(Tools(p))+2 || got[n-4] != ToolPropose || got[n-3] != ToolVote || got[n-2] != ToolWait || got[n-1] != ToolSubmit {
			t.Errorf("%s with consensus: %v", p, got)
		}
	}
	// Without the helper its tools are unknown, as any other name.
	s := open(t, P2P, 2)
	begin(t, s, 1)
	if m := call(t, s, 0, ToolPropose, `{"value": 1}`); !strings.Contains(m["error"].(string), "unknown tool") {
		t.Errorf("propose_answer without the helper: %v", m)
	}
}

// TestConsensusFlow: a proposal is told to the others the next round with
// its value and tally; votes change the tally the round after; each agent
// is told only what changed; everything is counted as the protocol's own
// messages.
func TestConsensusFlow(t *testing.T) {
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		t.Run(string(p), func(t *testing.T) {
			s := openConsensus(t, p, 3)
			begin(t, s, 1)
			res := call(t, s, 0, ToolPropose, `{"value": [1, 2, "x"]}`)
			id, _ := res["proposal_id"].(string)
			if res["success"] != true || id != "r1-a0-s0" {
				t.Fatalf("propose: %v", res)
			}
			// Not votable in its own round (nobody can know of it yet).
			if m := call(t, s, 1, ToolVote, `{"proposal_id": "r1-a0-s0"}`); m["error"] == nil {
				t.Errorf("vote on a proposal of this round: %v", m)
			}
			if s.ConsensusNews(1) != nil {
				t.Error("news in the proposal's own round")
			}
			end(t, s)

			begin(t, s, 2)
			n := readNews(t, s, 1)
			if len(n.Proposals) != 1 {
				t.Fatalf("agent 1 news: %+v", n)
			}
			e := n.Proposals[0]
			if e.ProposalID != id || e.From != 0 || e.Round != 1 || string(e.Value) != `[1,2,"x"]` ||
				!slices.Equal(e.Agree, []int{0}) || len(e.Disagree) != 0 || !slices.Equal(e.NotVoted, []int{1, 2}) || e.Unanimous {
				t.Errorf("agent 1 news: %+v", e)
			}
			if s.ConsensusNews(1) != nil {
				t.Error("the same news twice")
			}
			readNews(t, s, 2)
			if got := readNews(t, s, 0); len(got.Proposals) != 0 {
				t.Errorf("the proposer is told of its own proposal before any vote: %+v", got)
			}
			if m := call(t, s, 1, ToolVote, `{"proposal_id": "r1-a0-s0", "agree": true}`); m["success"] != true {
				t.Errorf("vote: %v", m)
			}
			if m := call(t, s, 2, ToolVote, `{"proposal_id": "r1-a0-s0", "agree": false}`); m["success"] != true {
				t.Errorf("vote: %v", m)
			}
			if m := call(t, s, 2, ToolVote, `{"proposal_id": "nope"}`); m["error"] == nil {
				t.Errorf("vote on no proposal: %v", m)
			}
			if m := call(t, s, 2, ToolVote, `{"proposal_id": "r1-a0-s0", "agree": "maybe"}`); m["error"] == nil {
				t.Errorf("vote agree maybe: %v", m)
			}
			end(t, s)

			begin(t, s, 3)
			n = readNews(t, s, 0) // the votes of 1 and 2
			if len(n.Proposals) != 1 || n.Proposals[0].Value != nil || !slices.Equal(n.Proposals[0].Agree, []int{0, 1}) ||
				!slices.Equal(n.Proposals[0].Disagree, []int{2}) || len(n.Proposals[0].NotVoted) != 0 {
				t.Errorf("agent 0 news after the votes: %+v", n)
			}
			n = readNews(t, s, 1) // agent 2's vote (its own is no news to it)
			if len(n.Proposals) != 1 || n.Proposals[0].Value != nil {
				t.Errorf("agent 1 news after the votes: %+v", n)
			}
			n = readNews(t, s, 2) // agent 1's vote
			if len(n.Proposals) != 1 || n.Proposals[0].Value != nil {
				t.Errorf("agent 2 news after the votes: %+v", n)
			}
			call(t, s, 2, ToolVote, `{"proposal_id": "r1-a0-s0"}`) // changes its mind: agree is the default
			end(t, s)
			begin(t, s, 4)
			if n = readNews(t, s, 1); len(n.Proposals) != 1 || !n.Proposals[0].Unanimous {
				t.Errorf("unanimous tally: %+v", n)
			}
			end(t, s)

			// Counting: one proposal and three successful votes are four
			// messages, each sent to everyone: N−1 messages under p2p, one
			// broadcast, or one file written under sfs.
			c := s.Counts()
			k := 1
			if p == P2P {
				k = 2
			}
			msgs, writes := 4*k, 0
			if p == SFS { // a file each: writes, not messages
				msgs, writes = 0, 4
			}
			if c.Total.M != 4*k || c.Total.MessagesSent != msgs || c.Total.Writes != writes {
				t.Errorf("m = %d, messages = %d, writes = %d; want %d, %d, %d", c.Total.M, c.Total.MessagesSent, c.Total.Writes, 4*k, msgs, writes)
			}
			if want := float64(4*k) / 6; c.D() != want {
				t.Errorf("D = %v, want %v", c.D(), want)
			}
			// Told: agent 1 and 2 the proposal (1 each), agent 0 two votes,
			// agent 1 one vote (round 3) and one (round 4), agent 2 one vote.
			recv := []int{2, 3, 2}
			for i, want := range recv {
				if got := c.ByAgent[i].Received; got != want {
					t.Errorf("agent %d received %d, want %d", i, got, want)
				}
				wantOthers := 0
				if p == SFS {
					wantOthers = want
				}
				if got := c.ByAgent[i].ReadsOfOthers; got != wantOthers {
					t.Errorf("agent %d reads of others %d, want %d", i, got, wantOthers)
				}
			}
			// The database holds the proposal and the votes.
			var props, votes int
			if err := s.DB().QueryRow(`SELECT count(*) FROM proposals`).Scan(&props); err != nil {
				t.Fatal(err)
			}
			if err := s.DB().QueryRow(`SELECT count(*) FROM votes`).Scan(&votes); err != nil {
				t.Fatal(err)
			}
			if props != 1 || votes != 3 {
				t.Errorf("database: %d proposals, %d votes", props, votes)
			}
		})
	}
}

// TestConsensusProvenance: being told a proposal carries what its proposer
// had seen, as reading its message would, and is a delivery of its text;
// a vote carries nothing.
func TestConsensusProvenance(t *testing.T) {
	s := openConsensus(t, P2P, 4)
	begin(t, s, 1)
	call(t, s, 1, ToolSend, `{"target_id": 0, "content": "DATA 1"}`)
	end(t, s)
	begin(t, s, 2)
	receive(t, s, 0)
	call(t, s, 0, ToolPropose, `{"value": {"a": 1}}`)
	end(t, s)
	begin(t, s, 3)
	readNews(t, s, 2)
	call(t, s, 2, ToolVote, `{"proposal_id": "r2-a0-s1"}`)
	end(t, s)
	begin(t, s, 4)
	readNews(t, s, 3) // the proposal and agent 2's vote
	if got := s.Seen(2); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("agent 2 seen %v, want [0 1 2]", got)
	}
	if got := s.Seen(3); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("agent 3 seen %v, want [0 1 3] (a vote carries no data)", got)
	}
	d := s.Deliveries(2)
	if len(d) != 1 || d[0].Tool != ToolPropose || d[0].From != 0 || d[0].Text != "{'a': 1}" || !slices.Equal(d[0].Seen, []int{0, 1}) {
		t.Errorf("agent 2 deliveries: %+v", d)
	}
}

// TestConsensusBounds: a proposal obeys the content bounds of any message.
func TestConsensusBounds(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "run.db"), Broadcast, 2, Options{Consensus: true, MaxContentBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	begin(t, s, 1)
	if m := call(t, s, 0, ToolPropose, `{"value": "`+strings.Repeat("x", 17)+`"}`); !strings.Contains(m["error"].(string), "too large") {
		t.Errorf("oversized proposal: %v", m)
	}
	if m := call(t, s, 0, ToolPropose, `{}`); !strings.Contains(m["error"].(string), "missing parameter value") {
		t.Errorf("proposal without value: %v", m)
	}
	if m := call(t, s, 0, ToolPropose, `{"value": 1, "extra": 2}`); m["error"] == nil {
		t.Errorf("proposal with an unknown parameter: %v", m)
	}
	end(t, s)
	if c := s.Counts(); c.Total.M != 0 || c.Total.Errors != 3 {
		t.Errorf("rejected proposals counted: m %d, errors %d", c.Total.M, c.Total.Errors)
	}
}
