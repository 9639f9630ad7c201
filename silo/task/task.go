package task

import (
	"fmt"
	"strings"
)

// Output types of the tasks' answers.
const (
	OutInt    = "int"
	OutFloat  = "float"
	OutString = "string"
	OutBool   = "bool"
	OutList   = "list"   // flat list of numbers
	OutDict   = "dict"   // JSON object
	OutMatrix = "matrix" // list of lists (III-25 pairs, III-27 triples, III-30 matrix)
)

// Dependency structures: which shards an agent's correct answer depends on.
const (
	DepAll        = "all"        // every shard
	DepPrefix     = "prefix"     // shards 0..i
	DepNeighbours = "neighbours" // shards i-1, i, i+1
)

// Complexity classes as written in the published files
// (metadata.theoretical_complexity).
const (
	ComplexityI   = "O(N) - MapReduce/Aggregation"
	ComplexityII  = "O(N) - Structured Mesh with Locality"
	ComplexityIII = "O(N log N) or O(N²) - Global/Shuffle"
)

// Task is one of the 30 SILO-BENCH tasks. Tasks are immutable; get them from
// All or Lookup.
type Task struct {
	ID        string // "I-01"
	Name      string // "Global Max"
	Level     int    // 1, 2, 3 (also decides the P rule)
	Paradigm  string // "Paradigm I", "Paradigm II", "Paradigm III"
	Segmented bool   // agent i submits only its own segment of the answer
	Output    string // OutInt, OutFloat, ...

	// DepKind is the dependency structure (DepAll, DepPrefix,
	// DepNeighbours); Deps(n) gives the sets.
	DepKind string

	Complexity   string // metadata.theoretical_complexity
	LeetCodeURL  string // our choice of a related problem (see docs/silo-tasks.md)
	Topology     string // metadata.optimal_topology (free text)
	MessageCount string // metadata.optimal_message_count (free text in N)
	HintText     string // the topology suggestion shown in the prompt (removable)

	gen   func(r rng, n int) (shards []any, params any)
	solve func(n int, params any, shards []any) ([]any, error)
	shard shape // shape of one input shard (validation, typing, repr)
	gold  shape // shape of one agent's gold answer (validation only)
	desc  func(n int, params any, shards []any) describe
	// maxN bounds seeded instances (data or answers grow faster than N).
	maxN int
}

// Deps returns, for each of n agents, the indices of the shards its correct
// answer depends on.
func (t *Task) Deps(n int) [][]int {
	deps := make([][]int, n)
	for i := range deps {
		var d []int
		switch t.DepKind {
		case DepPrefix:
			for j := 0; j <= i; j++ {
				d = append(d, j)
			}
		case DepNeighbours:
			for j := i - 1; j <= i+1; j++ {
				if j >= 0 && j < n {
					d = append(d, j)
				}
			}
		default:
			for j := 0; j < n; j++ {
				d = append(d, j)
			}
		}
		deps[i] = d
	}
	return deps
}

// MaxAgents is the largest n Seeded accepts for this task.
func (t *Task) MaxAgents() int {
	if t.maxN > 0 {
		return t.maxN
	}
	return DefaultMaxAgents
}

// DefaultMaxAgents bounds seeded instances; III-30 (an N×N matrix in every
// shard) has a lower bound.
const DefaultMaxAgents = 1000

func (t *Task) String() string { return t.ID + " " + t.Name }

// All returns the 30 tasks in id order (I-01 … III-30), the order of the
// published generator's stream.
func All() []*Task {
	out := make([]*Task, len(registry))
	copy(out, registry)
	return out
}

// Lookup finds a task by id ("I-01", "ii-18" and "III-30" all work).
func Lookup(id string) (*Task, error) {
	want := strings.ToUpper(strings.TrimSpace(id))
	for _, t := range registry {
		if t.ID == want {
			return t, nil
		}
	}
	return nil, fmt.Errorf("task: unknown task id %q (want I-01 … I-10, II-11 … II-20, III-21 … III-30)", id)
}

