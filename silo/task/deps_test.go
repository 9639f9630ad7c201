package task

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestDepKinds(t *testing.T) {
	want := map[string]string{"II-11": DepPrefix, "II-14": DepNeighbours, "II-20": DepPrefix}
	for _, task := range All() {
		k := want[task.ID]
		if k == "" {
			k = DepAll
		}
		if task.DepKind != k {
			t.Errorf("%s: dependency kind %s, want %s", task.ID, task.DepKind, k)
		}
		for _, n := range []int{1, 2, 7} {
			deps := task.Deps(n)
			if len(deps) != n {
				t.Fatalf("%s n=%d: %d dependency sets", task.ID, n, len(deps))
			}
			for i, d := range deps {
				if !slices.Contains(d, i) {
					t.Errorf("%s n=%d: agent %d does not depend on its own shard", task.ID, n, i)
				}
				if k == DepAll && len(d) != n {
					t.Errorf("%s n=%d: agent %d depends on %v, want all shards", task.ID, n, i, d)
				}
			}
		}
	}
	if got := byID("II-11").Deps(4); fmt.Sprint(got) != "[[0] [0 1] [0 1 2] [0 1 2 3]]" {
		t.Errorf("II-11 prefix deps %v", got)
	}
	if got := byID("II-14").Deps(4); fmt.Sprint(got) != "[[0 1] [0 1 2] [1 2 3] [2 3]]" {
		t.Errorf("II-14 neighbour deps %v", got)
	}
}

// perturb returns a shard of the same shape as raw with fresh random content.
func perturb(t *testing.T, task *Task, raw json.RawMessage, r *rand.Rand) json.RawMessage {
	t.Helper()
	switch task.ID {
	case "II-11", "II-14":
		var xs []int
		if err := json.Unmarshal(raw, &xs); err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			if task.ID == "II-11" {
				xs[i] = 1 + r.IntN(50)
			} else {
				xs[i] = r.IntN(2)
			}
		}
		b, _ := json.Marshal(xs)
		return b
	case "II-20":
		var xs []string
		if err := json.Unmarshal(raw, &xs); err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			xs[i] = fmt.Sprintf("Block_%d_%s", r.IntN(1000), strings.Repeat("x", r.IntN(5)))
		}
		b, _ := json.Marshal(xs)
		return b
	}
	t.Fatalf("no perturbation for %s", task.ID)
	return nil
}

// TestDepsByPerturbation changes shards outside an agent's dependency set
// and checks that the agent's answer does not move; inside the set (for
// prefix tasks) a change of the agent's own prefix must move it.
func TestDepsByPerturbation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, id := range []string{"II-11", "II-14", "II-20"} {
		task := byID(id)
		neighbourMoved := false
		for _, n := range []int{2, 3, 5, 10} {
			for seed := uint64(0); seed < 4; seed++ {
				in, err := Seeded(id, n, seed)
				if err != nil {
					t.Fatal(err)
				}
				base, err := in.Solve()
				if err != nil {
					t.Fatal(err)
				}
				for j := 0; j < n; j++ {
					shards := slices.Clone(in.Shards)
					shards[j] = perturb(t, task, shards[j], r)
					got, err := Solve(task, shards, nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := 0; i < n; i++ {
						inside := slices.Contains(in.Deps[i], j)
						same := string(got[i]) == string(base[i])
						if !inside && !same {
							t.Errorf("%s n=%d seed=%d: agent %d's answer changed with shard %d outside its dependency set %v", id, n, seed, i, j, in.Deps[i])
						}
						if inside && !same && j != i {
							neighbourMoved = true
						}
					}
				}
				if task.DepKind == DepPrefix {
					// +1 on the first value of shard j (II-11), or a longer
					// first block (II-20), shifts every later prefix.
					for j := 0; j < n; j++ {
						shards := slices.Clone(in.Shards)
						if id == "II-11" {
							var xs []int
							json.Unmarshal(shards[j], &xs)
							xs[0]++
							shards[j], _ = json.Marshal(xs)
						} else {
							var xs []string
							json.Unmarshal(shards[j], &xs)
							xs[0] += "!"
							shards[j], _ = json.Marshal(xs)
						}
						got, _ := Solve(task, shards, nil)
						for i := j; i < n; i++ {
							if id == "II-11" && string(got[i]) == string(base[i]) {
								t.Errorf("%s n=%d: agent %d's answer ignores shard %d of its prefix", id, n, i, j)
							}
						}
					}
				}
			}
		}
		if !neighbourMoved {
			t.Errorf("%s: no change of another shard in a dependency set ever moved an answer (sets too wide?)", id)
		}
	}
}

// TestSolveMatchesExpected: Solve over an instance's shards reproduces its
// golds (Verify), for every official instance and seeded ones.
func TestSolveMatchesExpected(t *testing.T) {
	for _, task := range All() {
		for _, n := range officialCounts {
			in, err := Official(task.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(); err != nil {
				t.Error(err)
			}
		}
		in, err := Seeded(task.ID, 1, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(); err != nil {
			t.Error(err)
		}
	}
}

func TestSolveErrors(t *testing.T) {
	cases := []struct {
		id     string
		shards []string
		params string
		want   string
	}{
		{"I-01", nil, "", "at least one shard"},
		{"I-01", []string{`[1,"x"]`}, "", `field "shards[0][1]": want int, got string`},
		{"I-01", []string{`[1,` + strings.Repeat("9", 5000) + `]`}, "", `field "shards[0][1]": want int, got an int of 5000 digits, beyond the 64-bit range`},
		{"I-01", []string{`[1,`}, "", "invalid JSON"},
		{"I-01", []string{`[]`}, "", "no data"},
		{"II-18", []string{`[{"id":0,"next":1},{"id":1,"next":0}]`}, "", "no head"},
		{"II-18", []string{`[{"id":0,"next":5}]`}, "", "not a node"},
		{"III-23", []string{`[[0,99]]`}, "", "outside nodes"},
		{"III-25", []string{`[[1.0,2.0]]`}, "", "initial centroids"},
		{"III-25", []string{`[[1.0,2.0]]`}, `[[1.0,2.0]]`, "3 initial centroids"},
		{"III-27", []string{`{"users":{"a":[1.0]},"items":{}}`}, "", "not an integer id"},
		{"III-30", []string{`{"type":"rows_and_full_B","A_rows":[[1]],"A_row_indices":[3],"B_matrix":[[1]]}`}, "", "bad A row"},
	}
	for _, c := range cases {
		var raws []json.RawMessage
		for _, s := range c.shards {
			raws = append(raws, json.RawMessage(s))
		}
		var p json.RawMessage
		if c.params != "" {
			p = json.RawMessage(c.params)
		}
		_, err := Solve(byID(c.id), raws, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want it to mention %q", c.id, c.shards, err, c.want)
		}
	}
	if _, err := Solve(nil, nil, nil); err == nil {
		t.Error("Solve(nil task) succeeded")
	}
}
