package analyze

import "slices"

// AgentStats are one agent's figures in its run's communication graph.
type AgentStats struct {
	Out      int   // distinct peers it offered information to (out-degree)
	In       int   // distinct peers it got information from (in-degree)
	Degree   int   // Out + In, 0..2(N-1)
	Reached  int   // distinct peers linked to it either way, 0..N-1
	Sent     int64 // Graph.Sent
	Received int64 // Graph.Received
	Traffic  int64 // weight of the edges incident to it
}

// Topology is a run's communication structure (docs/silo-analyze.md).
type Topology struct {
	Agents      []AgentStats
	Edges       int     // directed pairs (u, v) with W > 0
	EdgeDensity float64 // Edges / (N(N-1)); 0 when N = 1
	MeanOut     float64 // Edges / N, the mean out-degree (= mean in-degree)
	MaxOut      int
	MaxIn       int
	Gini        float64 // Gini coefficient of the agents' Degree
	Traffic     int64   // total edge weight
	// Hub is the agent of largest Degree, the lowest id on a tie; -1 when
	// the graph has no edge.
	Hub        int
	HubShare   float64 // the hub's Traffic / Traffic
	HubReached int     // the hub's Reached
	// HubSubmit is the round the hub submitted in (0: it never did, or
	// no hub) and HubReachedAtSubmit the peers it was linked to either way
	// by the end of that round (the paper's G.1 "submitted after
	// contacting only 28 of 100 peers"); HubReached when it never
	// submitted.
	HubSubmit          int
	HubReachedAtSubmit int
	// LeaderDefined is N >= 3 (with two agents every exchange is a star).
	// Leader: the hub's Degree is at least twice every other agent's, at
	// least half of the traffic touches it (HubShare >= 1/2), and it
	// reached at least half of its N-1 peers.
	LeaderDefined bool
	Leader        bool
}

func topologyOf(g *Graph) Topology {
	n := g.N
	t := Topology{Agents: make([]AgentStats, n), Hub: -1, LeaderDefined: n >= 3}
	for u := range n {
		t.Agents[u].Sent, t.Agents[u].Received = g.Sent[u], g.Received[u]
	}
	for u := range n {
		for v := range n {
			w := g.W[u*n+v]
			if w <= 0 || u == v {
				continue
			}
			t.Edges++
			t.Traffic += w
			t.Agents[u].Out++
			t.Agents[v].In++
			t.Agents[u].Traffic += w
			t.Agents[v].Traffic += w
			if u < v || g.W[v*n+u] <= 0 { // count each linked pair once
				t.Agents[u].Reached++
				t.Agents[v].Reached++
			}
		}
	}
	degrees := make([]int, n)
	for u := range n {
		a := &t.Agents[u]
		a.Degree = a.Out + a.In
		degrees[u] = a.Degree
		t.MaxOut, t.MaxIn = max(t.MaxOut, a.Out), max(t.MaxIn, a.In)
	}
	t.MeanOut = float64(t.Edges) / float64(n)
	if n > 1 {
		t.EdgeDensity = float64(t.Edges) / float64(n*(n-1))
	}
	t.Gini = gini(degrees)
	if t.Edges == 0 {
		return t
	}
	t.Hub = 0
	for u := range n {
		if degrees[u] > degrees[t.Hub] {
			t.Hub = u
		}
	}
	h := t.Agents[t.Hub]
	t.HubShare = float64(h.Traffic) / float64(t.Traffic)
	t.HubReached = h.Reached
	t.HubSubmit, t.HubReachedAtSubmit = g.Submit[t.Hub], h.Reached
	if sub := t.HubSubmit; sub > 0 {
		t.HubReachedAtSubmit = 0
		by := func(f int) bool { return f > 0 && f <= sub }
		for v := range n {
			if v != t.Hub && (by(g.First[t.Hub*n+v]) || by(g.First[v*n+t.Hub])) {
				t.HubReachedAtSubmit++
			}
		}
	}
	dominant := true // at least twice every other agent's degree
	for u := range n {
		if u != t.Hub && 2*degrees[u] > h.Degree {
			dominant = false
		}
	}
	t.Leader = t.LeaderDefined && dominant && 2*h.Traffic >= t.Traffic && 2*h.Reached >= n-1
	return t
}

// gini is the Gini coefficient of xs, Σ_i Σ_j |x_i − x_j| / (2 n Σx),
// computed exactly from the sorted values as (2 Σ_i i·x_(i) − (n+1) Σx) /
// (n Σx) with i = 1..n; 0 when every x is 0.
func gini(xs []int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum, weighted int64
	for i, x := range s {
		sum += int64(x)
		weighted += int64(i+1) * int64(x)
	}
	if sum == 0 {
		return 0
	}
	n := int64(len(s))
	return float64(2*weighted-(n+1)*sum) / float64(n*sum)
}
