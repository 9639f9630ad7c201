package task

// Level I (Paradigm I, aggregation): the answer is one value folded over
// every shard; every agent submits it.
//
// Each task is one value: what it is (id, name, output, LeetCode link),
// the description and topology hint its agents see, the generator (the
// published generator's draw order, see docs/silo-tasks.md) and the solver
// (the gold answer from all shards). The list is in the published stream
// order. What all tasks share is in task.go, shared.go and text.go.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

var levelI = level{
	number: 1, paradigm: "Paradigm I", complexity: ComplexityI,
	tasks: []*Task{
		{
			ID: "I-01", Name: "Global Max", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/third-maximum-number/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Find the largest integer in a data set of %d integers%s.", 20*n, teamOnly(" that is split across all agents (20 per agent)")),
					data:   teamOr("Your 20 integers:", "The integers:"),
					algo:   []string{"The answer is the maximum over all integers" + teamOnly(" held by all agents") + "."},
					output: "a single integer.",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 20*n, -1000, 1000), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				all := concatInts(shards)
				if len(all) == 0 {
					return nil, errNoData
				}
				return repeat(int64(slices.Max(all)), n), nil
			},
		},
		{
			ID: "I-02", Name: "Word Frequency", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/word-frequency/",
			shard:       shList(shStr), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Count how many times the word \"apple\" occurs in a list of %d words%s.", 30*n, teamOnly(" that is split across all agents (30 per agent)")),
					data:   teamOr("Your 30 words:", "The words:"),
					algo:   []string{"Count the entries that are exactly \"apple\"" + teamOnly(", summed over all agents") + "."},
					output: "a single integer.",
				}
			},
			hint: aggregation,
			gen: func(r rng, n int) ([]any, any) {
				data := make([]string, 30*n)
				for i := range data {
					data[i] = words[r.Choice(len(words))]
				}
				for i := 0; i < len(data); i += 10 {
					data[i] = "apple"
				}
				return splitStrings(data, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				c := 0
				for _, w := range concatStrings(shards) {
					if w == "apple" {
						c++
					}
				}
				return repeat(int64(c), n), nil
			},
		},
		{
			ID: "I-03", Name: "Distributed Vote", Output: OutString,
			LeetCodeURL: "https://leetcode.com/problems/majority-element/",
			shard:       shList(shStr), gold: shStr,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Find the winner of an election %s.", teamOr(fmt.Sprintf("whose %d votes are split across all agents (25 per agent)", 25*n), fmt.Sprintf("from its %d votes", 25*n))),
					data:   teamOr("Your 25 votes:", "The votes:"),
					algo:   []string{"The winner is the candidate with the most votes" + teamOnly(" over all agents") + ".", "A tie goes to the candidate that comes first in the order Candidate_A, Candidate_B, Candidate_C, Candidate_D."},
					output: "the winner's name as a string, for example \"Candidate_B\".",
				}
			},
			hint: aggregation,
			gen: func(r rng, n int) ([]any, any) {
				votes := make([]string, 25*n)
				for i := range votes {
					votes[i] = candidates[r.Choice(len(candidates))]
				}
				winner := candidates[r.Choice(len(candidates))]
				for i := 0; i < len(votes); i += 2 {
					votes[i] = winner
				}
				return splitStrings(votes, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				count := map[string]int{}
				for _, v := range concatStrings(shards) {
					count[v]++
				}
				best := candidates[0]
				for _, c := range candidates[1:] {
					if count[c] > count[best] {
						best = c
					}
				}
				return repeat(best, n), nil
			},
		},
		{
			ID: "I-04", Name: "Any Match", Output: OutBool,
			LeetCodeURL: "https://leetcode.com/problems/find-the-index-of-the-first-occurrence-in-a-string/",
			shard:       shList(shStr), gold: shBool,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Decide whether any of %d log lines%s reports an error.", 15*n, teamOnly(", split across all agents (15 per agent),")),
					data:   teamOr("Your 15 log lines:", "The log lines:"),
					algo:   []string{"The answer is true if at least one line" + teamOnly(" held by any agent") + " contains the text \"ERROR\", and false otherwise."},
					output: "a boolean, true or false.",
				}
			},
			hint: aggregation,
			gen: func(r rng, n int) ([]any, any) {
				logs := make([]string, 15*n)
				for i := range logs {
					logs[i] = logLines[r.Choice(len(logLines))]
				}
				if hasError := r.Choice(2) == 0; hasError { // choice([True, False])
					logs[r.RandInt(0, len(logs)-1)] = errorLine
				}
				return splitStrings(logs, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				found := false
				for _, l := range concatStrings(shards) {
					if strings.Contains(l, "ERROR") {
						found = true
					}
				}
				return repeat(found, n), nil
			},
		},
		{
			ID: "I-05", Name: "Range Count", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/count-of-range-sum/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Count how many of %d integers%s lie in the range 100 to 500.", 30*n, teamOnly(", split across all agents (30 per agent),")),
					data:   teamOr("Your 30 integers:", "The integers:"),
					algo:   []string{"Count the integers x with 100 ≤ x ≤ 500 (both ends included)" + teamOnly(", summed over all agents") + "."},
					output: "a single integer.",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 30*n, 0, 1000), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				c := 0
				for _, x := range concatInts(shards) {
					if x >= 100 && x <= 500 {
						c++
					}
				}
				return repeat(int64(c), n), nil
			},
		},
		{
			ID: "I-06", Name: "Checksum", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/single-number/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute the XOR checksum of %d bytes (integers 0 to 255)%s.", 20*n, teamOnly(" split across all agents (20 per agent)")),
					data:   teamOr("Your 20 integers:", "The integers:"),
					algo:   []string{"The checksum is the bitwise XOR of all integers" + teamOnly(" held by all agents") + " (XOR is associative and commutative; XOR of nothing is 0)."},
					output: "a single integer from 0 to 255.",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 20*n, 0, 255), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				x := 0
				for _, v := range concatInts(shards) {
					x ^= v
				}
				return repeat(int64(x), n), nil
			},
		},
		{
			ID: "I-07", Name: "Average Value", Output: OutFloat,
			LeetCodeURL: "https://leetcode.com/problems/average-salary-excluding-the-minimum-and-maximum-salary/",
			shard:       shList(shFloat), gold: shFloat,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute the average of %d real numbers%s.", 25*n, teamOnly(" split across all agents (25 per agent)")),
					data:   teamOr("Your 25 numbers:", "The numbers:"),
					algo:   []string{fmt.Sprintf("The average is the sum of all %d numbers divided by %d.", 25*n, 25*n), "Round the average to 2 decimal places."},
					output: "a number rounded to 2 decimal places, for example 53.61.",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitFloats(uniforms(r, 25*n, 0, 100), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				all := concatFloats(shards)
				if len(all) == 0 {
					return nil, errNoData
				}
				return repeat(pyRound(pySum(all)/float64(len(all)), 2), n), nil
			},
		},
		{
			ID: "I-08", Name: "Set Union Size", Output: OutInt,
			LeetCodeURL: "https://leetcode.com/problems/intersection-of-two-arrays/",
			shard:       shList(shInt), gold: shInt,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Count the distinct values among %d integers%s.", 30*n, teamOnly(" split across all agents (30 per agent); the same value may occur at several agents")),
					data:   teamOr("Your 30 integers:", "The integers:"),
					algo:   []string{teamOr("The answer is the size of the union of all agents' values", "The answer is the number of distinct values") + " (each distinct value counted once)."},
					output: "a single integer.",
				}
			},
			hint: aggregation,
			gen: func(r rng, n int) ([]any, any) {
				data := make([]int, 30*n)
				for i := range data {
					data[i] = r.Choice(15 * n) // choice(range(15n)) is the index itself
				}
				return splitInts(data, n), nil
			},
			solve: func(n int, _ any, shards []any) ([]any, error) {
				return repeat(int64(distinct(concatInts(shards))), n), nil
			},
		},
		{
			ID: "I-09", Name: "Top-K Select", Output: OutList,
			LeetCodeURL: "https://leetcode.com/problems/kth-largest-element-in-an-array/",
			shard:       shList(shInt), gold: shList(shInt),
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Find the 10 largest of %d integers%s.", 30*n, teamOnly(" split across all agents (30 per agent)")),
					data:   teamOr("Your 30 integers:", "The integers:"),
					algo:   []string{"Take all integers" + teamOnly(" of all agents") + ", sort them in descending order and keep the first 10 (duplicates are kept)."},
					output: "a list of 10 integers in descending order, for example [998, 990, 990, …].",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitInts(randInts(r, 30*n, 1, 1000), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				all := concatInts(shards)
				sort.Sort(sort.Reverse(sort.IntSlice(all)))
				if len(all) > 10 {
					all = all[:10]
				}
				return repeat(pyvalue.Ints(all), n), nil
			},
		},
		{
			ID: "I-10", Name: "Standard Deviation", Output: OutFloat,
			LeetCodeURL: "https://leetcode.com/problems/statistics-from-a-large-sample/",
			shard:       shList(shFloat), gold: shFloat,
			desc: func(n int, _ any, _ []any) describe {
				return describe{
					goal:   fmt.Sprintf("Compute the standard deviation of %d real numbers%s.", 30*n, teamOnly(" split across all agents (30 per agent)")),
					data:   teamOr("Your 30 numbers:", "The numbers:"),
					algo:   []string{"Population standard deviation: sqrt(Σ (x - mean)² / count) over all numbers" + teamOnly(" of all agents") + ", where mean is the mean of all numbers.", "Round the result to 2 decimal places."},
					output: "a number rounded to 2 decimal places.",
				}
			},
			hint: aggregation,
			gen:  func(r rng, n int) ([]any, any) { return splitFloats(uniforms(r, 30*n, 0, 100), n), nil },
			solve: func(n int, _ any, shards []any) ([]any, error) {
				all := concatFloats(shards)
				if len(all) == 0 {
					return nil, errNoData
				}
				mean := pySum(all) / float64(len(all))
				sq := make([]float64, len(all))
				for i, x := range all {
					d := x - mean
					sq[i] = float64(d * d)
				}
				return repeat(pyRound(math.Sqrt(pySum(sq)/float64(len(all))), 2), n), nil
			},
		},
	},
}

// aggregation is the topology hint of every Level I task.
var aggregation = hint{
	topology: "Star or tree: partial results flow to one agent (or up a tree), then the final answer is broadcast to everyone",
	messages: "2(N-1)",
	prompt:   "this is an aggregation task. Partial results can be combined along a star or a tree and the final answer shared with everyone afterwards; every agent needs the same final answer.",
}

// words is I-02's vocabulary.
var words = []string{"apple", "banana", "cherry", "date", "elderberry", "fig", "grape"}

// candidates are I-03's candidates, in tie-break order.
var candidates = []string{"Candidate_A", "Candidate_B", "Candidate_C", "Candidate_D"}

// logLines are I-04's ordinary log lines; errorLine is the one to find.
var logLines = []string{
	"INFO: System started",
	"DEBUG: Loading config",
	"WARNING: Low memory",
	"SUCCESS: Task completed",
	"TRACE: Function called",
}

const errorLine = "ERROR: Critical failure detected"