var registry []*Task

func init() {
	registry = []*Task{
		level1("I-01", "Global Max", OutInt, "https://leetcode.com/problems/third-maximum-number/", genI01, solveI01, shList(shInt), shInt),
		level1("I-02", "Word Frequency", OutInt, "https://leetcode.com/problems/word-frequency/", genI02, solveI02, shList(shStr), shInt),
		level1("I-03", "Distributed Vote", OutString, "https://leetcode.com/problems/majority-element/", genI03, solveI03, shList(shStr), shStr),
		level1("I-04", "Any Match", OutBool, "https://leetcode.com/problems/find-the-index-of-the-first-occurrence-in-a-string/", genI04, solveI04, shList(shStr), shBool),
		level1("I-05", "Range Count", OutInt, "https://leetcode.com/problems/count-of-range-sum/", genI05, solveI05, shList(shInt), shInt),
		level1("I-06", "Checksum", OutInt, "https://leetcode.com/problems/single-number/", genI06, solveI06, shList(shInt), shInt),
		level1("I-07", "Average Value", OutFloat, "https://leetcode.com/problems/average-salary-excluding-the-minimum-and-maximum-salary/", genI07, solveI07, shList(shFloat), shFloat),
		level1("I-08", "Set Union Size", OutInt, "https://leetcode.com/problems/intersection-of-two-arrays/", genI08, solveI08, shList(shInt), shInt),
		level1("I-09", "Top-K Select", OutList, "https://leetcode.com/problems/kth-largest-element-in-an-array/", genI09, solveI09, shList(shInt), shList(shInt)),
		level1("I-10", "Standard Deviation", OutFloat, "https://leetcode.com/problems/statistics-from-a-large-sample/", genI10, solveI10, shList(shFloat), shFloat),

		level2("II-11", "Prefix Sum", true, DepPrefix, OutList, "https://leetcode.com/problems/running-sum-of-1d-array/", genII11, solveII11, shList(shInt), shList(shInt)),
		level2("II-12", "Moving Average", false, DepAll, OutList, "https://leetcode.com/problems/moving-average-from-data-stream/", genII12, solveII12, shList(shInt), shList(shFloat)),
		level2("II-13", "Longest Palindrome", false, DepAll, OutInt, "https://leetcode.com/problems/longest-palindromic-substring/", genII13, solveII13, shStr, shInt),
		level2("II-14", "1D Life Game", true, DepNeighbours, OutList, "https://leetcode.com/problems/game-of-life/", genII14, solveII14, shList(shInt), shList(shInt)),
		level2("II-15", "Pattern Search", false, DepAll, OutInt, "https://leetcode.com/problems/is-subsequence/", genII15, solveII15, shStr, shInt),
		level2("II-16", "Trapping Rain", false, DepAll, OutInt, "https://leetcode.com/problems/trapping-rain-water/", genII16, solveII16, shList(shInt), shInt),
		level2("II-17", "Diff Array", false, DepAll, OutList, "https://leetcode.com/problems/corporate-flight-bookings/", genII17, solveII17, shList(shInt), shList(shInt)),
		level2("II-18", "List Ranking", false, DepAll, OutDict, "https://leetcode.com/problems/middle-of-the-linked-list/", genII18, solveII18, shList(shRecord("id", shInt, "next", shInt)), shStrDict(shInt)),
		level2("II-19", "Merge Neighbors", false, DepAll, OutList, "https://leetcode.com/problems/remove-duplicates-from-sorted-array/", genII19, solveII19, shList(shInt), shList(shInt)),
		level2("II-20", "Pipeline Hash", true, DepPrefix, OutList, "https://leetcode.com/problems/xor-queries-of-a-subarray/", genII20, solveII20, shList(shStr), shList(shInt)),

		level3("III-21", "Distributed Sort", true, OutList, "https://leetcode.com/problems/sort-an-array/", genIII21, solveIII21, shList(shInt), shList(shInt)),
		level3("III-22", "Median", false, OutInt, "https://leetcode.com/problems/median-of-two-sorted-arrays/", genIII22, solveIII22, shList(shInt), shInt),
		level3("III-23", "Graph Components", false, OutInt, "https://leetcode.com/problems/number-of-connected-components-in-an-undirected-graph/", genIII23, solveIII23, shList(shTuple(shInt, shInt)), shInt),
		level3("III-24", "BFS Distance", false, OutDict, "https://leetcode.com/problems/find-if-path-exists-in-graph/", genIII24, solveIII24, shList(shTuple(shInt, shInt)), shStrDict(shInt)),
		level3("III-25", "K-Means Iteration", false, OutMatrix, "https://leetcode.com/problems/k-closest-points-to-origin/", genIII25, solveIII25, shList(shTuple(shFloat, shFloat)), shList(shTuple(shFloat, shFloat))),
		level3("III-26", "Global Distinct", false, OutInt, "https://leetcode.com/problems/contains-duplicate/", genIII26, solveIII26, shList(shInt), shInt),
		level3("III-27", "Collaborative Filtering", false, OutMatrix, "https://leetcode.com/problems/maximum-dot-product-of-two-subsequences/", genIII27, solveIII27,
			shRecord("users", shIntDict(shList(shFloat)), "items", shIntDict(shList(shFloat))), shList(shTuple(shInt, shInt, shFloat))),
		level3("III-28", "PageRank Step", false, OutDict, "https://leetcode.com/problems/find-the-town-judge/", genIII28, solveIII28, shList(shTuple(shInt, shInt)), shStrDict(shFloat)),
		level3("III-29", "Load Balance", false, OutDict, "https://leetcode.com/problems/find-minimum-time-to-finish-all-jobs/", genIII29, solveIII29,
			shList(shRecord("id", shInt, "duration", shInt)), shRecord("variance", shFloat, "max_load", shInt, "min_load", shInt)),
		level3("III-30", "Matrix Multiply", false, OutMatrix, "https://leetcode.com/problems/sparse-matrix-multiplication/", genIII30, solveIII30,
			shRecord("type", shStr, "A_rows", shList(shList(shInt)), "A_row_indices", shList(shInt), "B_matrix", shList(shList(shInt))), shList(shList(shInt))),
	}
	for _, t := range registry {
		t.desc = descriptions[t.ID]
		if t.desc == nil {
			panic("task: no description for " + t.ID)
		}
		if h, ok := hints[t.ID]; ok {
			t.Topology, t.MessageCount, t.HintText = h.topology, h.messages, h.prompt
		} else {
			panic("task: no hint for " + t.ID)
		}
	}
	byID("III-30").maxN = 200
}

