package round

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// topology is the spanning tree a Relay agent reduces over: shards flow
// from every agent up to root, answers flow back down.
type topology struct {
	name     string
	root     func(n int) int
	parent   func(i, n int) int   // -1 for the root
	children func(i, n int) []int // ascending
}

// binaryTree: agent 0 is the root, the parent of i is (i-1)/2.
var binaryTree = topology{
	name:   "tree",
	root:   func(int) int { return 0 },
	parent: func(i, _ int) int { return (i - 1) / 2 },
	children: func(i, n int) []int {
		var out []int
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < n {
				out = append(out, c)
			}
		}
		return out
	},
}

// chain: the path 0 → 1 → … → N−1, rooted at N−1.
var chain = topology{
	name:   "chain",
	root:   func(n int) int { return n - 1 },
	parent: func(i, _ int) int { return i + 1 },
	children: func(i, _ int) []int {
		if i == 0 {
			return nil
		}
		return []int{i - 1}
	},
}

// Relay is a scripted reference agent that reduces over a spanning tree
// of the team (NewTreeTeam, NewChainTeam). Each agent collects the raw
// shards of its subtree from its children, then forwards them all to its
// parent; the root, once it holds every shard, computes every answer with
// task.Solve and sends each child the answers of that child's subtree;
// every agent forwards the answers it receives to its children the same
// way and then submits its own.
//
// Messages are JSON texts {"kind":"shards"|"answers","to":<id>,
// "items":{"<agent>":…}} packed into as few contents as the content limit
// allows (one item never splits). p2p: send_message to the neighbour;
// broadcast: broadcast_message, receivers keep the ones addressed "to"
// them; sfs: write_file "relay/<from>-<to>/<k>" (k = 0, 1, …), read by the
// receiver in order. Each turn keeps one call for wait or submit_result
// and spreads longer work over rounds under a per-turn cap, so it needs
// MaxCalls of 0 (no cap) or >= 2.
//
// A Relay holds one agent's state: use a fresh one per agent and run.
type Relay struct {
	topo topology

	init    bool
	need    map[int]bool // agents of this agent's subtree
	shards  map[int]json.RawMessage
	answers map[int]json.RawMessage
	sentUp  bool
	sentDn  bool
	outbox  []relayOut
	nextK   map[int]int // sfs: next chunk to read, per sender
	written map[int]int // sfs: chunks written, per receiver
}

type relayOut struct {
	to      int
	content string
}

type relayEnv struct {
	Kind  string                     `json:"kind"`
	To    int                        `json:"to"`
	Items map[string]json.RawMessage `json:"items"`
}

// NewTreeTeam returns n fresh Relay agents over the binary tree rooted at
// agent 0 (parent of i: (i-1)/2), the tree-reduction reference for Level I
// (aggregation) tasks; it works on any task.
func NewTreeTeam(n int) []Agent {
	out := make([]Agent, n)
	for i := range out {
		out[i] = &Relay{topo: binaryTree}
	}
	return out
}

// NewChainTeam returns n fresh Relay agents over the chain 0 → … → N−1
// (shards flow left to right, answers right to left), the neighbour-chain
// reference for Level II (local dependency) tasks; it works on any task.
func NewChainTeam(n int) []Agent {
	out := make([]Agent, n)
	for i := range out {
		out[i] = &Relay{topo: chain}
	}
	return out
}

// subtree returns the agents of i's subtree.
func (a *Relay) subtree(i, n int) map[int]bool {
	out := map[int]bool{}
	stack := []int{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out[j] = true
		stack = append(stack, a.topo.children(j, n)...)
	}
	return out
}

func (a *Relay) complete(m map[int]json.RawMessage) bool {
	for j := range a.need {
		if m[j] == nil {
			return false
		}
	}
	return true
}

// Turn implements Agent.
func (a *Relay) Turn(ctx context.Context, t *Turn) error {
	if t.MaxCalls > 0 && t.MaxCalls < 2 {
		return fmt.Errorf("%s agent needs at least 2 calls per turn, have %d", a.topo.name, t.MaxCalls)
	}
	if !a.init {
		a.init = true
		a.need = a.subtree(t.ID, t.N)
		a.shards = map[int]json.RawMessage{t.ID: t.Shard}
		a.answers = map[int]json.RawMessage{}
		a.nextK = map[int]int{}
		a.written = map[int]int{}
	}
	root := t.ID == a.topo.root(t.N)
	parent := a.topo.parent(t.ID, t.N)
	kids := a.topo.children(t.ID, t.N)

	// Receive what is pending (nothing is visible in round 1); a turn with
	// queued sends sends first.
	if t.Round > 1 && len(a.outbox) == 0 {
		var from []int
		switch {
		case !a.complete(a.shards):
			for _, c := range kids { // the children still owing shards
				for j := range a.subtree(c, t.N) {
					if a.shards[j] == nil {
						from = append(from, c)
						break
					}
				}
			}
		case !root && !a.complete(a.answers):
			from = []int{parent}
		}
		if len(from) > 0 {
			if err := a.poll(t, from); err != nil {
				return err
			}
		}
	}

	// Up: forward the subtree's shards, or solve at the root.
	if !a.sentUp && a.complete(a.shards) {
		a.sentUp = true
		if root {
			all := make([]json.RawMessage, t.N)
			for j := range all {
				all[j] = a.shards[j]
			}
			ans, err := task.SolveScaled(t.Task, all, t.Params, t.Scale)
			if err != nil {
				return err
			}
			if len(ans) != t.N {
				return fmt.Errorf("task.Solve gave %d answers for N=%d", len(ans), t.N)
			}
			for j, v := range ans {
				a.answers[j] = v
			}
		} else if err := a.queue(t, "shards", parent, a.shards, a.need); err != nil {
			return err
		}
	}
	// Down: hand each child its subtree's answers.
	if !a.sentDn && a.sentUp && a.complete(a.answers) {
		a.sentDn = true
		for _, c := range kids {
			if err := a.queue(t, "answers", c, a.answers, a.subtree(c, t.N)); err != nil {
				return err
			}
		}
	}
	if err := a.flush(t); err != nil {
		return err
	}
	if a.sentDn && len(a.outbox) == 0 {
		return submit(t, a.answers[t.ID])
	}
	return wait(t)
}

