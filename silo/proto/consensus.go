package proto

// The consensus helper (Options.Consensus, the LLM agents' scaffold
// "consensus"): two tools beside the protocol's own, propose_answer and
// vote, with the store tallying the votes and telling each agent, at the
// start of its next turn, what changed (ConsensusNews). It moves only what
// the agents put in: a proposal is a value an agent could have sent the
// others itself, a vote one bit of its own; nothing of the instance (no
// shard, no expected answer) ever enters it. Its messages are counted as
// the protocol's own would be (countMessage), so D and the tallies stay
// comparable with runs without it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Tools of the consensus helper.
const (
	ToolPropose = "propose_answer"
	ToolVote    = "vote"
	// ToolConsensusNews names the block of news an agent is given at the
	// start of its turn (not a tool it calls; see ConsensusNews).
	ToolConsensusNews = "consensus_tally"
)

// ToolsWith is Tools(p), with the consensus helper's tools before wait
// when consensus is on.
func ToolsWith(p Protocol, consensus bool) []string {
	ts := Tools(p)
	if !consensus || len(ts) == 0 {
		return ts
	}
	k := slices.Index(ts, ToolWait)
	return slices.Concat(ts[:k], []string{ToolPropose, ToolVote}, ts[k:])
}

// proposal is one propose_answer call: its value, what the others read of
// it (the message format's text) and the proposer's provenance.
type proposal struct {
	id       string
	round    int
	proposer int
	seq      int
	value    json.RawMessage
	text     string
	prov     bitset
	votes    map[int]bool // agent → agrees (its latest vote; the proposer agrees)
}

// vote is one vote call.
type vote struct {
	round, agent, seq int
	prop              *proposal
	agree             bool
}

// consensusState is the helper's part of the store: every proposal and
// vote of the ended rounds in the published order (round, agent, call
// sequence), and per agent how much of them it has been told.
type consensusState struct {
	props    []*proposal
	byID     map[string]*proposal
	votes    []*vote
	nextProp []int // per agent: index into props of the first proposal it was not told of
	nextVote []int // per agent: index into votes of the first vote it was not told of
}

func newConsensus(n int) *consensusState {
	return &consensusState{byID: map[string]*proposal{}, nextProp: make([]int, n), nextVote: make([]int, n)}
}

// countMessage counts one consensus message of content size bytes sent by a
// as the protocol would count the agent sending it to everyone itself:
// N−1 messages under p2p, one broadcast, one file write under sfs. They
// add to the sender's m (D), bytes, and messages (p2p, broadcast) or
// writes (sfs).
func (s *Store) countMessage(a *agentState, size int) {
	k := 1
	if s.proto == P2P {
		k = s.n - 1
	}
	if s.proto == SFS {
		a.tally.Writes++
	} else {
		a.tally.MessagesSent += k
	}
	a.tally.BytesSent += int64(k * size)
	a.tally.M += k
}

// propose executes propose_answer(value).
func (s *Store) propose(a *agentState, seq int, args map[string]json.RawMessage) (any, bool, callErr) {
	v, ok := args["value"]
	if !ok {
		return nil, false, "propose_answer: missing parameter value"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, false, callErr("malformed value: " + err.Error())
	}
	value := json.RawMessage(buf.Bytes())
	if cerr := s.checkValue("value", value, contentSize(value)); cerr != "" {
		return nil, false, cerr
	}
	text, err := messageText(value, s.opts.MessageFormat)
	if err != nil {
		return nil, false, callErr("malformed value: " + err.Error())
	}
	p := &proposal{id: fmt.Sprintf("r%d-a%d-s%d", s.round, a.id, seq), round: s.round, proposer: a.id, seq: seq,
		value: value, text: text, prov: a.seen.clone(), votes: map[int]bool{a.id: true}}
	a.props = append(a.props, p)
	s.countMessage(a, len(text))
	return proposeResult{Success: true, ProposalID: p.id}, false, ""
}

// vote executes vote(proposal_id, agree): on a proposal of an earlier
// round (the ones the agent can have been told of).
func (s *Store) vote(a *agentState, seq int, args map[string]json.RawMessage) (any, bool, callErr) {
	v, ok := args["proposal_id"]
	if !ok {
		return nil, false, "vote: missing parameter proposal_id"
	}
	id, ok := jsonString(v)
	if !ok {
		id = strings.TrimSpace(string(v))
	}
	p := s.cons.byID[id]
	if p == nil {
		return nil, false, callErr(fmt.Sprintf("vote: no proposal %q (proposals made this round can be voted on from the next round)", truncUTF8(id, 64)))
	}
	agree := true
	if raw, ok := args["agree"]; ok {
		if err := json.Unmarshal(raw, &agree); err != nil {
			return nil, false, "vote: agree must be true or false"
		}
	}
	a.votes = append(a.votes, &vote{round: s.round, agent: a.id, seq: seq, prop: p, agree: agree})
	s.countMessage(a, 1)
	return voteResult{Success: true, ProposalID: p.id, Agree: agree}, false, ""
}

