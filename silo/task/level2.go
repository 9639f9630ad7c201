package task

// Level II (Paradigm II, structured mesh with locality): the data are one
// sequence cut into consecutive segments in agent order, so information
// flows between neighbours.
//
// Each task is one value: what it is (id, name, output, LeetCode link),
// the description and topology hint its agents see, the generator (the
// published generator's draw order, see docs/silo-tasks.md) and the solver
// (the gold answer from all shards). The list is in the published stream
// order. What all tasks share is in task.go, shared.go and text.go.

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

var levelII = level{
	number: 2, paradigm: "Paradigm II", complexity: ComplexityII,
	tasks: []*Task{
		{
			ID: "II-11", Name: "Prefix Sum", Output: OutList, Segmented: true, DepKind: DepPrefix,
			LeetCodeURL: "https://leetcode.com/problems/running-sum-of-1d-array/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute the inclusive prefix sums of a sequence of %d integers%s.", 15*n, teamOnly(" held as consecutive segments by the agents (15 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 15 integers:", "The sequence:"),
					algo:   []string{"The prefix sum at global position p is a[0] + a[1] + … + a[p], over the whole sequence.", teamOr("Your answer is the list of prefix sums at your own 15 positions.", "The answer is the list of prefix sums at every position.")},
					output: teamOr("a list of 15 integers: the global prefix sums at your own positions.", fmt.Sprintf("a list of %d integers: the prefix sums at every position.", 15*n)),
				}
			},
			hint: chainSegment,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 50), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				all := concatInts(shards)
				acc := 0
				for i, x := range all {
					acc += x
					all[i] = acc
				}
				return segments(all, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
			},
		},
		{
			ID: "II-12", Name: "Moving Average", Output: OutList,
			LeetCodeURL: "https://leetcode.com/problems/moving-average-from-data-stream/",
			shard:       shList(shInt), gold: shList(shFloat),
			desc: func(n int, _ any, _ []any) describe {
				l := 15 * n
				return describe{
					goal:   fmt.Sprintf("Compute the 3-point moving average of a sequence of %d integers%s.", l, teamOnly(" held as consecutive segments by the agents (15 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 15 integers:", "The sequence:"),
					algo:   []string{fmt.Sprintf("For j = 0 … %d, m[j] = round((a[j] + a[j+1] + a[j+2]) / 3, 2) over the whole sequence a%s.", l-3, teamOnly(" (windows may span segments)")), fmt.Sprintf("The answer is the full list m of %d values.", max(l-2, 0))},
					output: fmt.Sprintf("a list of %d numbers, each rounded to 2 decimal places, for the whole sequence.", max(l-2, 0)),
				}
			},
			hint: chainGlobal,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 100), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				a := concatInts(shards)
				out := []float64{}
				for j := 0; j+2 < len(a); j++ {
					out = append(out, pyRound(float64(a[j]+a[j+1]+a[j+2])/3, 2))
				}
				return repeat(pyvalue.Floats(out), n), nil
			},
		},
		{
			ID: "II-13", Name: "Longest Palindrome", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/longest-palindromic-substring/",
			shard:       shStr, gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Find the length of the longest palindromic substring of a string of %d lowercase letters%s.", 15*n, teamOnly(" held as consecutive pieces by the agents (15 letters per agent)")),
					layout: ordering(),
					data:   teamOr("Your piece of 15 letters:", "The string:"),
					algo:   []string{teamOr("Concatenate the pieces in agent order to get the whole string.", "The string is given whole."), "A palindrome reads the same forwards and backwards" + teamOnly("; the substring may cross agent boundaries") + "."},
					output: "a single integer: the length of the longest palindromic substring of the whole string.",
				}
			},
			hint: chainGlobal,
			gen: func(r rng, n int) ([]any, any) {
				const letters = "abcdefghijklmnopqrstuvwxyz"
				s := make([]byte, 15*n)
				for i := range s {
					s[i] = letters[r.Choice(len(letters))]
				}
				pos := r.RandInt(0, len(s)-7)
				copy(s[pos:], "racecar")
				return splitAny([]byte(s), n, func(b []byte) any { return string(b) }), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				return repeat(int64(longestPalindrome(concatText(shards))), n), nil
			},
		},
		{
			ID: "II-14", Name: "1D Life Game", Output: OutList, Segmented: true, DepKind: DepNeighbours,
			LeetCodeURL: "https://leetcode.com/problems/game-of-life/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Run a one-dimensional cellular automaton on %d cells (0 or 1)%s.", 10*n, teamOnly(" held as consecutive segments by the agents (10 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 10 cells:", "The row of cells:"),
					algo:   []string{fmt.Sprintf("Apply %d synchronous steps: in each step a cell becomes 1 if (left neighbour + itself + right neighbour) == 1, and 0 otherwise.", lifeSteps), "Cells beyond the two ends of the whole row count as 0" + teamOnly("; neighbours across agent boundaries are real cells") + ".", fmt.Sprintf("%s after %d steps.", teamOr("Your answer is the state of your own 10 cells", "The answer is the state of every cell"), lifeSteps)},
					output: teamOr("a list of 10 integers (0 or 1): your own cells after the last step.", fmt.Sprintf("a list of %d integers (0 or 1): every cell after the last step.", 10*n)),
				}
			},
			hint: hint{
				topology: "Chain with neighbour exchange: each agent swaps boundary cells with its left and right neighbours",
				messages: "2(N-1)",
				prompt:   "each agent's segment depends only on a few cells next to its boundaries, so neighbours in the ordering (i-1 and i+1) can exchange what lies near their shared boundaries.",
			},
			gen: func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 10*n, 0, 1), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				cur := concatInts(shards)
				for step := 0; step < lifeSteps; step++ {
					next := make([]int, len(cur))
					for i := range cur {
						sum := cur[i]
						if i > 0 {
							sum += cur[i-1]
						}
						if i+1 < len(cur) {
							sum += cur[i+1]
						}
						if sum == 1 {
							next[i] = 1
						}
					}
					cur = next
				}
				return segments(cur, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
			},
		},
		{
			ID: "II-15", Name: "Pattern Search", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/is-subsequence/",
			shard:       shStr, gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Count occurrences of the pattern A … B … C in a string of %d characters%s.", 20*n, teamOnly(" held as consecutive pieces by the agents (20 per agent)")),
					layout: ordering(),
					data:   teamOr("Your piece of 20 characters:", "The string:"),
					algo:   []string{"Scan the whole string" + teamOnly(" (pieces concatenated in agent order)") + " from left to right with three states: waiting for A, then waiting for B, then waiting for C.", "On the awaited character move to the next state; on C add 1 to the count and go back to waiting for A. Every other character is ignored (including an A while waiting for B or C).", teamOnly("Matches may span agent boundaries.")},
					output: "a single integer: the count.",
				}
			},
			hint: chainGlobal,
			gen: func(r rng, n int) ([]any, any) {
				const alphabet = "ABCDXYZ"
				d := make([]byte, 20*n)
				for i := range d {
					d[i] = alphabet[r.Choice(len(alphabet))]
				}
				for k := 0; k < 2; k++ {
					pos := r.RandInt(0, len(d)-15)
					d[pos] = 'A'
					d[pos+r.RandInt(1, 5)] = 'B'
					d[pos+r.RandInt(6, 10)] = 'C'
				}
				return splitAny(d, n, func(b []byte) any { return string(b) }), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				count, state := 0, 0
				for _, ch := range concatText(shards) {
					switch {
					case state == 0 && ch == 'A':
						state = 1
					case state == 1 && ch == 'B':
						state = 2
					case state == 2 && ch == 'C':
						count++
						state = 0
					}
				}
				return repeat(int64(count), n), nil
			},
		},
		{
			ID: "II-16", Name: "Trapping Rain", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/trapping-rain-water/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute how much rain water is trapped by an elevation profile of %d bars%s.", 10*n, teamOnly(" held as consecutive segments by the agents (10 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 10 bar heights:", "The bar heights:"),
					algo:   []string{"Water above bar i = min(highest bar at or left of i, highest bar at or right of i) - height[i], over the whole profile.", "The answer is the sum over all bars."},
					output: "a single integer: the total trapped water.",
				}
			},
			hint: chainGlobal,
			gen: func(r rng, n int) ([]any, any) {
				h := randInts(r, 10*n, 0, 10)
				for i := 1; i < len(h)-1; i += 5 {
					h[i] = r.RandInt(0, 3)
				}
				return splitInts(h, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				h := concatInts(shards)
				left := make([]int, len(h))
				right := make([]int, len(h))
				for i := range h {
					left[i] = h[i]
					if i > 0 {
						left[i] = max(left[i-1], h[i])
					}
				}
				for i := len(h) - 1; i >= 0; i-- {
					right[i] = h[i]
					if i+1 < len(h) {
						right[i] = max(right[i+1], h[i])
					}
				}
				water := 0
				for i := range h {
					water += min(left[i], right[i]) - h[i]
				}
				return repeat(int64(water), n), nil
			},
		},
		{
			ID: "II-17", Name: "Diff Array", Output: OutList,
			LeetCodeURL: "https://leetcode.com/problems/corporate-flight-bookings/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				l := 15 * n
				return describe{
					goal:   fmt.Sprintf("Compute the difference array of a sequence of %d integers%s.", l, teamOnly(" held as consecutive segments by the agents (15 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 15 integers:", "The sequence:"),
					algo:   []string{fmt.Sprintf("For j = 0 … %d, d[j] = a[j+1] - a[j] over the whole sequence a%s.", l-2, teamOnly(" (differences across segment boundaries included)")), fmt.Sprintf("The answer is the full list d of %d values.", max(l-1, 0))},
					output: fmt.Sprintf("a list of %d integers for the whole sequence.", max(l-1, 0)),
				}
			},
			hint: chainGlobal,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 100), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				a := concatInts(shards)
				d := []int{}
				for j := 0; j+1 < len(a); j++ {
					d = append(d, a[j+1]-a[j])
				}
				return repeat(pyvalue.Ints(d), n), nil
			},
		},
		{
			ID: "II-18", Name: "List Ranking", Output: OutDict,
			Revision:    1, // holders: the second shuffle permutes the chain-ordered list
			LeetCodeURL: "https://leetcode.com/problems/middle-of-the-linked-list/",
			shard:       shList(shRecord("id", shInt, "next", shInt)), gold: shStrDict(shInt),
			desc: func(n int, _ any, _ []any) describe {
				m := 8 * n
				return describe{
					goal:   fmt.Sprintf("Rank every node of a singly linked list of %d nodes (ids 0 to %d).", m, m-1),
					layout: fmt.Sprintf("**Data Distribution**: the %d nodes were assigned to agents at random, 8 per agent; a node's successor is usually held by another agent.", m),
					data:   teamOr("Your nodes", "The nodes") + ", as records {'id': node, 'next': successor} (next = -1 marks the tail):",
					algo:   []string{"The head is the only node that is no other node's successor.", "The rank of a node is its distance from the head: the head has rank 0, its successor rank 1, and so on."},
					output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its rank, for all %d nodes, for example {\"7\": 0, \"3\": 1, …}.", m),
				}
			},
			hint: hint{
				topology: "Pointer jumping (all-to-all rounds) or gathering all records, then broadcast of the ranks",
				messages: "O(N log N)",
				prompt:   "the list nodes are scattered over all agents, so a node's successor is usually held by another agent; following pointers needs exchanges between arbitrary agents (for instance pointer jumping, or collecting the records), and the ranks then have to reach every agent.",
			},
			gen: func(r rng, n int) ([]any, any) {
				m := 8 * n
				order := make([]int, m)
				for i := range order {
					order[i] = i
				}
				shuffle(r, order) // chain order, head first
				next := make([]int, m)
				for k, node := range order {
					next[node] = -1
					if k+1 < m {
						next[node] = order[k+1]
					}
				}
				// The published generator shuffles the same, chain-ordered
				// list a second time and builds the records in that order
				// (docs/silo-tasks.md, "II-18 holders").
				shuffle(r, order) // who holds which node
				return splitAny(order, n, func(ids []int) any {
					l := &pyvalue.List{}
					for _, id := range ids {
						l.Items = append(l.Items, &pyvalue.Dict{Keys: []any{"id", "next"}, Vals: []any{int64(id), int64(next[id])}})
					}
					return l
				}), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				next := map[int]int{}
				var ids []int
				for _, s := range shards {
					for _, rec := range asItems(s) {
						id, nx := int(field(rec, "id").(int64)), int(field(rec, "next").(int64))
						if _, dup := next[id]; dup {
							return nil, fmt.Errorf("node %d appears twice", id)
						}
						next[id] = nx
						ids = append(ids, id)
					}
				}
				pointed := map[int]bool{}
				for _, nx := range next {
					if nx != -1 {
						if _, ok := next[nx]; !ok {
							return nil, fmt.Errorf("next %d is not a node", nx)
						}
						pointed[nx] = true
					}
				}
				head := -1
				for _, id := range ids {
					if !pointed[id] {
						if head != -1 {
							return nil, errors.New("records do not form one list (several heads)")
						}
						head = id
					}
				}
				if head == -1 {
					return nil, errors.New("records do not form one list (no head)")
				}
				gold := &pyvalue.Dict{}
				for node, rank := head, 0; node != -1; node, rank = next[node], rank+1 {
					if rank >= len(ids) {
						return nil, errors.New("records do not form one list (cycle)")
					}
					gold.Keys = append(gold.Keys, strconv.Itoa(node))
					gold.Vals = append(gold.Vals, int64(rank))
				}
				if len(gold.Keys) != len(ids) {
					return nil, errors.New("records do not form one list (unreachable nodes)")
				}
				return repeat(gold, n), nil
			},
		},
		{
			ID: "II-19", Name: "Merge Neighbors", Output: OutList,
			LeetCodeURL: "https://leetcode.com/problems/remove-duplicates-from-sorted-array/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Remove duplicates from a sorted sequence of %d integers%s.", 15*n, teamOnly(" held as consecutive segments by the agents (15 per agent)")),
					layout: ordering(),
					data:   teamOr("Your segment of 15 integers (the whole sequence is sorted ascending):", "The sequence (sorted ascending):"),
					algo:   []string{"Merge neighbouring equal values: keep one copy of each run of equal values" + teamOnly(", including runs that cross agent boundaries") + ".", "The answer is the list of distinct values in ascending order."},
					output: "a list of integers in ascending order, each value once.",
				}
			},
			hint: chainGlobal,
			gen: func(r rng, n int) ([]any, any) {
				a := randInts(r, 15*n, 1, 50)
				sort.Ints(a)
				return splitInts(a, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				a := concatInts(shards)
				sort.Ints(a)
				return repeat(pyvalue.Ints(slices.Compact(a)), n), nil
			},
		},
		{
			ID: "II-20", Name: "Pipeline Hash", Output: OutList, Segmented: true, DepKind: DepPrefix,
			LeetCodeURL: "https://leetcode.com/problems/xor-queries-of-a-subarray/",
			shard:       shList(shStr), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute a chained hash over %d data blocks%s.", 5*n, teamOnly(" held as consecutive segments by the agents (5 blocks per agent)")),
					layout: ordering(),
					data:   teamOr("Your 5 blocks:", "The blocks:"),
					algo:   []string{"For the block at global position i: h[i] = ((sum of the ASCII codes of block i) mod 10000) XOR h[i-1], then mod 10000.", "For the very first block (position 0) the previous hash h[-1] is 0.", teamOr("Your answer is the list of hashes of your own 5 blocks.", "The answer is the list of hashes of all blocks.")},
					output: teamOr("a list of 5 integers: the hashes at your own positions.", fmt.Sprintf("a list of %d integers: the hashes at every position.", 5*n)),
				}
			},
			hint: chainSegment,
			gen: func(_ rng, n int) ([]any, any) {
				blocks := make([]string, 5*n)
				for i := range blocks {
					blocks[i] = fmt.Sprintf("Block_%d_Data", i)
				}
				return splitStrings(blocks, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				blocks := concatStrings(shards)
				hashes := make([]int, len(blocks))
				h := 0
				for i, b := range blocks {
					sum := 0
					for _, c := range b {
						sum += int(c)
					}
					h = ((sum % 10000) ^ h) % 10000
					hashes[i] = h
				}
				return segments(hashes, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
			},
		},
	},
}

