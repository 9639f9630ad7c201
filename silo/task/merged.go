package task

// Merged baselines: one agent holding all the data of an N = k instance,
// the single-agent run that RCC compares the k-agent team with on the same
// data (docs/silo-tasks.md, "Merged baselines").

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// sharedFields are the record fields every shard holds in full (III-30:
// each agent gets the whole of B): a merged shard keeps one copy.
var sharedFields = []string{"type", "B_matrix"}

// Merged returns the merged baseline of in: a single-agent instance whose
// one shard holds the data of all of in's shards, in agent order (lists
// and strings concatenated, III-27's user and item maps united, III-30's
// rows of A gathered under one copy of B). Its gold is in's: the global
// answer for a global task, and for a segmented task the whole answer,
// i.e. the agents' segments concatenated (what Solve gives on the merged
// data). One exception makes the data, not the team, the problem: III-29
// schedules on k machines, so the merged text says k machines and the gold
// stays in's (a single agent scheduling on one machine would be another
// task). The text is in's description at in's data size, worded for one
// agent. in must have at least 2 agents; the result has MergedFrom = in.N,
// in's mode and seed.
func Merged(in *Instance) (*Instance, error) {
	if in == nil || in.Task == nil {
		return nil, errors.New("task: Merged: nil instance")
	}
	t, k := in.Task, in.N
	if k < 2 {
		return nil, fmt.Errorf("task: Merged: %s has %d agent(s); a merged baseline needs at least 2", t.ID, k)
	}
	typed := make([]any, k)
	for i := range typed {
		if typed[i] = in.typedShard(i); typed[i] == nil {
			return nil, fmt.Errorf("task: Merged: %s: shard %d cannot be read", t.ID, i)
		}
	}
	shard, err := mergeValues(typed)
	if err != nil {
		return nil, fmt.Errorf("task: Merged: %s: %w", t.ID, err)
	}
	gold, err := mergedGold(t, in.Expected)
	if err != nil {
		return nil, fmt.Errorf("task: Merged: %s: %w", t.ID, err)
	}
	out := &Instance{
		Task:       t,
		N:          1,
		Mode:       in.Mode,
		Seed:       in.Seed,
		MergedFrom: k,
		Template:   t.template(k, true, in.params, typed),
		Shards:     rawAll([]any{shard}),
		Expected:   []json.RawMessage{gold},
		Deps:       [][]int{{0}},
		Params:     slices.Clone(in.Params),
		Path:       in.Path,
		shards:     []any{shard},
		params:     in.params,
	}
	out.Doc = defaultDoc(t, 1)
	return out, nil
}

// mergedGold is the gold of the merged instance: the global answer, or the
// segments concatenated.
func mergedGold(t *Task, expected []json.RawMessage) (json.RawMessage, error) {
	if !t.Segmented {
		return expected[0], nil
	}
	all := &pyvalue.List{}
	for i, raw := range expected {
		v, err := pyvalue.ParseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("gold %d: %v", i, err)
		}
		l, ok := v.(*pyvalue.List)
		if !ok {
			return nil, fmt.Errorf("gold %d: want a list (segmented task), got %s", i, kindOf(v))
		}
		all.Items = append(all.Items, l.Items...)
	}
	return pyvalue.Canon(all), nil
}

// mergeValues merges the shards of one instance (all of one shape).
func mergeValues(vs []any) (any, error) {
	switch first := vs[0].(type) {
	case string:
		s := ""
		for _, v := range vs {
			x, ok := v.(string)
			if !ok {
				return nil, errors.New("shards of mixed types")
			}
			s += x
		}
		return s, nil
	case *pyvalue.List:
		out := &pyvalue.List{Tuple: first.Tuple}
		for _, v := range vs {
			x, ok := v.(*pyvalue.List)
			if !ok {
				return nil, errors.New("shards of mixed types")
			}
			out.Items = append(out.Items, x.Items...)
		}
		return out, nil
	case *pyvalue.Dict:
		return mergeDicts(vs)
	}
	return nil, fmt.Errorf("cannot merge shards of type %s", kindOf(vs[0]))
}

// mergeDicts merges record shards field by field (sharedFields once, other
// fields merged as values) and plain maps (III-27's users, items) by
// uniting their keys; a key held twice is an error.
func mergeDicts(vs []any) (any, error) {
	first := vs[0].(*pyvalue.Dict)
	out := &pyvalue.Dict{}
	for ki, key := range first.Keys {
		name, ok := key.(string)
		if !ok {
			return nil, fmt.Errorf("record field %v is not a string", key)
		}
		if slices.Contains(sharedFields, name) {
			out.Set(name, first.Vals[ki])
			continue
		}
		parts := make([]any, len(vs))
		for i, v := range vs {
			d, ok := v.(*pyvalue.Dict)
			if !ok {
				return nil, errors.New("shards of mixed types")
			}
			if parts[i], ok = d.Get(name); !ok {
				return nil, fmt.Errorf("shard %d lacks field %s", i, name)
			}
		}
		if _, isMap := parts[0].(*pyvalue.Dict); isMap {
			m, err := uniteMaps(parts)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			out.Set(name, m)
			continue
		}
		m, err := mergeValues(parts)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		out.Set(name, m)
	}
	return out, nil
}

func uniteMaps(parts []any) (*pyvalue.Dict, error) {
	out := &pyvalue.Dict{}
	seen := map[string]bool{}
	var keys eqKeys
	for _, p := range parts {
		d, ok := p.(*pyvalue.Dict)
		if !ok {
			return nil, errors.New("maps of mixed types")
		}
		for i, k := range d.Keys {
			key := keys.key(k)
			if seen[key] {
				return nil, fmt.Errorf("key %v held by two agents", k)
			}
			seen[key] = true
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, d.Vals[i])
		}
	}
	return out, nil
}

// SolveScaled is Solve for data drawn for a team of scale agents and held
// by len(shards) agents: a merged baseline's one shard has scale k. Some
// tasks take a problem size from the team size rather than from the data
// (III-23, III-24 and III-28 the node count, III-29 the machines, III-30
// the matrix dimension); those come from scale. With scale 0 or
// len(shards), and for segmented tasks (whose answers follow the shards),
// it is Solve.
func SolveScaled(t *Task, shards []json.RawMessage, params json.RawMessage, scale int) ([]json.RawMessage, error) {
	if t == nil || scale == 0 || scale == len(shards) || t.Segmented {
		return Solve(t, shards, params)
	}
	if scale < len(shards) || scale > t.MaxAgents() {
		return nil, fmt.Errorf("task: %s: data drawn for %d agents cannot be held by %d", t.ID, scale, len(shards))
	}
	golds, err := solveAt(t, shards, params, scale)
	if err != nil {
		return nil, err
	}
	return golds[:len(shards)], nil // the global answer, one copy per holder
}
