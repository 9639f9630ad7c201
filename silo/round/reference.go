package round

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// Gatherer is the reference team's collecting agent.
const Gatherer = 0

// Reference is the scripted reference agent: gather, compute, distribute.
// Every agent publishes its shard in round 1 (p2p: send_message to the
// gatherer; broadcast: broadcast_message; sfs: write_file "shard/<id>").
// The gatherer (agent 0) collects all shards (receive_messages, or
// read_file of each shard file), computes every agent's answer with
// task.Solve, distributes them (p2p: one send_message per agent;
// broadcast: broadcast_message of the answer vector, split into as few
// messages as the content limit allows; sfs: write_file "answer/<id>" per
// agent) and submits its own. The others poll (receive_messages, or
// read_file "answer/<id>") and submit their answer when it arrives.
//
// Every turn keeps one call for wait or submit_result and spreads longer
// work (reads, sends, writes) over rounds within a per-turn cap if there
// is one (MaxCalls > 0), so it needs MaxCalls of 0 (no cap) or >= 2. Message contents are JSON texts (strings):
// {"kind":"shard","shard":…} and {"kind":"answers","answers":{"<id>":…}}.
//
// A Reference holds one agent's state: use a fresh one per agent and run
// (NewReferenceTeam).
type Reference struct {
	fault     fault // zero for the reference agent (faulty.go)
	published bool
	// gatherer state
	shards  []json.RawMessage
	have    int
	answers []json.RawMessage
	next    int // next agent to receive its answer
}

// NewReferenceTeam returns n fresh reference agents.
func NewReferenceTeam(n int) []Agent {
	out := make([]Agent, n)
	for i := range out {
		out[i] = &Reference{}
	}
	return out
}

type envelope struct {
	Kind    string                     `json:"kind"`
	Shard   json.RawMessage            `json:"shard,omitempty"`
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
}

type inMessage struct {
	From    int    `json:"from"`
	Content string `json:"content"`
}

// Turn implements Agent.
func (a *Reference) Turn(ctx context.Context, t *Turn) error {
	if t.MaxCalls > 0 && t.MaxCalls < 2 {
		return fmt.Errorf("reference agent needs at least 2 calls per turn, have %d", t.MaxCalls)
	}
	if t.ID == Gatherer {
		return a.gather(t)
	}
	return a.work(t)
}

