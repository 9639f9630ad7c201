package task

// The task descriptions shown to agents. These are our own text: the design
// notes give the published prompts' structure but not their wording. They
// follow the published section order (title, goal, agent ordering or data
// distribution, the agent's data, algorithm, output, communication protocol)
// and obey the paper's rule: structure, not roles and not steps. Nothing
// here names a leader or tells an agent what to do first; the only
// coordination advice is the topology suggestion, which Prompt can leave out.

import (
	"fmt"
	"strings"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// Template placeholders, substituted per agent by plain text replacement.
const (
	PhAgentID    = "{agent_id}"
	PhInputShard = "{input_shard}"
	PhMaxID      = "{max_id}"
	PhNumAgents  = "{num_agents}"
)

type describe struct {
	goal   string   // one paragraph
	layout string   // "**Agent Ordering**: …" or "**Data Distribution**: …" (may be empty)
	data   string   // what the agent's shard is
	algo   []string // what the answer is, as definitions
	output string   // type and format
}

const (
	submitGlobal    = "Every agent must call submit_result(answer), and all agents must submit the same answer. A submission is final."
	submitSegmented = "Every agent must call submit_result(answer) with its own segment of the answer (the values at its own positions), not the whole answer. A submission is final."
	hintPrefix      = "Suggested communication pattern (a hint, not a rule): "
)

// hintLine is the removable topology suggestion as it appears in a template.
func (t *Task) hintLine() string { return hintPrefix + t.HintText + "\n" }

// template builds the task_description: Python-level formatting already
// applied (sizes in N, parameters), the four placeholders left in.
func (t *Task) template(n int, params any, shards []any) string {
	d := t.desc(n, params, shards)
	var b strings.Builder
	fmt.Fprintf(&b, "**Task: %s**\n\n", t.Name)
	b.WriteString(d.goal + "\n\n")
	if d.layout != "" {
		b.WriteString(d.layout + "\n\n")
	}
	fmt.Fprintf(&b, "**Your Data**: You are agent %s in a team of %s agents (ids 0 to %s). %s\n%s\n\n",
		PhAgentID, PhNumAgents, PhMaxID, d.data, PhInputShard)
	b.WriteString("**Algorithm**:\n")
	for _, a := range d.algo {
		b.WriteString("- " + a + "\n")
	}
	b.WriteString("\n**Output**: " + d.output + "\n\n")
	b.WriteString("**Communication Protocol**:\n")
	b.WriteString(t.hintLine())
	if t.Segmented {
		b.WriteString(submitSegmented)
	} else {
		b.WriteString(submitGlobal)
	}
	return b.String()
}

// render substitutes the placeholders as the published code does (plain
// replacement with str(value); the shard is shown as Python's str()).
func render(template string, agent, n int, shardText string) string {
	r := strings.NewReplacer(
		PhAgentID, fmt.Sprint(agent),
		PhInputShard, shardText,
		PhMaxID, fmt.Sprint(n-1),
		PhNumAgents, fmt.Sprint(n),
	)
	return r.Replace(template)
}

const (
	orderingII  = "**Agent Ordering**: the global sequence is cut into consecutive segments in agent-id order: agent 0 holds the first segment, agent 1 the next one, and so on up to agent %s, which holds the last. Positions are global: agent i's first item follows agent i-1's last item."
	shuffledIII = "**Data Distribution**: the data were shuffled before being split, so an agent's items are an arbitrary subset of the whole, in no particular order, and the agent's id says nothing about which items it holds."
)

func ordering() string { return fmt.Sprintf(orderingII, PhMaxID) }

type hint struct{ topology, messages, prompt string }

// hints is a variable initialised before the package's init functions run
// (the registry's init reads it).
var hints = buildHints()

func buildHints() map[string]hint {
	hints := map[string]hint{}
	levelI := hint{
		topology: "Star or tree: partial results flow to one agent (or up a tree), then the final answer is broadcast to everyone",
		messages: "2(N-1)",
		prompt:   "this is an aggregation task. Partial results can be combined along a star or a tree and the final answer shared with everyone afterwards; every agent needs the same final answer.",
	}
	for _, id := range []string{"I-01", "I-02", "I-03", "I-04", "I-05", "I-06", "I-07", "I-08", "I-09", "I-10"} {
		hints[id] = levelI
	}
	chainSeg := hint{
		topology: "Chain: information flows along the agent ordering 0 → 1 → … → N-1, one message per neighbour pair",
		messages: "N-1",
		prompt:   "each agent's segment depends only on the segments before it, so information can flow along the chain 0 → 1 → … → N-1, each agent passing on what its successor needs.",
	}
	hints["II-11"] = chainSeg
	hints["II-20"] = chainSeg
	hints["II-14"] = hint{
		topology: "Chain with neighbour exchange: each agent swaps boundary cells with its left and right neighbours",
		messages: "2(N-1)",
		prompt:   "each agent's segment depends only on a few cells next to its boundaries, so neighbours in the ordering (i-1 and i+1) can exchange what lies near their shared boundaries.",
	}
	chainGlobal := hint{
		topology: "Chain along the agent ordering 0 → 1 → … → N-1 (boundary information moves between neighbours), then the full answer is shared with everyone",
		messages: "2(N-1)",
		prompt:   "the data are a sequence cut at agent boundaries, so neighbours in the ordering can pass boundary information along the chain 0 → 1 → … → N-1; the combined answer then has to reach every agent.",
	}
	for _, id := range []string{"II-12", "II-13", "II-15", "II-16", "II-17", "II-19"} {
		hints[id] = chainGlobal
	}
	hints["II-18"] = hint{
		topology: "Pointer jumping (all-to-all rounds) or gathering all records, then broadcast of the ranks",
		messages: "O(N log N)",
		prompt:   "the list nodes are scattered over all agents, so a node's successor is usually held by another agent; following pointers needs exchanges between arbitrary agents (for instance pointer jumping, or collecting the records), and the ranks then have to reach every agent.",
	}
	hints["III-21"] = hint{
		topology: "All-to-all shuffle by value range (sample sort): each value is routed to the agent whose output segment holds it",
		messages: "N(N-1)",
		prompt:   "every agent's output segment can contain values from every other agent, so values have to be exchanged between all pairs of agents, for instance routed by value range.",
	}
	hints["III-22"] = hint{
		topology: "Gather values (or value counts) over a tree or all-to-all, then broadcast of the median",
		messages: "O(N log N)",
		prompt:   "the median depends on the rank of values across all agents, so value information (or counts per value range) has to be combined across all agents and the result shared with everyone.",
	}
	hints["III-23"] = hint{
		topology: "Route edges (or union-find merges) between agents, combine the component structure, then broadcast the count",
		messages: "O(N log N)",
		prompt:   "a component can span edges held by many agents, so edge or component information has to be merged across agents (for instance with union-find merges passed between them) and the count shared with everyone.",
	}
	hints["III-24"] = hint{
		topology: "Frontier exchange per BFS level between the agents holding the edges, then broadcast of the distances",
		messages: "O(N²)",
		prompt:   "a shortest path can use edges held by different agents, so the search frontier (or the edges) has to move between agents, and the distances then have to reach every agent.",
	}
	hints["III-25"] = hint{
		topology: "All-reduce of per-cluster sums and counts (tree or all-to-all), then broadcast of the new centroids",
		messages: "2(N-1)",
		prompt:   "each new centroid is a mean over points held by all agents, so per-cluster partial sums and counts have to be combined across all agents and the result shared with everyone.",
	}
	hints["III-26"] = hint{
		topology: "Hash shuffle: each value is routed to the agent that owns its hash bucket, counts are summed and broadcast",
		messages: "N(N-1)",
		prompt:   "the same value can appear at several agents, so values can be routed to owners (for instance by value modulo the team size) to count each distinct value once; the total then has to reach every agent.",
	}
	hints["III-27"] = hint{
		topology: "All-to-all exchange of user and item vectors, local top-3 candidates, then a merge and broadcast",
		messages: "N(N-1)",
		prompt:   "a user and an item usually sit at different agents, so vectors have to be exchanged between all pairs of agents; local best candidates can then be merged and the top 3 shared with everyone.",
	}
	hints["III-28"] = hint{
		topology: "Route each edge's contribution to the agent owning the target node, then all-gather of the ranks",
		messages: "N(N-1)",
		prompt:   "a node's new rank depends on edges held by many agents and on the out-degree of each source node, so degree information and contributions have to be routed between agents; the full result then has to reach every agent.",
	}
	hints["III-29"] = hint{
		topology: "Gather all task durations (star or all-to-all), compute the schedule, then broadcast the summary",
		messages: "2(N-1)",
		prompt:   "the schedule depends on every task's duration, which is spread unevenly over the agents, so the durations have to be combined across all agents and the result shared with everyone.",
	}
	hints["III-30"] = hint{
		topology: "All-gather: each agent computes its own row of C, then rows are exchanged all-to-all",
		messages: "N(N-1)",
		prompt:   "each agent can compute part of C from its own data, but everyone must submit the full matrix, so the parts have to be exchanged between all agents.",
	}
	return hints
}

var descriptions = map[string]func(n int, params any, shards []any) describe{
	"I-01": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Find the largest integer in a data set of %d integers that is split across all agents (20 per agent).", 20*n),
			data:   "Your 20 integers:",
			algo:   []string{"The answer is the maximum over all integers held by all agents."},
			output: "a single integer.",
		}
	},
	"I-02": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Count how many times the word \"apple\" occurs in a list of %d words that is split across all agents (30 per agent).", 30*n),
			data:   "Your 30 words:",
			algo:   []string{"Count the entries that are exactly \"apple\", summed over all agents."},
			output: "a single integer.",
		}
	},
	"I-03": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Find the winner of an election whose %d votes are split across all agents (25 per agent).", 25*n),
			data:   "Your 25 votes:",
			algo:   []string{"The winner is the candidate with the most votes over all agents.", "A tie goes to the candidate that comes first in the order Candidate_A, Candidate_B, Candidate_C, Candidate_D."},
			output: "the winner's name as a string, for example \"Candidate_B\".",
		}
	},
	"I-04": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Decide whether any of %d log lines, split across all agents (15 per agent), reports an error.", 15*n),
			data:   "Your 15 log lines:",
			algo:   []string{"The answer is true if at least one line held by any agent contains the text \"ERROR\", and false otherwise."},
			output: "a boolean, true or false.",
		}
	},
	"I-05": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Count how many of %d integers, split across all agents (30 per agent), lie in the range 100 to 500.", 30*n),
			data:   "Your 30 integers:",
			algo:   []string{"Count the integers x with 100 ≤ x ≤ 500 (both ends included), summed over all agents."},
			output: "a single integer.",
		}
	},
	"I-06": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute the XOR checksum of %d bytes (integers 0 to 255) split across all agents (20 per agent).", 20*n),
			data:   "Your 20 integers:",
			algo:   []string{"The checksum is the bitwise XOR of all integers held by all agents (XOR is associative and commutative; XOR of nothing is 0)."},
			output: "a single integer from 0 to 255.",
		}
	},
	"I-07": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute the average of %d real numbers split across all agents (25 per agent).", 25*n),
			data:   "Your 25 numbers:",
			algo:   []string{fmt.Sprintf("The average is the sum of all %d numbers divided by %d.", 25*n, 25*n), "Round the average to 2 decimal places."},
			output: "a number rounded to 2 decimal places, for example 53.61.",
		}
	},
	"I-08": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Count the distinct values among %d integers split across all agents (30 per agent); the same value may occur at several agents.", 30*n),
			data:   "Your 30 integers:",
			algo:   []string{"The answer is the size of the union of all agents' values (each distinct value counted once)."},
			output: "a single integer.",
		}
	},
	"I-09": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Find the 10 largest of %d integers split across all agents (30 per agent).", 30*n),
			data:   "Your 30 integers:",
			algo:   []string{"Take all integers of all agents, sort them in descending order and keep the first 10 (duplicates are kept)."},
			output: "a list of 10 integers in descending order, for example [998, 990, 990, …].",
		}
	},
	"I-10": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute the standard deviation of %d real numbers split across all agents (30 per agent).", 30*n),
			data:   "Your 30 numbers:",
			algo:   []string{"Population standard deviation: sqrt(Σ (x - mean)² / count) over all numbers of all agents, where mean is the mean of all numbers.", "Round the result to 2 decimal places."},
			output: "a number rounded to 2 decimal places.",
		}
	},

	"II-11": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute the inclusive prefix sums of a sequence of %d integers held as consecutive segments by the agents (15 per agent).", 15*n),
			layout: ordering(),
			data:   "Your segment of 15 integers:",
			algo:   []string{"The prefix sum at global position p is a[0] + a[1] + … + a[p], over the whole sequence.", "Your answer is the list of prefix sums at your own 15 positions."},
			output: "a list of 15 integers: the global prefix sums at your own positions.",
		}
	},
	"II-12": func(n int, _ any, _ []any) describe {
		l := 15 * n
		return describe{
			goal:   fmt.Sprintf("Compute the 3-point moving average of a sequence of %d integers held as consecutive segments by the agents (15 per agent).", l),
			layout: ordering(),
			data:   "Your segment of 15 integers:",
			algo:   []string{fmt.Sprintf("For j = 0 … %d, m[j] = round((a[j] + a[j+1] + a[j+2]) / 3, 2) over the whole sequence a (windows may span segments).", l-3), fmt.Sprintf("The answer is the full list m of %d values.", max(l-2, 0))},
			output: fmt.Sprintf("a list of %d numbers, each rounded to 2 decimal places, for the whole sequence.", max(l-2, 0)),
		}
	},
	"II-13": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Find the length of the longest palindromic substring of a string of %d lowercase letters held as consecutive pieces by the agents (15 letters per agent).", 15*n),
			layout: ordering(),
			data:   "Your piece of 15 letters:",
			algo:   []string{"Concatenate the pieces in agent order to get the whole string.", "A palindrome reads the same forwards and backwards; the substring may cross agent boundaries."},
			output: "a single integer: the length of the longest palindromic substring of the whole string.",
		}
	},
	"II-14": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Run a one-dimensional cellular automaton on %d cells (0 or 1) held as consecutive segments by the agents (10 per agent).", 10*n),
			layout: ordering(),
			data:   "Your segment of 10 cells:",
			algo:   []string{fmt.Sprintf("Apply %d synchronous steps: in each step a cell becomes 1 if (left neighbour + itself + right neighbour) == 1, and 0 otherwise.", lifeSteps), "Cells beyond the two ends of the whole row count as 0; neighbours across agent boundaries are real cells.", fmt.Sprintf("Your answer is the state of your own 10 cells after %d steps.", lifeSteps)},
			output: "a list of 10 integers (0 or 1): your own cells after the last step.",
		}
	},
	"II-15": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Count occurrences of the pattern A … B … C in a string of %d characters held as consecutive pieces by the agents (20 per agent).", 20*n),
			layout: ordering(),
			data:   "Your piece of 20 characters:",
			algo:   []string{"Scan the whole string (pieces concatenated in agent order) from left to right with three states: waiting for A, then waiting for B, then waiting for C.", "On the awaited character move to the next state; on C add 1 to the count and go back to waiting for A. Every other character is ignored (including an A while waiting for B or C).", "Matches may span agent boundaries."},
			output: "a single integer: the count.",
		}
	},
	"II-16": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute how much rain water is trapped by an elevation profile of %d bars held as consecutive segments by the agents (10 per agent).", 10*n),
			layout: ordering(),
			data:   "Your segment of 10 bar heights:",
			algo:   []string{"Water above bar i = min(highest bar at or left of i, highest bar at or right of i) - height[i], over the whole profile.", "The answer is the sum over all bars."},
			output: "a single integer: the total trapped water.",
		}
	},
	"II-17": func(n int, _ any, _ []any) describe {
		l := 15 * n
		return describe{
			goal:   fmt.Sprintf("Compute the difference array of a sequence of %d integers held as consecutive segments by the agents (15 per agent).", l),
			layout: ordering(),
			data:   "Your segment of 15 integers:",
			algo:   []string{fmt.Sprintf("For j = 0 … %d, d[j] = a[j+1] - a[j] over the whole sequence a (differences across segment boundaries included).", l-2), fmt.Sprintf("The answer is the full list d of %d values.", max(l-1, 0))},
			output: fmt.Sprintf("a list of %d integers for the whole sequence.", max(l-1, 0)),
		}
	},
	"II-18": func(n int, _ any, _ []any) describe {
		m := 8 * n
		return describe{
			goal:   fmt.Sprintf("Rank every node of a singly linked list of %d nodes (ids 0 to %d).", m, m-1),
			layout: fmt.Sprintf("**Data Distribution**: the %d nodes were assigned to agents at random, 8 per agent; a node's successor is usually held by another agent.", m),
			data:   "Your nodes, as records {'id': node, 'next': successor} (next = -1 marks the tail):",
			algo:   []string{"The head is the only node that is no other node's successor.", "The rank of a node is its distance from the head: the head has rank 0, its successor rank 1, and so on."},
			output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its rank, for all %d nodes, for example {\"7\": 0, \"3\": 1, …}.", m),
		}
	},
	"II-19": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Remove duplicates from a sorted sequence of %d integers held as consecutive segments by the agents (15 per agent).", 15*n),
			layout: ordering(),
			data:   "Your segment of 15 integers (the whole sequence is sorted ascending):",
			algo:   []string{"Merge neighbouring equal values: keep one copy of each run of equal values, including runs that cross agent boundaries.", "The answer is the list of distinct values in ascending order."},
			output: "a list of integers in ascending order, each value once.",
		}
	},
	"II-20": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Compute a chained hash over %d data blocks held as consecutive segments by the agents (5 blocks per agent).", 5*n),
			layout: ordering(),
			data:   "Your 5 blocks:",
			algo:   []string{"For the block at global position i: h[i] = ((sum of the ASCII codes of block i) mod 10000) XOR h[i-1], then mod 10000.", "For the very first block (position 0) the previous hash h[-1] is 0.", "Your answer is the list of hashes of your own 5 blocks."},
			output: "a list of 5 integers: the hashes at your own positions.",
		}
	},

	"III-21": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Sort %d integers held by the agents (20 per agent) and let each agent report its share of the sorted order.", 20*n),
			layout: shuffledIII,
			data:   "Your 20 integers:",
			algo:   []string{"Sort all integers of all agents in ascending order (duplicates kept).", "Agent i's answer is the slice sorted[20·i : 20·i + 20] (agent 0 gets the 20 smallest values, and so on)."},
			output: "a list of 20 integers in ascending order: your own slice of the global sorted order.",
		}
	},
	"III-22": func(n int, _ any, _ []any) describe {
		l := 25 * n
		return describe{
			goal:   fmt.Sprintf("Find the median of %d integers held by the agents (25 per agent).", l),
			layout: shuffledIII,
			data:   "Your 25 integers:",
			algo:   []string{fmt.Sprintf("Sort all %d integers ascending; the median is the element at 0-based index %d (that is, sorted[%d // 2]; for an even count this is the upper of the two middle values).", l, l/2, l)},
			output: "a single integer.",
		}
	},
	"III-23": func(n int, _ any, _ []any) describe {
		m := 10 * n
		return describe{
			goal:   fmt.Sprintf("Count the connected components of an undirected graph with %d nodes (ids 0 to %d), whose edges are split across the agents.", m, m-1),
			layout: shuffledIII,
			data:   "Your edges, as (u, v) pairs:",
			algo:   []string{"Two nodes are in the same component if a path of edges joins them (edges may repeat).", fmt.Sprintf("Every node 0 … %d counts, including nodes without any edge (each is a component of its own).", m-1)},
			output: "a single integer: the number of connected components.",
		}
	},
	"III-24": func(n int, _ any, _ []any) describe {
		m := 8 * n
		return describe{
			goal:   fmt.Sprintf("Compute the hop distance from node 0 to every node of an undirected graph with %d nodes (ids 0 to %d), whose edges are split across the agents.", m, m-1),
			layout: shuffledIII,
			data:   "Your edges, as (u, v) pairs:",
			algo:   []string{"The distance of a node is the least number of edges on a path from node 0 (node 0 itself has distance 0).", "A node that no path reaches has distance -1."},
			output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its distance, for all %d nodes, for example {\"0\": 0, \"1\": 2, …}.", m),
		}
	},
	"III-25": func(n int, params any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Perform one k-means iteration (K = %d) on %d points in the plane held by the agents (20 per agent).", kmeansK, 20*n),
			layout: shuffledIII,
			data:   "Your 20 points, as (x, y) pairs:",
			algo: []string{
				fmt.Sprintf("The initial centroids, in order 0, 1, 2, are: %s", pyvalue.Str(params)),
				"Assign every point of every agent to its nearest initial centroid (Euclidean distance; a tie goes to the lower centroid index).",
				"The new centroid k is the mean of the points assigned to k, each coordinate rounded to 2 decimal places; a centroid with no points keeps its initial position, rounded to 2 decimal places.",
			},
			output: "a list of 3 [x, y] pairs in centroid order, for example [[12.5, 40.01], [60.2, 7.75], [88.0, 91.3]].",
		}
	},
	"III-26": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Count the distinct values among %d integers held by the agents (30 per agent); the same value may occur at several agents.", 30*n),
			layout: shuffledIII,
			data:   "Your 30 integers:",
			algo:   []string{"Each distinct value counts once, however many times and at however many agents it occurs."},
			output: "a single integer.",
		}
	},
	"III-27": func(n int, _ any, _ []any) describe {
		u := 3 * n
		return describe{
			goal:   fmt.Sprintf("Find the best-matching user-item pairs among %d users (ids 0 to %d) and %d items (ids 0 to %d), each described by a vector of %d numbers.", u, u-1, u, u-1, cfDim),
			layout: shuffledIII + " Each agent holds 6 vectors, users and items mixed.",
			data:   "Your vectors, as {'users': {user id: vector}, 'items': {item id: vector}}:",
			algo: []string{
				"The score of a (user, item) pair is the dot product of their vectors, rounded to 4 decimal places.",
				fmt.Sprintf("Rank all %d pairs by score, highest first; equal scores are ordered by lower user id, then lower item id.", u*u),
				fmt.Sprintf("The answer is the top %d pairs.", cfTopK),
			},
			output: "a list of 3 triples [user_id, item_id, score], best first, for example [[4, 1, 2.0313], [0, 5, 1.9874], [4, 5, 1.9602]].",
		}
	},
	"III-28": func(n int, _ any, _ []any) describe {
		m := 8 * n
		return describe{
			goal:   fmt.Sprintf("Compute one PageRank step on a directed graph with %d nodes (ids 0 to %d), whose edges are split across the agents.", m, m-1),
			layout: shuffledIII,
			data:   "Your directed edges, as (u, v) pairs meaning u → v:",
			algo: []string{
				fmt.Sprintf("Start from rank 1/%d for every node; the damping factor is 0.85.", m),
				fmt.Sprintf("new_rank[v] = (1 - 0.85) / %d + Σ over edges u → v of 0.85 · (1/%d) / outdegree(u), where outdegree counts all of u's edges over all agents.", m, m),
				"Rank held by nodes without outgoing edges is not redistributed.",
				"Round every new rank to 6 decimal places.",
			},
			output: fmt.Sprintf("a JSON object mapping every node id (as a string key) to its new rank, for all %d nodes, for example {\"0\": 0.012345, …}.", m),
		}
	},
	"III-29": func(n int, _ any, shards []any) describe {
		t, total := 0, 0
		for _, s := range shards {
			for _, rec := range asItems(s) {
				t++
				total += int(field(rec, "duration").(int64))
			}
		}
		return describe{
			goal:   fmt.Sprintf("Schedule %d tasks (ids 0 to %d; total duration %d) on %s machines, one per agent, and report the balance of the schedule.", t, t-1, total, PhNumAgents),
			layout: "**Data Distribution**: the tasks are spread unevenly: one agent holds all the long tasks, the others share the short ones.",
			data:   "Your tasks, as records {'id': task, 'duration': time}:",
			algo: []string{
				"Longest processing time first: sort all tasks by duration, longest first (equal durations in increasing id order).",
				"Give each task in turn to the machine with the smallest current load (a tie goes to the lowest machine index); machines are numbered 0 to " + PhMaxID + ".",
				"From the final loads compute variance = mean over machines of (load - total/machines)², rounded to 2 decimal places, and the largest and smallest load.",
			},
			output: "a JSON object {\"variance\": number, \"max_load\": integer, \"min_load\": integer}.",
		}
	},
	"III-30": func(n int, _ any, _ []any) describe {
		return describe{
			goal:   fmt.Sprintf("Multiply two %d×%d integer matrices, C = A · B.", n, n),
			layout: "**Data Distribution**: agent i holds row i of A and the whole of B.",
			data:   "Your data, as {'type': …, 'A_rows': [row of A], 'A_row_indices': [its index], 'B_matrix': B}:",
			algo:   []string{"C[i][j] = Σ over k of A[i][k] · B[k][j].", "The answer is the whole matrix C, not just one row."},
			output: fmt.Sprintf("a list of %d rows, each a list of %d integers: the full matrix C.", n, n),
		}
	},
}
