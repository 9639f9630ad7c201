package round

// What each agent had seen when it acted, for the failure labels: the
// shards whose messages had reached it (flow, AgentResult.Seen) and those
// whose data had (content, AgentResult.Informed), both counting only what
// had reached the agent's decisions. A model-backed agent decides a whole
// turn in one reply, so what its calls return reaches it with its next
// request: an agent that reads and submits in the same reply had not seen
// what it read, and a message it sends in that reply cannot carry it
// (docs/silo-rounds.md, "Failure labels").

import (
	"math"
	"slices"
	"sort"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// Replier is implemented by agents that decide each turn's calls at once,
// before any of them returns: a language model's reply. With
// SeesResultsNextTurn true, what a turn's calls return counts as seen by
// the agent from its next turn on (what ConsensusNews tells it before its
// first call, at once). Agents without it, like the scripted reference
// agents, see each result as soon as its call returns.
type Replier interface {
	SeesResultsNextTurn() bool
}

// resultsNextTurn reports, per agent, whether it sees its calls' results
// only in its next turn (Replier).
func resultsNextTurn(agents []Agent) []bool {
	out := make([]bool, len(agents))
	for i, a := range agents {
		if r, ok := a.(Replier); ok {
			out[i] = r.SeesResultsNextTurn()
		}
	}
	return out
}

// available reports whether a content that became available to an agent at
// at had reached its decision at p: at or before p, or, for an agent that
// sees results next turn, in an earlier round or before the turn's first
// call.
func available(at, p proto.Pos, nextTurn bool) bool {
	if nextTurn {
		return at.Round < p.Round || at.Round == p.Round && at.Call == 0
	}
	return at.Before(p)
}

// views computes the flow and content sets of every agent at any point of
// its calls. A content read carries at most what its author had when it
// wrote it (its flow and content sets there), so the sets are computed
// author first: contents are read in a later round than they were written,
// so the recursion always goes back in time and ends.
type views struct {
	n    int
	c    *carrier
	next []bool
	ds   [][]proto.Delivery
	// steps[a] are agent a's sets where they change: from its first
	// steps[a][m].k deliveries on; done[a] deliveries are computed.
	steps [][]step
	done  []int
	busy  []bool
}

// step is an agent's flow and content sets (sorted) after its first k
// deliveries, until the next step.
type step struct {
	k          int
	flow, data []int
}

// agentViews returns each agent's flow and content sets when it submitted
// (for a non-submitter, at the end of the run); next says which agents see
// results only in their next turn (nil: none).
func agentViews(in *task.Instance, st *proto.Store, next []bool) (seen, informed [][]int) {
	n := in.N
	v := &views{n: n, c: newCarrier(in), next: make([]bool, n), ds: make([][]proto.Delivery, n),
		steps: make([][]step, n), done: make([]int, n), busy: make([]bool, n)}
	copy(v.next, next)
	for a := range n {
		v.ds[a] = st.Deliveries(a)
		v.steps[a] = []step{{0, []int{a}, []int{a}}}
	}
	seen, informed = make([][]int, n), make([][]int, n)
	for a := range n {
		p := proto.Pos{Round: math.MaxInt}
		if sub, ok := st.Submission(a); ok {
			p = sub.At
		}
		f, d := v.at(a, p)
		seen[a], informed[a] = slices.Clone(f), slices.Clone(d)
	}
	return seen, informed
}

// at returns agent a's flow and content sets at p.
func (v *views) at(a int, p proto.Pos) (flow, data []int) {
	ds := v.ds[a]
	k := sort.Search(len(ds), func(k int) bool { return !available(ds[k].At, p, v.next[a]) })
	v.upTo(a, k)
	k = min(k, v.done[a]) // short only on a cycle, which the store's rounds rule out
	steps := v.steps[a]
	m := sort.Search(len(steps), func(m int) bool { return steps[m].k > k }) - 1
	return steps[m].flow, steps[m].data
}

// upTo computes agent a's sets after each of its first k deliveries.
func (v *views) upTo(a, k int) {
	if v.busy[a] || v.done[a] >= k {
		return
	}
	v.busy[a] = true
	defer func() { v.busy[a] = false }()
	has := make([]bool, v.n)
	for ; v.done[a] < k; v.done[a]++ {
		d := v.ds[a][v.done[a]]
		if d.From < 0 || d.From >= v.n {
			continue
		}
		af, ad := v.at(d.From, d.Written)
		last := v.steps[a][len(v.steps[a])-1]
		flow, data := union(last.flow, af), last.data
		if !covers(data, ad) { // a content carries no more than its author had (carry)
			clear(has)
			for _, j := range data {
				has[j] = true
			}
			v.c.carry(a, d.Text, ad, has)
			if len(data) != count(has) {
				data = setOf(has)
			}
		}
		if len(flow) != len(last.flow) || len(data) != len(last.data) {
			v.steps[a] = append(v.steps[a], step{v.done[a] + 1, flow, data})
		}
	}
}

// union is the sorted union of two sorted sets; a itself if b adds nothing.
func union(a, b []int) []int {
	if covers(a, b) {
		return a
	}
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func count(has []bool) int {
	k := 0
	for _, h := range has {
		if h {
			k++
		}
	}
	return k
}

func setOf(has []bool) []int {
	var out []int
	for j, h := range has {
		if h {
			out = append(out, j)
		}
	}
	return out
}