// The topology hints Level II tasks share: a chain along the agent order
// for prefix-like segmented answers, and a chain then a broadcast for
// global answers.
var (
	chainSegment = hint{
		topology: "Chain: information flows along the agent ordering 0 → 1 → … → N-1, one message per neighbour pair",
		messages: "N-1",
		prompt:   "each agent's segment depends only on the segments before it, so information can flow along the chain 0 → 1 → … → N-1, each agent passing on what its successor needs.",
	}
	chainGlobal = hint{
		topology: "Chain along the agent ordering 0 → 1 → … → N-1 (boundary information moves between neighbours), then the full answer is shared with everyone",
		messages: "2(N-1)",
		prompt:   "the data are a sequence cut at agent boundaries, so neighbours in the ordering can pass boundary information along the chain 0 → 1 → … → N-1; the combined answer then has to reach every agent.",
	}
)

const orderingII = "**Agent Ordering**: the global sequence is cut into consecutive segments in agent-id order: agent 0 holds the first segment, agent 1 the next one, and so on up to agent %s, which holds the last. Positions are global: agent i's first item follows agent i-1's last item."

// ordering is the layout paragraph of Level II descriptions.
func ordering() string { return fmt.Sprintf(orderingII, PhMaxID) }

func concatText(shards []any) string {
	var b strings.Builder
	for _, s := range shards {
		b.WriteString(s.(string))
	}
	return b.String()
}

// longestPalindrome is Manacher's algorithm over code points.
func longestPalindrome(s string) int {
	rs := []rune(s)
	t := make([]rune, 0, 2*len(rs)+1)
	t = append(t, 0)
	for _, c := range rs {
		t = append(t, c, 0) // 0 separates (never in the data)
	}
	p := make([]int, len(t))
	c, right, best := 0, 0, 0
	for i := range t {
		if i < right {
			p[i] = min(right-i, p[2*c-i])
		}
		for i-p[i]-1 >= 0 && i+p[i]+1 < len(t) && t[i-p[i]-1] == t[i+p[i]+1] {
			p[i]++
		}
		if i+p[i] > right {
			c, right = i, i+p[i]
		}
		best = max(best, p[i])
	}
	return best
}

// lifeSteps is the number of synchronous steps of II-14.
const lifeSteps = 5