type proposeResult struct {
	Success    bool   `json:"success"`
	ProposalID string `json:"proposal_id"`
}

type voteResult struct {
	Success    bool   `json:"success"`
	ProposalID string `json:"proposal_id"`
	Agree      bool   `json:"agree"`
}

// applyConsensus makes the round's proposals and votes visible (EndRound:
// agent id order, then call order) and returns them for the database.
func (s *Store) applyConsensus() ([]*proposal, []*vote) {
	if s.cons == nil {
		return nil, nil
	}
	var props []*proposal
	var votes []*vote
	for _, a := range s.agents {
		for _, p := range a.props {
			s.cons.props = append(s.cons.props, p)
			s.cons.byID[p.id] = p
			props = append(props, p)
		}
		for _, v := range a.votes {
			v.prop.votes[v.agent] = v.agree
			s.cons.votes = append(s.cons.votes, v)
			votes = append(votes, v)
		}
		a.props, a.votes = nil, nil
	}
	return props, votes
}

// tallyEntry is one proposal in an agent's news.
type tallyEntry struct {
	ProposalID string          `json:"proposal_id"`
	From       int             `json:"from"`
	Round      int             `json:"round"`
	Value      json.RawMessage `json:"value,omitempty"` // only when the proposal is new to the agent
	Agree      []int           `json:"agree"`
	Disagree   []int           `json:"disagree"`
	NotVoted   []int           `json:"not_voted"`
	Unanimous  bool            `json:"unanimous"`
}

type newsResult struct {
	Proposals []tallyEntry `json:"proposals"`
}

// ConsensusNews tells agent, at the start of its turn in the open round,
// what changed in the consensus helper since it was last told: the
// proposals it has not seen (with their values) and those whose votes
// changed, each with its tally (who agrees, who disagrees, who has not
// voted, whether all N agree), as compact JSON; nil when nothing changed,
// when the helper is off, or when no round is open. Only the proposals and
// votes of earlier rounds are told (next-round visibility, as for every
// message). Being told a proposal of another agent counts as receiving a
// message (and, under sfs, as reading another agent's file), merges the
// proposer's provenance into the agent's and is a delivery (Deliveries);
// being told a vote of another counts as receiving a message.
func (s *Store) ConsensusNews(agent int) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cons
	if c == nil || !s.open || agent < 0 || agent >= s.n || s.broken != nil {
		return nil
	}
	a := s.agents[agent]
	changed := map[*proposal]bool{}
	isNew := map[*proposal]bool{}
	for _, p := range c.props[c.nextProp[agent]:] {
		if p.proposer != agent { // its own proposal is news once others vote
			changed[p], isNew[p] = true, true
			a.seen.merge(p.prov)
			a.seenDirty = true
			a.got = append(a.got, delivery{round: s.round, after: a.seq, prop: p})
			s.countReceived(a)
		}
	}
	for _, v := range c.votes[c.nextVote[agent]:] {
		if v.agent != agent {
			changed[v.prop] = true
			s.countReceived(a)
		}
	}
	c.nextProp[agent], c.nextVote[agent] = len(c.props), len(c.votes)
	out := newsResult{Proposals: []tallyEntry{}}
	for _, p := range c.props { // creation order
		if !changed[p] {
			continue
		}
		e := tallyEntry{ProposalID: p.id, From: p.proposer, Round: p.round, Agree: []int{}, Disagree: []int{}, NotVoted: []int{}}
		if isNew[p] {
			e.Value = p.value
		}
		for i := range s.n {
			switch agree, ok := p.votes[i]; {
			case !ok:
				e.NotVoted = append(e.NotVoted, i)
			case agree:
				e.Agree = append(e.Agree, i)
			default:
				e.Disagree = append(e.Disagree, i)
			}
		}
		e.Unanimous = len(e.Agree) == s.n
		out.Proposals = append(out.Proposals, e)
	}
	if len(out.Proposals) == 0 {
		return nil
	}
	return mustJSON(out)
}

// countReceived counts one consensus message told to a, as a protocol
// message received (and, under sfs, a read of another agent's file).
func (s *Store) countReceived(a *agentState) {
	a.tally.Received++
	if s.proto == SFS {
		a.tally.ReadsOfOthers++
	}
}
