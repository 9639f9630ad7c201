package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
)

// experiments are the example experiment files and the summary files a
// merge of their shards must reproduce byte for byte.
var experiments = []struct {
	file  string
	files []string
}{
	{"../../examples/experiments/des-small.yaml", []string{"suite_summary.csv", "suite_aggregate.csv", "suite_aggregate.md"}},
	{"../../examples/experiments/silo-small.yaml", []string{"summary.csv", "aggregate.csv", "aggregate.md"}},
}

// TestSweepShardsCollectLikeOneRun: for both benchmarks, the example
// experiment run in 2 and in 3 shards and collected gives summary files
// byte-identical to a single-machine run's.
func TestSweepShardsCollectLikeOneRun(t *testing.T) {
	for _, x := range experiments {
		t.Run(filepath.Base(x.file), func(t *testing.T) {
			tmp := t.TempDir()
			whole := filepath.Join(tmp, "whole")
			if out, err := run(t, "sweep", "run", x.file, "--out", whole); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// The examples run no model: status counts cases and shows no
			// money table.
			if st, err := run(t, "sweep", "status", whole); err != nil || !strings.Contains(st, "0 not started") ||
				!strings.Contains(st, "no model calls") || strings.Contains(st, "USD") {
				t.Errorf("sweep status of a finished run without models: %v\n%s", err, st)
			}
			for _, n := range []int{2, 3} {
				var shards []string
				// Collect takes the shards in any order.
				for i := n - 1; i >= 0; i-- {
					dir := filepath.Join(tmp, fmt.Sprintf("shard-%d-of-%d", i, n))
					if out, err := run(t, "sweep", "run", x.file, "--out", dir, "--shard", fmt.Sprintf("%d/%d", i, n), "--workers", "1"); err != nil {
						t.Fatalf("shard %d/%d: %v\n%s", i, n, err, out)
					}
					shards = append(shards, dir)
				}
				merged := filepath.Join(tmp, fmt.Sprintf("merged-%d", n))
				out, err := run(t, append([]string{"sweep", "collect", "--out", merged}, shards...)...)
				if err != nil || !strings.Contains(out, fmt.Sprintf("from %d shards", n)) {
					t.Fatalf("collect %d shards: %v\n%s", n, err, out)
				}
				for _, f := range x.files {
					a, b := mustRead(t, filepath.Join(whole, f)), mustRead(t, filepath.Join(merged, f))
					if !bytes.Equal(a, b) {
						t.Errorf("%d shards: %s differs from the single-machine run's:\n%s\n---\n%s", n, f, a, b)
					}
				}
				if n == 3 {
					// A missing shard, a shard given twice, and a shard of
					// another experiment are refused.
					if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "x1"), shards[0], shards[1]); err == nil || !strings.Contains(err.Error(), "missing") {
						t.Errorf("missing shard: %v", err)
					}
					if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "x2"), shards[0], shards[0], shards[1]); err == nil || !strings.Contains(err.Error(), "both shard") {
						t.Errorf("shard twice: %v", err)
					}
					if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "x3"), shards[0], whole); err == nil {
						t.Error("shards cut differently were collected")
					}
				}
			}
			// A rerun of the whole experiment into its directory keeps every case.
			if out, err := run(t, "sweep", "run", x.file, "--out", whole); err != nil || !strings.Contains(out, " 0 run now") {
				t.Errorf("rerun: %v\n%s", err, out)
			}
		})
	}
}

// TestSweepRefusesOtherExperiments: a shard directory holds one shard of
// one experiment; collect refuses shards of two experiments.
func TestSweepRefusesOtherExperiments(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a.yaml")
	write := func(seeds string) {
		t.Helper()
		exp := "benchmark: des\ndes:\n  instances: A3C9-1\n  paradigms: centralized\n  seeds: [" + seeds + "]\n"
		if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1, 2")
	s0, s1 := filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1")
	if out, err := run(t, "sweep", "run", file, "--out", s0, "--shard", "0/2"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := run(t, "sweep", "run", file, "--out", s0, "--shard", "1/2"); err == nil || !strings.Contains(err.Error(), "holds shard 0/2 of this experiment") {
		t.Errorf("another shard in the same directory: %v", err)
	}
	write("1, 3")
	if _, err := run(t, "sweep", "run", file, "--out", s0, "--shard", "0/2"); err == nil || !strings.Contains(err.Error(), "another experiment") {
		t.Errorf("another experiment in the same directory: %v", err)
	}
	if out, err := run(t, "sweep", "run", file, "--out", s1, "--shard", "1/2"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "m"), s0, s1); err == nil || !strings.Contains(err.Error(), "different experiments") {
		t.Errorf("collect of two experiments: %v", err)
	}
	// A shard with a failed case is refused until its rerun retries it.
	s0b := filepath.Join(tmp, "s0b")
	if out, err := run(t, "sweep", "run", file, "--out", s0b, "--shard", "0/2"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(s0b, "failed", "A3C9-1__centralized__rule__s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "m2"), s0b, s1); err == nil || !strings.Contains(err.Error(), "has 1 failed cases (A3C9-1__centralized__rule__s1): rerun its sweep run") {
		t.Errorf("collect of a shard with a failed case: %v", err)
	}
	// A shard whose case directory was lost names the shard to rerun.
	if err := os.RemoveAll(filepath.Join(s0b, "failed")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s0b, "cases", "A3C9-1__centralized__rule__s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "m3"), s0b, s1); err == nil || !strings.Contains(err.Error(), "belongs to shard 0/2") {
		t.Errorf("collect of a shard missing a case: %v", err)
	}
	if out, err := run(t, "sweep", "run", file, "--out", s0b, "--shard", "0/2"); err != nil || !strings.Contains(out, "1 run now") {
		t.Fatalf("rerun of the shard: %v\n%s", err, out)
	}
	if out, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "m4"), s0b, s1); err != nil {
		t.Errorf("collect after the rerun: %v\n%s", err, out)
	}
	if _, err := run(t, "sweep", "run", file, "--out", filepath.Join(tmp, "s9"), "--shard", "9/10"); err == nil || !strings.Contains(err.Error(), "fewer than 10 shards") {
		t.Errorf("more shards than cases: %v", err)
	}
}