// queue packs the items of keep (sorted by agent) into messages to agent
// to, each within the content limit.
func (a *Relay) queue(t *Turn, kind string, to int, items map[int]json.RawMessage, keep map[int]bool) error {
	ids := make([]int, 0, len(keep))
	for j := range keep {
		ids = append(ids, j)
	}
	sort.Ints(ids)
	cur := relayEnv{Kind: kind, To: to, Items: map[string]json.RawMessage{}}
	last := ""
	for _, j := range ids {
		k := strconv.Itoa(j)
		cur.Items[k] = items[j]
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		if len(b) <= t.MaxContentBytes {
			last = string(b)
			continue
		}
		if last == "" {
			return fmt.Errorf("%s of agent %d does not fit in one message (%d bytes)", kind, j, len(b))
		}
		a.outbox = append(a.outbox, relayOut{to: to, content: last})
		cur.Items = map[string]json.RawMessage{k: items[j]}
		b, err = json.Marshal(cur)
		if err != nil {
			return err
		}
		if len(b) > t.MaxContentBytes {
			return fmt.Errorf("%s of agent %d does not fit in one message (%d bytes)", kind, j, len(b))
		}
		last = string(b)
	}
	if last != "" {
		a.outbox = append(a.outbox, relayOut{to: to, content: last})
	}
	return nil
}

// flush sends queued messages while a call is left for wait or submit.
func (a *Relay) flush(t *Turn) error {
	for len(a.outbox) > 0 && t.Remaining() > 1 {
		m := a.outbox[0]
		var tool string
		var args map[string]any
		switch t.Protocol {
		case proto.SFS:
			path := fmt.Sprintf("relay/%d-%d/%d", t.ID, m.to, a.written[m.to])
			tool, args = proto.ToolWriteFile, map[string]any{"path": path, "content": m.content}
		case proto.P2P:
			tool, args = proto.ToolSend, map[string]any{"target_id": m.to, "content": m.content}
		default:
			tool, args = proto.ToolBroadcast, map[string]any{"content": m.content}
		}
		res, err := call(t, tool, args)
		if err != nil {
			return err
		}
		if err := checkResult(tool, res); err != nil {
			return err
		}
		if t.Protocol == proto.SFS {
			a.written[m.to]++
		}
		a.outbox = a.outbox[1:]
	}
	return nil
}

// poll reads what the senders in from have sent to this agent, keeping
// at least one call for the final wait and one for a send.
func (a *Relay) poll(t *Turn, from []int) error {
	var contents []string
	reserve := 2 // the final wait and one send
	if t.MaxCalls == 2 {
		reserve = 1
	}
	switch t.Protocol {
	case proto.SFS:
		for _, s := range from {
			for t.Remaining() > reserve {
				path := fmt.Sprintf("relay/%d-%d/%d", s, t.ID, a.nextK[s])
				res, err := call(t, proto.ToolReadFile, map[string]any{"path": path})
				if err != nil {
					return err
				}
				var hit struct {
					Success bool   `json:"success"`
					Content string `json:"content"`
				}
				if json.Unmarshal(res, &hit) != nil || !hit.Success {
					break
				}
				a.nextK[s]++
				contents = append(contents, hit.Content)
			}
		}
	default:
		msgs, err := receive(t)
		if err != nil {
			return err
		}
		ok := map[int]bool{}
		for _, s := range from {
			ok[s] = true
		}
		for _, m := range msgs {
			if ok[m.From] {
				contents = append(contents, m.Content)
			}
		}
	}
	for _, c := range contents {
		var env relayEnv
		if json.Unmarshal([]byte(c), &env) != nil || env.To != t.ID {
			continue
		}
		dst := a.shards
		switch env.Kind {
		case "shards":
		case "answers":
			dst = a.answers
		default:
			continue
		}
		for k, v := range env.Items {
			j, err := strconv.Atoi(k)
			if err != nil || !a.need[j] {
				continue
			}
			if dst[j] == nil {
				dst[j] = v
			}
		}
	}
	return nil
}
