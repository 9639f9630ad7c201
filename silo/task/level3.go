package task

// Level III (Paradigm III, global shuffle): the data were shuffled before
// being split, so any agent's answer can depend on any other's items.
//
// Each task is one value: what it is (id, name, output, LeetCode link),
// the description and topology hint its agents see, the generator (the
// published generator's draw order, see docs/silo-tasks.md) and the solver
// (the gold answer from all shards). The list is in the published stream
// order. What all tasks share is in task.go, shared.go and text.go.

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

var levelIII = level{
	number: 3, paradigm: "Paradigm III", complexity: ComplexityIII,
	tasks: []*Task{
		{
			ID: "III-21", Name: "Distributed Sort", Output: OutList, Segmented: true,
			LeetCodeURL: "https://leetcode.com/problems/sort-an-array/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Sort %d integers%s.", 20*n, teamOr(" held by the agents (20 per agent) and let each agent report its share of the sorted order", " and report the sorted order")),
					layout: shuffledIII,
					data:   teamOr("Your 20 integers:", "The integers:"),
					algo:   []string{"Sort all integers" + teamOnly(" of all agents") + " in ascending order (duplicates kept).", teamOr("Agent i's answer is the slice sorted[20·i : 20·i + 20] (agent 0 gets the 20 smallest values, and so on).", "The answer is the whole sorted list.")},
					output: teamOr("a list of 20 integers in ascending order: your own slice of the global sorted order.", fmt.Sprintf("a list of %d integers in ascending order: the whole sorted order.", 20*n)),
				}
			},
			hint: hint{
				topology: "All-to-all shuffle by value range (sample sort): each value is routed to the agent whose output segment holds it",
				messages: "N(N-1)",
				prompt:   "every agent's output segment can contain values from every other agent, so values have to be exchanged between all pairs of agents, for instance routed by value range.",
			},
			gen: func(r rng, n int) ([]any, any) {
				a := randInts(r, 20*n, 1, 1000)
				shuffle(r, a)
				return splitInts(a, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				a := concatInts(shards)
				sort.Ints(a)
				return segments(a, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
			},
		},
		{
			ID: "III-22", Name: "Median", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/median-of-two-sorted-arrays/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				l := 25 * n
				return describe{
					goal:   fmt.Sprintf("Find the median of %d integers%s.", l, teamOnly(" held by the agents (25 per agent)")),
					layout: shuffledIII,
					data:   teamOr("Your 25 integers:", "The integers:"),
					algo:   []string{fmt.Sprintf("Sort all %d integers ascending; the median is the element at 0-based index %d (that is, sorted[%d // 2]; for an even count this is the upper of the two middle values).", l, l/2, l)},
					output: "a single integer.",
				}
			},
			hint: hint{
				topology: "Gather values (or value counts) over a tree or all-to-all, then broadcast of the median",
				messages: "O(N log N)",
				prompt:   "the median depends on the rank of values across all agents, so value information (or counts per value range) has to be combined across all agents and the result shared with everyone.",
			},
			gen: func(r rng, n int) ([]any, any) {
				a := randInts(r, 25*n, 1, 1000)
				shuffle(r, a)
				return splitInts(a, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				a := concatInts(shards)
				if len(a) == 0 {
					return nil, errNoData
				}
				sort.Ints(a)
				return repeat(int64(a[len(a)/2]), n), nil
			},
		},
		{
			ID: "III-23", Name: "Graph Components", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/number-of-connected-components-in-an-undirected-graph/",
			shard:       shList(shTuple(shInt, shInt)), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				m := 10 * n
				return describe{
					goal:   fmt.Sprintf("Count the connected components of an undirected graph with %d nodes (ids 0 to %d)%s.", m, m-1, teamOnly(", whose edges are split across the agents")),
					layout: shuffledIII,
					data:   "Your edges, as (u, v) pairs:",
					algo:   []string{"Two nodes are in the same component if a path of edges joins them (edges may repeat).", fmt.Sprintf("Every node 0 … %d counts, including nodes without any edge (each is a component of its own).", m-1)},
					output: "a single integer: the number of connected components.",
				}
			},
			hint: hint{
				topology: "Route edges (or union-find merges) between agents, combine the component structure, then broadcast the count",
				messages: "O(N log N)",
				prompt:   "a component can span edges held by many agents, so edge or component information has to be merged across agents (for instance with union-find merges passed between them) and the count shared with everyone.",
			},
			gen: func(r rng, n int) ([]any, any) {
				m := 10 * n
				var edges []edge
				for k := 0; k < 20*n; k++ {
					u := r.RandInt(0, m-1)
					v := r.RandInt(0, m-1)
					if u != v {
						edges = append(edges, edge{u, v})
					}
				}
				shuffle(r, edges)
				return splitEdges(edges, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				m := 10 * n
				edges, err := concatEdges(shards, m)
				if err != nil {
					return nil, err
				}
				parent := make([]int, m)
				for i := range parent {
					parent[i] = i
				}
				var find func(int) int
				find = func(x int) int {
					for parent[x] != x {
						parent[x] = parent[parent[x]]
						x = parent[x]
					}
					return x
				}
				comps := m
				for _, e := range edges {
					a, b := find(e.u), find(e.v)
					if a != b {
						parent[a] = b
						comps--
					}
				}
				return repeat(int64(comps), n), nil
			},
		},
		{
			ID: "III-24", Name: "BFS Distance", Output: OutDict,
			LeetCodeURL: "https://leetcode.com/problems/find-if-path-exists-in-graph/",
			shard:       shList(shTuple(shInt, shInt)), gold: shStrDict(shInt),
			desc: func(n int, _ any, _ []any) describe {
				m := 8 * n
				return describe{
					goal:   fmt.Sprintf("Compute the hop distance from node 0 to every node of an undirected graph with %d nodes (ids 0 to %d)%s.", m, m-1, teamOnly(", whose edges are split across the agents")),
					layout: shuffledIII,
					data:   "Your edges, as (u, v) pairs:",
					algo:   []string{"The distance of a node is the least number of edges on a path from node 0 (node 0 itself has distance 0).", "A node that no path reaches has distance -1."},
					output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its distance, for all %d nodes, for example {\"0\": 0, \"1\": 2, …}.", m),
				}
			},
			hint: hint{
				topology: "Frontier exchange per BFS level between the agents holding the edges, then broadcast of the distances",
				messages: "O(N²)",
				prompt:   "a shortest path can use edges held by different agents, so the search frontier (or the edges) has to move between agents, and the distances then have to reach every agent.",
			},
			gen: func(r rng, n int) ([]any, any) {
				m := 8 * n
				adj := make([]map[int]bool, m)
				for i := range adj {
					adj[i] = map[int]bool{}
				}
				var edges []edge
				for k := 0; k < 16*n; k++ {
					u := r.RandInt(0, m-1)
					v := r.RandInt(0, m-1)
					if u != v && !adj[u][v] {
						adj[u][v], adj[v][u] = true, true
						edges = append(edges, edge{u, v})
					}
				}
				shuffle(r, edges)
				return splitEdges(edges, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				m := 8 * n
				edges, err := concatEdges(shards, m)
				if err != nil {
					return nil, err
				}
				adj := make([][]int, m)
				for _, e := range edges {
					adj[e.u] = append(adj[e.u], e.v)
					adj[e.v] = append(adj[e.v], e.u)
				}
				dist := make([]int, m)
				for i := range dist {
					dist[i] = -1
				}
				dist[0] = 0
				queue := []int{0}
				for len(queue) > 0 {
					x := queue[0]
					queue = queue[1:]
					for _, y := range adj[x] {
						if dist[y] < 0 {
							dist[y] = dist[x] + 1
							queue = append(queue, y)
						}
					}
				}
				gold := &pyvalue.Dict{}
				for i, d := range dist {
					gold.Keys = append(gold.Keys, strconv.Itoa(i))
					gold.Vals = append(gold.Vals, int64(d))
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "III-25", Name: "K-Means Iteration", Output: OutMatrix,
			LeetCodeURL: "https://leetcode.com/problems/k-closest-points-to-origin/",
			shard:       shList(shTuple(shFloat, shFloat)), gold: shList(shTuple(shFloat, shFloat)),
			desc: func(n int, params any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Perform one k-means iteration (K = %d) on %d points in the plane%s.", kmeansK, 20*n, teamOnly(" held by the agents (20 per agent)")),
					layout: shuffledIII,
					data:   teamOr("Your 20 points", "The points") + ", as (x, y) pairs:",
					algo: []string{
						fmt.Sprintf("The initial centroids, in order 0, 1, 2, are: %s", pyvalue.Str(params)),
						"Assign every point" + teamOnly(" of every agent") + " to its nearest initial centroid (Euclidean distance; a tie goes to the lower centroid index).",
						"The new centroid k is the mean of the points assigned to k, each coordinate rounded to 2 decimal places; a centroid with no points keeps its initial position, rounded to 2 decimal places.",
					},
					output: "a list of 3 [x, y] pairs in centroid order, for example [[12.5, 40.01], [60.2, 7.75], [88.0, 91.3]].",
				}
			},
			hint: hint{
				topology: "All-reduce of per-cluster sums and counts (tree or all-to-all), then broadcast of the new centroids",
				messages: "2(N-1)",
				prompt:   "each new centroid is a mean over points held by all agents, so per-cluster partial sums and counts have to be combined across all agents and the result shared with everyone.",
			},
			params:   shList(shTuple(shFloat, shFloat)),
			paramsIn: centroidsFromText,
			gen: func(r rng, n int) ([]any, any) {
				pts := make([][2]float64, 20*n)
				for i := range pts {
					x := r.Uniform(0, 100)
					pts[i] = [2]float64{x, r.Uniform(0, 100)}
				}
				cents := &pyvalue.List{}
				for k := 0; k < kmeansK; k++ {
					x := r.Uniform(0, 100)
					cents.Items = append(cents.Items, pyvalue.TupleOf(x, r.Uniform(0, 100)))
				}
				shuffle(r, pts)
				return splitAny(pts, n, func(ps [][2]float64) any {
					l := &pyvalue.List{Items: make([]any, len(ps))}
					for i, p := range ps {
						l.Items[i] = pyvalue.TupleOf(p[0], p[1])
					}
					return l
				}), cents
			},
			solve: func(n int, params any, shards []any) ([]any, error) {
				if params == nil {
					return nil, errors.New("III-25 needs its parameters (the initial centroids)")
				}
				cl := asItems(params)
				if len(cl) != kmeansK {
					return nil, fmt.Errorf("III-25 needs %d initial centroids, got %d", kmeansK, len(cl))
				}
				cents := make([][2]float64, kmeansK)
				for k, c := range cl {
					xy := asFloats(c)
					cents[k] = [2]float64{xy[0], xy[1]}
				}
				var xs, ys [kmeansK][]float64
				for _, s := range shards {
					for _, it := range asItems(s) {
						p := asFloats(it)
						best, bestD := 0, 0.0
						for k, c := range cents {
							dx, dy := p[0]-c[0], p[1]-c[1]
							d := float64(dx*dx) + float64(dy*dy)
							if k == 0 || d < bestD {
								best, bestD = k, d
							}
						}
						xs[best] = append(xs[best], p[0])
						ys[best] = append(ys[best], p[1])
					}
				}
				gold := &pyvalue.List{}
				for k := range cents {
					if len(xs[k]) == 0 {
						gold.Items = append(gold.Items, pyvalue.TupleOf(pyRound(cents[k][0], 2), pyRound(cents[k][1], 2)))
						continue
					}
					l := float64(len(xs[k]))
					gold.Items = append(gold.Items, pyvalue.TupleOf(pyRound(pySum(xs[k])/l, 2), pyRound(pySum(ys[k])/l, 2)))
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "III-26", Name: "Global Distinct", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/contains-duplicate/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Count the distinct values among %d integers%s.", 30*n, teamOnly(" held by the agents (30 per agent); the same value may occur at several agents")),
					layout: shuffledIII,
					data:   teamOr("Your 30 integers:", "The integers:"),
					algo:   []string{"Each distinct value counts once, however many times" + teamOnly(" and at however many agents") + " it occurs."},
					output: "a single integer.",
				}
			},
			hint: hint{
				topology: "Hash shuffle: each value is routed to the agent that owns its hash bucket, counts are summed and broadcast",
				messages: "N(N-1)",
				prompt:   "the same value can appear at several agents, so values can be routed to owners (for instance by value modulo the team size) to count each distinct value once; the total then has to reach every agent.",
			},
			gen: func(r rng, n int) ([]any, any) {
				a := make([]int, 30*n)
				for i := range a {
					a[i] = r.Choice(15 * n)
				}
				shuffle(r, a)
				return splitInts(a, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				return repeat(int64(distinct(concatInts(shards))), n), nil
			},
		},
		{
			ID: "III-27", Name: "Collaborative Filtering", Output: OutMatrix,
			LeetCodeURL: "https://leetcode.com/problems/maximum-dot-product-of-two-subsequences/",
			shard:       shRecord("users", shIntDict(shList(shFloat)), "items", shIntDict(shList(shFloat))), gold: shList(shTuple(shInt, shInt, shFloat)),
			desc: func(n int, _ any, _ []any) describe {
				u := 3 * n
				return describe{
					goal:   fmt.Sprintf("Find the best-matching user-item pairs among %d users (ids 0 to %d) and %d items (ids 0 to %d), each described by a vector of %d numbers.", u, u-1, u, u-1, cfDim),
					layout: shuffledIII + " Each agent holds 6 vectors, users and items mixed.",
					data:   teamOr("Your vectors", "The vectors") + ", as {'users': {user id: vector}, 'items': {item id: vector}}:",
					algo: []string{
						"The score of a (user, item) pair is the dot product of their vectors, rounded to 4 decimal places.",
						fmt.Sprintf("Rank all %d pairs by score, highest first; equal scores are ordered by lower user id, then lower item id.", u*u),
						fmt.Sprintf("The answer is the top %d pairs.", cfTopK),
					},
					output: "a list of 3 triples [user_id, item_id, score], best first, for example [[4, 1, 2.0313], [0, 5, 1.9874], [4, 5, 1.9602]].",
				}
			},
			hint: hint{
				topology: "All-to-all exchange of user and item vectors, local top-3 candidates, then a merge and broadcast",
				messages: "N(N-1)",
				prompt:   "a user and an item usually sit at different agents, so vectors have to be exchanged between all pairs of agents; local best candidates can then be merged and the top 3 shared with everyone.",
			},
			gen: func(r rng, n int) ([]any, any) {
				draw := func() [][]float64 {
					vs := make([][]float64, 3*n)
					for i := range vs {
						vs[i] = uniforms(r, cfDim, 0, 1)
					}
					return vs
				}
				users := draw()
				items := draw()
				type rec struct {
					user bool
					id   int
				}
				recs := make([]rec, 0, 6*n)
				for i := range users {
					recs = append(recs, rec{true, i})
				}
				for j := range items {
					recs = append(recs, rec{false, j})
				}
				shuffle(r, recs)
				return splitAny(recs, n, func(rs []rec) any {
					u, it := &pyvalue.Dict{}, &pyvalue.Dict{}
					for _, x := range rs {
						if x.user {
							u.Set(int64(x.id), pyvalue.Floats(users[x.id]))
						} else {
							it.Set(int64(x.id), pyvalue.Floats(items[x.id]))
						}
					}
					return &pyvalue.Dict{Keys: []any{"users", "items"}, Vals: []any{u, it}}
				}), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				users, items := map[int][]float64{}, map[int][]float64{}
				collect := func(dst map[int][]float64, d any) error {
					dd := d.(*pyvalue.Dict)
					for i, k := range dd.Keys {
						id := int(k.(int64))
						if _, dup := dst[id]; dup {
							return fmt.Errorf("id %d appears twice", id)
						}
						dst[id] = asFloats(dd.Vals[i])
					}
					return nil
				}
				for _, s := range shards {
					if err := collect(users, field(s, "users")); err != nil {
						return nil, err
					}
					if err := collect(items, field(s, "items")); err != nil {
						return nil, err
					}
				}
				uids := sortedKeys(users)
				iids := sortedKeys(items)
				type score struct {
					u, i int
					s    float64
				}
				scores := make([]score, 0, len(uids)*len(iids))
				for _, u := range uids {
					for _, i := range iids {
						a, b := users[u], items[i]
						if len(a) != len(b) {
							return nil, fmt.Errorf("user %d and item %d have different dimensions", u, i)
						}
						dot := 0.0
						for k := range a {
							dot += float64(a[k] * b[k])
						}
						scores = append(scores, score{u, i, pyRound(dot, 4)})
					}
				}
				slices.SortStableFunc(scores, func(x, y score) int { return cmp.Compare(y.s, x.s) })
				gold := &pyvalue.List{}
				for _, s := range scores[:min(cfTopK, len(scores))] {
					gold.Items = append(gold.Items, pyvalue.TupleOf(int64(s.u), int64(s.i), s.s))
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "III-28", Name: "PageRank Step", Output: OutDict,
			LeetCodeURL: "https://leetcode.com/problems/find-the-town-judge/",
			shard:       shList(shTuple(shInt, shInt)), gold: shStrDict(shFloat),
			desc: func(n int, _ any, _ []any) describe {
				m := 8 * n
				return describe{
					goal:   fmt.Sprintf("Compute one PageRank step on a directed graph with %d nodes (ids 0 to %d)%s.", m, m-1, teamOnly(", whose edges are split across the agents")),
					layout: shuffledIII,
					data:   teamOr("Your directed edges", "The directed edges") + ", as (u, v) pairs meaning u → v:",
					algo: []string{
						fmt.Sprintf("Start from rank 1/%d for every node; the damping factor is 0.85.", m),
						fmt.Sprintf("new_rank[v] = (1 - 0.85) / %d + Σ over edges u → v of 0.85 · (1/%d) / outdegree(u), where outdegree counts all of u's edges%s.", m, m, teamOnly(" over all agents")),
						"Rank held by nodes without outgoing edges is not redistributed.",
						"Round every new rank to 6 decimal places.",
					},
					output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its new rank, for all %d nodes, for example {\"0\": 0.012345, …}.", m),
				}
			},
			hint: hint{
				topology: "Route each edge's contribution to the agent owning the target node, then all-gather of the ranks",
				messages: "N(N-1)",
				prompt:   "a node's new rank depends on edges held by many agents and on the out-degree of each source node, so degree information and contributions have to be routed between agents; the full result then has to reach every agent.",
			},
			gen: func(r rng, n int) ([]any, any) {
				m := 8 * n
				out := make([][]int, m)
				var edges []edge
				for k := 0; k < 16*n; k++ {
					u := r.RandInt(0, m-1)
					v := r.RandInt(0, m-1)
					if u != v && !slices.Contains(out[u], v) {
						out[u] = append(out[u], v)
						edges = append(edges, edge{u, v})
					}
				}
				shuffle(r, edges)
				return splitEdges(edges, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				m := 8 * n
				edges, err := concatEdges(shards, m)
				if err != nil {
					return nil, err
				}
				out := make([][]int, m)
				for _, e := range edges {
					out[e.u] = append(out[e.u], e.v)
				}
				d := pageRankDamping
				rank := make([]float64, m)
				for v := range rank {
					rank[v] = (1 - d) / float64(m)
				}
				for u := 0; u < m; u++ {
					if len(out[u]) == 0 {
						continue
					}
					share := float64(d*(1/float64(m))) / float64(len(out[u]))
					for _, v := range out[u] {
						rank[v] += share
					}
				}
				gold := &pyvalue.Dict{}
				for v, x := range rank {
					gold.Keys = append(gold.Keys, strconv.Itoa(v))
					gold.Vals = append(gold.Vals, pyRound(x, 6))
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "III-29", Name: "Load Balance", Output: OutDict,
			LeetCodeURL: "https://leetcode.com/problems/find-minimum-time-to-finish-all-jobs/",
			shard:       shList(shRecord("id", shInt, "duration", shInt)), gold: shRecord("variance", shFloat, "max_load", shInt, "min_load", shInt),
			desc: func(n int, _ any, shards []any) describe {
				t, total := 0, 0
				for _, s := range shards {
					for _, rec := range asItems(s) {
						t++
						total += int(field(rec, "duration").(int64))
					}
				}
				return describe{
					goal:   fmt.Sprintf("Schedule %d tasks (ids 0 to %d; total duration %d) on %s, and report the balance of the schedule.", t, t-1, total, teamOr(PhNumAgents+" machines, one per agent", fmt.Sprintf("%d machines", n))),
					layout: "**Data Distribution**: the tasks are spread unevenly: one agent holds all the long tasks, the others share the short ones.",
					data:   teamOr("Your tasks", "The tasks") + ", as records {'id': task, 'duration': time}:",
					algo: []string{
						"Longest processing time first: sort all tasks by duration, longest first (equal durations in increasing id order).",
						"Give each task in turn to the machine with the smallest current load (a tie goes to the lowest machine index); machines are numbered 0 to " + teamOr(PhMaxID, fmt.Sprint(n-1)) + ".",
						"From the final loads compute variance = mean over machines of (load - total/machines)², rounded to 2 decimal places, and the largest and smallest load.",
					},
					output: "a JSON object {\"variance\": number, \"max_load\": integer, \"min_load\": integer}.",
				}
			},
			hint: hint{
				topology: "Gather all task durations (star or all-to-all), compute the schedule, then broadcast the summary",
				messages: "2(N-1)",
				prompt:   "the schedule depends on every task's duration, which is spread unevenly over the agents, so the durations have to be combined across all agents and the result shared with everyone.",
			},
			gen: func(r rng, n int) ([]any, any) {
				jobs := make([]job, 20*n)
				for i := range jobs {
					if i%10 == 0 {
						jobs[i] = job{i, r.RandInt(50, 100)}
					} else {
						jobs[i] = job{i, r.RandInt(1, 10)}
					}
				}
				var heavy, light []job
				for _, j := range jobs {
					if j.id%10 == 0 {
						heavy = append(heavy, j)
					} else {
						light = append(light, j)
					}
				}
				conv := func(js []job) any {
					l := &pyvalue.List{Items: make([]any, len(js))}
					for i, j := range js {
						l.Items[i] = &pyvalue.Dict{Keys: []any{"id", "duration"}, Vals: []any{int64(j.id), int64(j.dur)}}
					}
					return l
				}
				if n == 1 { // our extension: the published code divides by n - 1
					return []any{conv(append(heavy, light...))}, nil
				}
				return append([]any{conv(heavy)}, splitAny(light, n-1, conv)...), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				var jobs []job
				total := 0
				for _, s := range shards {
					for _, rec := range asItems(s) {
						j := job{int(field(rec, "id").(int64)), int(field(rec, "duration").(int64))}
						jobs = append(jobs, j)
						total += j.dur
					}
				}
				sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].id < jobs[b].id })
				sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].dur > jobs[b].dur })
				loads := make([]int, n)
				for _, j := range jobs {
					k := 0
					for i := range loads {
						if loads[i] < loads[k] {
							k = i
						}
					}
					loads[k] += j.dur
				}
				avg := float64(total) / float64(n)
				sq := make([]float64, n)
				for i, l := range loads {
					dv := float64(l) - avg
					sq[i] = float64(dv * dv)
				}
				gold := &pyvalue.Dict{
					Keys: []any{"variance", "max_load", "min_load"},
					Vals: []any{pyRound(pySum(sq)/float64(n), 2), int64(slices.Max(loads)), int64(slices.Min(loads))},
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "III-30", Name: "Matrix Multiply", Output: OutMatrix,
			LeetCodeURL: "https://leetcode.com/problems/sparse-matrix-multiplication/",
			shard:       shRecord("type", shStr, "A_rows", shList(shList(shInt)), "A_row_indices", shList(shInt), "B_matrix", shList(shList(shInt))), gold: shList(shList(shInt)),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Multiply two %d×%d integer matrices, C = A · B.", n, n),
					layout: "**Data Distribution**: agent i holds row i of A and the whole of B.",
					data:   teamOr("Your data, as {'type': …, 'A_rows': [row of A], 'A_row_indices': [its index], 'B_matrix': B}:", "The data, as {'type': …, 'A_rows': [rows of A], 'A_row_indices': [their indices], 'B_matrix': B}:"),
					algo:   []string{"C[i][j] = Σ over k of A[i][k] · B[k][j].", "The answer is the whole matrix C" + teamOnly(", not just one row") + "."},
					output: fmt.Sprintf("a list of %d rows, each a list of %d integers: the full matrix C.", n, n),
				}
			},
			hint: hint{
				topology: "All-gather: each agent computes its own row of C, then rows are exchanged all-to-all",
				messages: "N(N-1)",
				prompt:   "each agent can compute part of C from its own data, but everyone must submit the full matrix, so the parts have to be exchanged between all agents.",
			},
			maxN: 200,
			gen: func(r rng, n int) ([]any, any) {
				draw := func() [][]int {
					m := make([][]int, n)
					for i := range m {
						m[i] = randInts(r, n, 1, 10)
					}
					return m
				}
				a := draw()
				b := draw()
				bl := &pyvalue.List{Items: make([]any, n)}
				for i := range b {
					bl.Items[i] = pyvalue.Ints(b[i])
				}
				shards := make([]any, n)
				for i := range shards {
					shards[i] = &pyvalue.Dict{
						Keys: []any{"type", "A_rows", "A_row_indices", "B_matrix"},
						Vals: []any{"rows_and_full_B", pyvalue.ListOf(pyvalue.Ints(a[i])), pyvalue.ListOf(int64(i)), bl},
					}
				}
				return shards, nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				rows := make([][]int, n)
				var b [][]int
				for si, s := range shards {
					sb := make([][]int, 0, n)
					for _, row := range asItems(field(s, "B_matrix")) {
						sb = append(sb, asInts(row))
					}
					if len(sb) != n {
						return nil, fmt.Errorf("shard %d: B has %d rows, want %d", si, len(sb), n)
					}
					for _, row := range sb {
						if len(row) != n {
							return nil, fmt.Errorf("shard %d: B row of length %d, want %d", si, len(row), n)
						}
					}
					if b == nil {
						b = sb
					}
					idx := asInts(field(s, "A_row_indices"))
					ar := asItems(field(s, "A_rows"))
					if len(idx) != len(ar) {
						return nil, fmt.Errorf("shard %d: %d A rows but %d row indices", si, len(ar), len(idx))
					}
					for k, i := range idx {
						row := asInts(ar[k])
						if i < 0 || i >= n || rows[i] != nil || len(row) != n {
							return nil, fmt.Errorf("shard %d: bad A row %d", si, i)
						}
						rows[i] = row
					}
				}
				c := &pyvalue.List{Items: make([]any, n)}
				for i := range rows {
					if rows[i] == nil {
						return nil, fmt.Errorf("row %d of A is in no shard", i)
					}
					out := make([]int, n)
					for j := 0; j < n; j++ {
						for k := 0; k < n; k++ {
							out[j] += rows[i][k] * b[k][j]
						}
					}
					c.Items[i] = pyvalue.Ints(out)
				}
				return repeat(c, n), nil
			},
		},
	},
}

// shuffledIII is the layout paragraph of most Level III descriptions.
const shuffledIII = "**Data Distribution**: the data were shuffled before being split, so an agent's items are an arbitrary subset of the whole, in no particular order, and the agent's id says nothing about which items it holds."

type edge struct{ u, v int }

func splitEdges(edges []edge, n int) []any {
	return splitAny(edges, n, func(es []edge) any {
		l := &pyvalue.List{Items: make([]any, len(es))}
		for i, e := range es {
			l.Items[i] = pyvalue.TupleOf(int64(e.u), int64(e.v))
		}
		return l
	})
}

func concatEdges(shards []any, nodes int) ([]edge, error) {
	var out []edge
	for _, s := range shards {
		for _, it := range asItems(s) {
			t := asItems(it)
			e := edge{int(t[0].(int64)), int(t[1].(int64))}
			if e.u < 0 || e.u >= nodes || e.v < 0 || e.v >= nodes {
				return nil, fmt.Errorf("edge (%d, %d) outside nodes 0..%d", e.u, e.v, nodes-1)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// K-means: K initial centroids.
const kmeansK = 3

var (
	numRe         = `([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))`
	parenPairRe   = regexp.MustCompile(`\(\s*` + numRe + `\s*,\s*` + numRe + `\s*\)`)
	bracketPairRe = regexp.MustCompile(`\[\s*` + numRe + `\s*,\s*` + numRe + `\s*\]`)
)

// centroidsFromText finds III-25's initial centroids in a description: the
// first three "(x, y)" number pairs, else the first three "[x, y]" pairs.
func centroidsFromText(s string) any {
	for _, re := range []*regexp.Regexp{parenPairRe, bracketPairRe} {
		m := re.FindAllStringSubmatch(s, kmeansK)
		if len(m) < kmeansK {
			continue
		}
		l := &pyvalue.List{}
		for _, p := range m {
			x, err1 := strconv.ParseFloat(p[1], 64)
			y, err2 := strconv.ParseFloat(p[2], 64)
			if err1 != nil || err2 != nil {
				return nil
			}
			l.Items = append(l.Items, pyvalue.TupleOf(x, y))
		}
		return l
	}
	return nil
}

// Collaborative filtering: vector dimension and number of top pairs.
const (
	cfDim  = 5
	cfTopK = 3
)

func sortedKeys(m map[int][]float64) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// pageRankDamping is a variable, not a constant, so that 1 - d is computed
// in float64 as Python does (0.15000000000000002), not exactly.
var pageRankDamping = 0.85

type job struct{ id, dur int }