// TestSweepPlan prints the cases and, with a model-backed controller, an
// estimate of the model calls, without calling any model.
func TestSweepPlan(t *testing.T) {
	out, err := run(t, "sweep", "plan", experiments[0].file, "--show", "2")
	if err != nil || !strings.Contains(out, "cases: 16\n") || !strings.Contains(out, "  A3C9-1__centralized__rule__s1\n  A3C9-1__centralized__rule__s2\n") ||
		!strings.Contains(out, "model calls: none") {
		t.Errorf("%v\n%s", err, out)
	}
	out, err = run(t, "sweep", "plan", experiments[1].file, "--shard", "1/3")
	if err != nil || !strings.Contains(out, "cases: 8, of which shard 1/3 runs 3") {
		t.Errorf("%v\n%s", err, out)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "llm.yaml")
	exp := "benchmark: des\ndes:\n  instances: A3C9-1\n  paradigms: centralized\n  controllers: [rule, llm]\n  seeds: 1\nllm:\n  model: m\n  base_url: http://127.0.0.1:1/v1\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "sweep", "plan", file)
	if err != nil || !strings.Contains(out, "model calls: 1 cases with a model-backed controller; estimate") {
		t.Errorf("%v\n%s", err, out)
	}
	silo := "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: 2\n  protocols: p2p\n  agent_kinds: llm\n  baseline: none\n  max_rounds: 7\nllm:\n  model: m\n  base_url: http://127.0.0.1:1/v1\n"
	if err := os.WriteFile(file, []byte(silo), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "sweep", "plan", file)
	if err != nil || !strings.Contains(out, "≤14 calls") || !strings.Contains(out, "an upper bound on calls") {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestSweepBadInput: errors name the file, the field and what to do.
func TestSweepBadInput(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct{ exp, want string }{
		{"benchmark: des\ndes:\n  instances: A3C9-1\n  seed: 1\n", `:4: field "des.seed": unknown field in des`},
		{"benchmark: des\ndes:\n  instances: A3C9-1\n  seeds: x-y\n", `:4: field "des.seeds"`},
		{"benchmark: des\ndes:\n  instances: A3C9-1\n  controllers: [llm]\n", "give its models"},
		{"benchmark: silo\nsilo:\n  agents: 2\n  protocols: smoke\n", `:4: field "silo.protocols": unknown protocol "smoke"`},
		{"benchmark: silo\nsilo:\n  agents: 2\n  max_rounds: many\n", `:4: field "silo.max_rounds"`},
		{"benchmark: des\nsilo:\n  agents: 2\n", `field "silo": a des experiment takes a des section`},
		{"benchmark: des\ndes:\n  instances: A3C9-1\n  group_by: [colour]\n", `e.yaml:4: field "des.group_by"`},
	} {
		file := filepath.Join(tmp, "e.yaml")
		if err := os.WriteFile(file, []byte(c.exp), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t, "sweep", "plan", file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.exp, err, c.want)
		}
	}
	for _, args := range [][]string{
		{"sweep", "run", experiments[0].file},
		{"sweep", "run", experiments[0].file, "--out", tmp + "/o", "--shard", "3/3"},
		{"sweep", "collect", tmp, "--out", tmp + "/o"},
		{"sweep", "plan", tmp},
	} {
		if _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestSweepWithStubModel: a des experiment with the LLM controller against
// the stub model, run in 2 shards (sharing the response cache) and
// collected, gives the single run's summaries; sweep plan's estimate of
// the model calls is the calls made, since the stub answers as the rule
// controller does.
func TestSweepWithStubModel(t *testing.T) {
	srv := desStub(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "llm.yaml")
	exp := "benchmark: des\ndes:\n  instances: A3C9-1\n  paradigms: [centralized, holonic_hybrid]\n  controllers: [llm, rule]\n  seeds: [11, 12]\n" +
		"llm:\n  model: stub-m\n  base_url: " + srv.URL + "/v1\n  framework: relay\n  cache: cache.db\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := run(t, "sweep", "plan", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, plan)
	}
	whole := filepath.Join(tmp, "whole")
	if out, err := run(t, "sweep", "run", file, "--out", whole); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	_, merged := runShardsAndCollect(t, file, tmp, 2)
	for _, f := range experiments[0].files {
		if a, b := mustRead(t, filepath.Join(whole, f)), mustRead(t, filepath.Join(merged, f)); !bytes.Equal(a, b) {
			t.Errorf("%s differs:\n%s\n---\n%s", f, a, b)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "cache.db")); err != nil {
		t.Errorf("the cache is not next to the experiment file: %v", err)
	}
	calls := 0
	for _, r := range summaryRows(t, whole) {
		n, err := strconv.Atoi(r[slices.Index(harness.SummaryHeader(), "llm_calls")])
		if err != nil {
			t.Fatal(err)
		}
		calls += n
	}
	want := regexp.MustCompile(fmt.Sprintf(`(?m)^  total +4 +%d +`, calls))
	if calls == 0 || !strings.Contains(plan, "model calls: 4 cases with a model-backed controller") || !want.MatchString(plan) {
		t.Errorf("plan does not estimate %d calls:\n%s", calls, plan)
	}
}
