package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// TestMergedBaselineSuite: the default baseline runs one agent on the
// merged data of every N = k instance, right before the k-agent runs; the
// aggregates compare each N with its own merged row and say so.
func TestMergedBaselineSuite(t *testing.T) {
	s, err := Resolve(Options{Tasks: "I-01,II-14,III-23,III-29,III-30", Agents: "2,5", Protocols: "p2p,sfs", Seeds: "1-2"})
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 * 4 * 2 * 2; len(s.Cases) != want { // tasks × (2 N + 2 merged) × protocols × seeds
		t.Fatalf("%d cases, want %d", len(s.Cases), want)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), s, dir, RunOptions{Workers: 2})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("%v %+v", err, rep.Failures)
	}
	for _, c := range rep.Cases {
		if c.Result.S != 1 || c.Result.MergedFrom != c.Case.MergedFrom {
			t.Errorf("%s: S %v, merged_from %d", c.Case.ID, c.Result.S, c.Result.MergedFrom)
		}
	}
	agg := readCSV(t, filepath.Join(dir, FileAggregate))
	ac := columns(agg[0])
	merged := 0
	for _, r := range agg[1:] {
		if r[ac["merged_from"]] != "" {
			merged++
			if r[ac["N"]] != "1" || r[ac["RCC"]] != "" || r[ac["rcc_baseline"]] != "" {
				t.Errorf("merged baseline row %v", r)
			}
			continue
		}
		if r[ac["RCC"]] != "0.0000" || r[ac["RCC_success"]] != "0.0000" || r[ac["rcc_baseline"]] != "merged" {
			t.Errorf("row %v: want RCC 0 against the merged baseline", r)
		}
	}
	if merged != 3*2*2 { // levels × k × protocols
		t.Errorf("%d merged baseline rows", merged)
	}
	b, _ := os.ReadFile(filepath.Join(dir, RunsDir, "III-29__n1__sfs__reference__seeded-s2-merged-n5", FileManifest))
	if !strings.Contains(string(b), `"merged_from": 5`) {
		t.Errorf("manifest %s", b)
	}
}

// TestRCCVariants: one wrong agent of five gives S = 0.8 and no success:
// RCC from mean S is 0.2, from the success rate 1.0 (real runs: a
// reference team with a disagreeing agent, against a perfect merged
// baseline).
func TestRCCVariants(t *testing.T) {
	src, err := task.Seeded("I-01", 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	base, err := task.Merged(src)
	if err != nil {
		t.Fatal(err)
	}
	run := func(in *task.Instance, team []round.Agent) *round.Result {
		res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.P2P}, team)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tk, _ := task.Lookup("I-01")
	cases := []CaseResult{
		{Case: Case{Task: tk, N: 1, MergedFrom: 5, Protocol: proto.P2P, Agent: "x"}, Result: run(base, round.NewReferenceTeam(1))},
		{Case: Case{Task: tk, N: 5, Protocol: proto.P2P, Agent: "x"}, Result: run(src, round.NewTeam(5, map[int]round.Agent{3: round.NewDisagreer()}))},
	}
	for _, baseline := range []string{BaselineMerged, BaselineSeeded} {
		aggs := Aggregates(cases, baseline)
		if len(aggs) != 2 || aggs[0].MergedFrom != 5 || aggs[1].N != 5 {
			t.Fatalf("aggregates %+v", aggs)
		}
		a := aggs[1]
		if baseline == BaselineSeeded { // no plain N = 1 row: no RCC
			if a.HasRCC || a.HasRCCSuccess || a.RCCBaseline != "" {
				t.Errorf("seeded: %+v", a)
			}
			continue
		}
		if a.S != 0.8 || !a.HasRCC || f4(a.RCC) != "0.2000" || !a.HasRCCSuccess || a.RCCSuccess != 1 || a.RCCBaseline != "merged" {
			t.Errorf("merged: S %v RCC %v RCC_success %v baseline %q", a.S, a.RCC, a.RCCSuccess, a.RCCBaseline)
		}
	}
}