func byID(id string) *Task {
	t, err := Lookup(id)
	if err != nil {
		panic(err)
	}
	return t
}

type genFunc = func(r rng, n int) ([]any, any)
type solveFunc = func(n int, params any, shards []any) ([]any, error)

func level1(id, name, out, url string, g genFunc, s solveFunc, sh, gold shape) *Task {
	return &Task{ID: id, Name: name, Level: 1, Paradigm: "Paradigm I", Output: out, DepKind: DepAll,
		Complexity: ComplexityI, LeetCodeURL: url, gen: g, solve: s, shard: sh, gold: gold}
}

func level2(id, name string, seg bool, dep, out, url string, g genFunc, s solveFunc, sh, gold shape) *Task {
	return &Task{ID: id, Name: name, Level: 2, Paradigm: "Paradigm II", Segmented: seg, Output: out, DepKind: dep,
		Complexity: ComplexityII, LeetCodeURL: url, gen: g, solve: s, shard: sh, gold: gold}
}

func level3(id, name string, seg bool, out, url string, g genFunc, s solveFunc, sh, gold shape) *Task {
	return &Task{ID: id, Name: name, Level: 3, Paradigm: "Paradigm III", Segmented: seg, Output: out, DepKind: DepAll,
		Complexity: ComplexityIII, LeetCodeURL: url, gen: g, solve: s, shard: sh, gold: gold}
}