// call wraps Turn.Call; a Go error (never expected for the reference) aborts the turn.
func call(t *Turn, tool string, args any) (json.RawMessage, error) {
	res, _, err := t.Call(tool, args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return res, nil
}

func wait(t *Turn) error {
	_, err := call(t, proto.ToolWait, nil)
	return err
}

func submit(t *Turn, ans json.RawMessage) error {
	res, err := call(t, proto.ToolSubmit, map[string]json.RawMessage{"answer": ans})
	if err != nil {
		return err
	}
	if !bytes.Contains(res, []byte(`"submitted"`)) {
		return fmt.Errorf("submit_result rejected: %s", res)
	}
	return nil
}

// checkResult turns an {"error": …} result into a Go error.
func checkResult(tool string, res json.RawMessage) error {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(res, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", tool, e.Error)
	}
	return nil
}

func encode(v envelope) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// work is a non-gatherer's turn.
func (a *Reference) work(t *Turn) error {
	if !a.published {
		a.published = true
		if err := publish(t); err != nil {
			return err
		}
		return wait(t) // nothing is visible before the next round
	}
	switch t.Protocol {
	case proto.SFS:
		res, err := call(t, proto.ToolReadFile, map[string]any{"path": "answer/" + strconv.Itoa(t.ID)})
		if err != nil {
			return err
		}
		var hit struct {
			Success bool            `json:"success"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(res, &hit); err != nil {
			return fmt.Errorf("read_file result: %w", err)
		}
		if hit.Success {
			return submit(t, a.own(t, hit.Content))
		}
	default:
		msgs, err := receive(t)
		if err != nil {
			return err
		}
		key := strconv.Itoa(t.ID)
		for _, m := range msgs {
			var env envelope
			if m.From != Gatherer || json.Unmarshal([]byte(m.Content), &env) != nil || env.Kind != "answers" {
				continue
			}
			if ans, ok := env.Answers[key]; ok {
				return submit(t, a.own(t, ans))
			}
		}
	}
	return wait(t)
}

// publish is round 1 of a non-gatherer: hand its shard to the gatherer
// (p2p send, broadcast, or the file "shard/<id>").
func publish(t *Turn) error {
	switch t.Protocol {
	case proto.SFS:
		res, err := call(t, proto.ToolWriteFile, map[string]any{"path": "shard/" + strconv.Itoa(t.ID), "content": t.Shard})
		if err != nil {
			return err
		}
		if err := checkResult(proto.ToolWriteFile, res); err != nil {
			return err
		}
	default:
		msg, err := encode(envelope{Kind: "shard", Shard: t.Shard})
		if err != nil {
			return err
		}
		tool, args := proto.ToolBroadcast, map[string]any{"content": msg}
		if t.Protocol == proto.P2P {
			tool, args = proto.ToolSend, map[string]any{"target_id": Gatherer, "content": msg}
		}
		res, err := call(t, tool, args)
		if err != nil {
			return err
		}
		if err := checkResult(tool, res); err != nil {
			return err
		}
	}
	return nil
}

func receive(t *Turn) ([]inMessage, error) {
	res, err := call(t, proto.ToolReceive, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Messages []inMessage `json:"messages"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("receive_messages result: %w", err)
	}
	return out.Messages, nil
}

// gather is the gatherer's turn: collect, solve, distribute, submit.
func (a *Reference) gather(t *Turn) error {
	if a.shards == nil {
		a.shards = make([]json.RawMessage, t.N)
		a.shards[t.ID] = t.Shard
		a.have = 1
		a.next = 0
	}
	if a.have < t.N {
		if t.Round == 1 {
			return wait(t) // nothing is visible in round 1
		}
		if err := a.collect(t); err != nil {
			return err
		}
		if a.have < t.N {
			return wait(t)
		}
	}
	if a.answers == nil {
		ans, err := task.SolveScaled(t.Task, a.shards, t.Params, t.Scale)
		if err != nil {
			return err
		}
		if len(ans) != t.N {
			return fmt.Errorf("task.Solve gave %d answers for N=%d", len(ans), t.N)
		}
		if a.fault == faultMiscompute {
			for j := range ans {
				ans[j] = Perturb(ans[j])
			}
		}
		a.answers = ans
	}
	if err := a.distribute(t); err != nil {
		return err
	}
	if a.next < t.N {
		return wait(t)
	}
	return submit(t, a.own(t, a.answers[t.ID]))
}

func (a *Reference) collect(t *Turn) error {
	switch t.Protocol {
	case proto.SFS:
		for j := range t.N {
			if a.shards[j] != nil {
				continue
			}
			if t.Remaining() <= 1 {
				break
			}
			res, err := call(t, proto.ToolReadFile, map[string]any{"path": "shard/" + strconv.Itoa(j)})
			if err != nil {
				return err
			}
			var hit struct {
				Success bool            `json:"success"`
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(res, &hit); err != nil {
				return fmt.Errorf("read_file result: %w", err)
			}
			if hit.Success {
				a.shards[j] = hit.Content
				a.have++
			}
		}
	default:
		msgs, err := receive(t)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			var env envelope
			if json.Unmarshal([]byte(m.Content), &env) != nil || env.Kind != "shard" {
				continue
			}
			if m.From < 0 || m.From >= t.N || a.shards[m.From] != nil || env.Shard == nil {
				continue
			}
			a.shards[m.From] = env.Shard
			a.have++
		}
	}
	return nil
}

// distribute hands out answers while at least one call is left for the
// final wait or submit_result.
func (a *Reference) distribute(t *Turn) error {
	for a.next < t.N && t.Remaining() > 1 {
		j := a.next
		if j == t.ID {
			a.next++
			continue
		}
		var tool string
		var args map[string]any
		nextAfter := j + 1
		switch t.Protocol {
		case proto.SFS:
			tool, args = proto.ToolWriteFile, map[string]any{"path": "answer/" + strconv.Itoa(j), "content": a.answers[j]}
		case proto.P2P:
			msg, err := encode(envelope{Kind: "answers", Answers: map[string]json.RawMessage{strconv.Itoa(j): a.answers[j]}})
			if err != nil {
				return err
			}
			tool, args = proto.ToolSend, map[string]any{"target_id": j, "content": msg}
		default:
			msg, end, err := a.pack(t, j)
			if err != nil {
				return err
			}
			tool, args, nextAfter = proto.ToolBroadcast, map[string]any{"content": msg}, end
		}
		res, err := call(t, tool, args)
		if err != nil {
			return err
		}
		if err := checkResult(tool, res); err != nil {
			return err
		}
		a.next = nextAfter
	}
	return nil
}

// pack builds one broadcast holding the answers of agents from, from+1, …
// (the gatherer's own skipped) that fit in the content limit, and returns
// the first agent not included.
func (a *Reference) pack(t *Turn, from int) (string, int, error) {
	m := map[string]json.RawMessage{}
	end := from
	last := ""
	for end < t.N {
		if end != t.ID {
			m[strconv.Itoa(end)] = a.answers[end]
			msg, err := encode(envelope{Kind: "answers", Answers: m})
			if err != nil {
				return "", 0, err
			}
			if len(msg) > t.MaxContentBytes {
				if last == "" {
					return "", 0, fmt.Errorf("answer of agent %d does not fit in one message (%d bytes)", end, len(msg))
				}
				return last, end, nil
			}
			last = msg
		}
		end++
	}
	return last, end, nil
}
