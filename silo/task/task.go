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
// All or Lookup. Each is written as one value in its level's file
// (level1.go, level2.go, level3.go); register fills in what the level
// decides (Level, Paradigm, Complexity) and the hint's three fields.
type Task struct {
	ID        string // "I-01"
	Name      string // "Global Max"
	Level     int    // 1, 2, 3 (also decides the P rule)
	Paradigm  string // "Paradigm I", "Paradigm II", "Paradigm III"
	Segmented bool   // agent i submits only its own segment of the answer
	Output    string // OutInt, OutFloat, ...

	// DepKind is the dependency structure (DepAll, DepPrefix,
	// DepNeighbours); Deps(n) gives the sets. A level file leaves it empty
	// for DepAll.
	DepKind string

	Complexity   string // metadata.theoretical_complexity
	LeetCodeURL  string // our choice of a related problem (see docs/silo-tasks.md)
	Topology     string // metadata.optimal_topology (free text)
	MessageCount string // metadata.optimal_message_count (free text in N)
	HintText     string // the topology suggestion shown in the prompt (removable)

	// Revision counts changes to the task's instances (shards or golds,
	// official or seeded) since the first release, 0 for a task never
	// changed. Suite manifests record it, so a resumed suite reruns the
	// runs of the old instances (II-18 is 1: docs/silo-tasks.md, "II-18
	// holders").
	Revision int

	hint  hint // Topology, MessageCount and HintText as the level file writes them
	desc  func(n int, params any, shards []any) describe
	gen   func(r rng, n int) (shards []any, params any)
	solve func(n int, params any, shards []any) ([]any, error)
	shard shape // shape of one input shard (validation, typing, repr)
	gold  shape // shape of one agent's gold answer (validation only)
	// params is the shape of the parameters only the description states
	// (III-25's initial centroids), nil for tasks without; paramsIn finds
	// them in a loaded file's description (nil if it cannot).
	params   shape
	paramsIn func(description string) any
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

// level is what the tasks of one level share.
type level struct {
	number     int
	paradigm   string
	complexity string
	tasks      []*Task // in the published stream order
}

var registry = register(levelI, levelII, levelIII)

// register lists the levels' tasks in order, completing each with what its
// level decides and its hint's fields.
func register(levels ...level) []*Task {
	var all []*Task
	for _, l := range levels {
		for _, t := range l.tasks {
			t.Level, t.Paradigm, t.Complexity = l.number, l.paradigm, l.complexity
			if t.DepKind == "" {
				t.DepKind = DepAll
			}
			t.Topology, t.MessageCount, t.HintText = t.hint.topology, t.hint.messages, t.hint.prompt
			all = append(all, t)
		}
	}
	return all
}
