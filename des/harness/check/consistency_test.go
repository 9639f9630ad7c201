package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// testInstances are the reported instances plus a generated one.
func testInstances() []string {
	return append(factory.BuiltinNames(), "gen:A8C24")
}

var (
	plantMu    sync.Mutex
	plantCache = map[string]*factory.Plant{}
)

func plant(t testing.TB, name string) *factory.Plant {
	t.Helper()
	plantMu.Lock()
	defer plantMu.Unlock()
	if p, ok := plantCache[name]; ok {
		return p
	}
	in, err := factory.Resolve(name)
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	p := factory.Compile(in)
	plantCache[name] = p
	return p
}

func controller(t testing.TB, name string, seed uint64) coord.Controller {
	t.Helper()
	c, err := policy.New(name, seed)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runDir plays one centralized episode into dir.
func runDir(t testing.TB, inst, ctrl string, seed uint64, dir string) harness.Result {
	t.Helper()
	return runModeDir(t, inst, coord.Centralized(), ctrl, seed, dir)
}

// runModeDir plays one episode under paradigm mode into dir.
func runModeDir(t testing.TB, inst string, mode coord.AuthorityMode, ctrl string, seed uint64, dir string) harness.Result {
	t.Helper()
	res, err := harness.RunToDir(context.Background(), harness.Episode{Plant: plant(t, inst), Seed: seed, Mode: mode,
		Controller: controller(t, ctrl, seed)}, dir)
	if err != nil {
		t.Fatalf("%s %s seed %d: run: %v", inst, ctrl, seed, err)
	}
	return res
}

func problemsText(rep *Report, n int) string {
	var b strings.Builder
	for i, p := range rep.Problems {
		if i == n {
			fmt.Fprintf(&b, "\n  ... %d more", len(rep.Problems)-n)
			break
		}
		fmt.Fprintf(&b, "\n  %v", p)
	}
	return b.String()
}

// TestConsistency runs many episodes of every instance with every
// built-in controller, cycling through the built-in paradigms, and
// requires the checker to find nothing.
func TestConsistency(t *testing.T) {
	perController := 9 // 36 episodes per instance (4 controllers), every paradigm with every controller at least twice
	if testing.Short() {
		perController = 3
	}
	for _, inst := range testInstances() {
		t.Run(inst, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			statuses := map[string]int{}
			events := map[string]int{}
			for _, ctrl := range policy.Names() {
				for k := 0; k < perController; k++ {
					seed := uint64(1 + k)
					mode := coord.Builtins()[k%len(coord.Builtins())]
					dir := filepath.Join(base, fmt.Sprintf("%s_%s_s%d", mode.ID, ctrl, seed))
					res := runModeDir(t, inst, mode, ctrl, seed, dir)
					rep, err := Dir(dir)
					if err != nil {
						t.Fatalf("%s %s seed %d: %v", inst, ctrl, seed, err)
					}
					if !rep.OK() {
						t.Errorf("instance %s paradigm %s controller %s seed %d: %d problems:%s", inst, mode.ID, ctrl, seed, len(rep.Problems), problemsText(rep, 10))
						continue
					}
					if rep.Stats.Status != res.Metrics.Status || rep.Stats.Records == 0 {
						t.Errorf("%s %s seed %d: stats %+v", inst, ctrl, seed, rep.Stats)
					}
					statuses[res.Metrics.Status]++
					for ev, n := range rep.Stats.Events {
						events[ev] += n
					}
					os.RemoveAll(dir)
				}
			}
			t.Logf("%s: statuses %v", inst, statuses)
			// The episodes must exercise the interesting paths, or the
			// test proves little.
			for _, ev := range []string{"setup_start", "breakdown", "repair", "job_complete", "transport_complete"} {
				if events[ev] == 0 {
					t.Errorf("%s: no %s in %d episodes", inst, ev, 3*perController)
				}
			}
		})
	}
}

// TestDeterminism: the same episode twice gives byte-identical artifacts.
func TestDeterminism(t *testing.T) {
	for _, inst := range testInstances() {
		for _, ctrl := range policy.Names() {
			seed := uint64(7)
			a, b := t.TempDir(), t.TempDir()
			runDir(t, inst, ctrl, seed, a)
			runDir(t, inst, ctrl, seed, b)
			for _, f := range []string{fileTrace, fileMetrics, fileDecisions, fileMessages, fileManifest, fileInstance} {
				x, err := os.ReadFile(filepath.Join(a, f))
				if err != nil {
					t.Fatal(err)
				}
				y, err := os.ReadFile(filepath.Join(b, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(x, y) {
					t.Errorf("%s %s seed %d: %s differs between two identical runs", inst, ctrl, seed, f)
				}
			}
		}
	}
}

type exoRecord struct {
	T       float64 `json:"t"`
	Ev      string  `json:"ev"`
	Cell    string  `json:"cell"`
	Machine int     `json:"machine"`
}

// exogenous returns a trace's arrival lines (verbatim), its breakdown
// times per machine and its end time.
func exogenous(t *testing.T, dir string) (arrivals []string, arrivalT []float64, breakdowns map[string][]float64, end float64) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, fileTrace))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	breakdowns = map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r exoRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		switch r.Ev {
		case "arrival":
			arrivals = append(arrivals, sc.Text())
			arrivalT = append(arrivalT, r.T)
		case "breakdown":
			k := fmt.Sprintf("%s/%d", r.Cell, r.Machine)
			breakdowns[k] = append(breakdowns[k], r.T)
		case "episode_end":
			end = r.T
		}
	}
	return
}

// TestExogenousTrajectory: arrivals and each machine's breakdown times do
// not depend on the decisions (common random numbers): the rule under the
// centralized paradigm and the random controller under every paradigm see
// the same ones for the same seed, up to the shorter episode's end.
func TestExogenousTrajectory(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	if testing.Short() {
		seeds = seeds[:2]
	}
	compared := 0
	for _, inst := range testInstances() {
		for _, seed := range seeds {
			a, b := t.TempDir(), t.TempDir()
			runDir(t, inst, "rule", seed, a)
			runModeDir(t, inst, coord.Builtins()[int(seed)%len(coord.Builtins())], "random", seed, b)
			arrA, tA, bdA, endA := exogenous(t, a)
			arrB, tB, bdB, endB := exogenous(t, b)
			end := min(endA, endB)
			cut := func(ts []float64) int {
				n := 0
				for n < len(ts) && ts[n] <= end {
					n++
				}
				return n
			}
			na, nb := cut(tA), cut(tB)
			if na != nb {
				t.Errorf("%s seed %d: %d vs %d arrivals up to t=%v", inst, seed, na, nb, end)
			}
			for i := 0; i < na && i < nb; i++ {
				if arrA[i] != arrB[i] {
					t.Errorf("%s seed %d: arrival %d differs:\n  rule:   %s\n  random: %s", inst, seed, i, arrA[i], arrB[i])
					break
				}
			}
			keys := map[string]bool{}
			for k := range bdA {
				keys[k] = true
			}
			for k := range bdB {
				keys[k] = true
			}
			for k := range keys {
				x, y := bdA[k][:cut(bdA[k])], bdB[k][:cut(bdB[k])]
				if fmt.Sprint(x) != fmt.Sprint(y) {
					t.Errorf("%s seed %d machine %s: breakdowns up to t=%v differ:\n  rule:   %v\n  random: %v", inst, seed, k, end, x, y)
				}
				compared += len(x)
			}
		}
	}
	if compared == 0 {
		t.Error("no breakdown was compared")
	}
}

// flaky fails every third decision and answers an illegal index every
// third, so the interpreter substitutes audited fallbacks.
type flaky struct{ coord.Controller }

func (f flaky) Name() string { return "flaky" }

func (f flaky) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	switch d.Step % 3 {
	case 0:
		return nil, fmt.Errorf("flaky controller fails at step %d", d.Step)
	case 1:
		out := map[string]int{}
		for id := range d.ActiveAgents {
			out[id] = 99
		}
		return out, nil
	}
	return f.Controller.Act(ctx, d)
}

// TestTruncatedAndFallback covers the episode ends and decision sources
// the regular runs rarely reach: time limit, decision limit, no progress,
// and fallbacks.
func TestTruncatedAndFallback(t *testing.T) {
	statuses := map[string]int{}
	fallbacks := 0
	for _, inst := range testInstances() {
		for seed := uint64(1); seed <= 3; seed++ {
			variants := []struct {
				name string
				edit func(in *factory.Instance)
				ctrl coord.Controller
			}{
				{"short horizon", func(in *factory.Instance) { in.Horizon = 150 + 50*float64(seed) }, controller(t, "rule", seed)},
				{"decision limit", func(in *factory.Instance) { in.Limits.MaxDecisions = 30 * int(seed) }, controller(t, "greedy", seed)},
				{"no progress", func(in *factory.Instance) { in.Limits.NoProgressSteps = 1 }, controller(t, "random", seed)},
				{"fallbacks", func(in *factory.Instance) {}, flaky{controller(t, "rule", seed)}},
				{"dispatch rules", func(in *factory.Instance) {
					areas := append([]factory.AreaSpec(nil), in.Areas...)
					for a := range areas {
						areas[a].Cells = append([]factory.CellSpec(nil), areas[a].Cells...)
						for c := range areas[a].Cells {
							areas[a].Cells[c].Dispatch = []string{"family", "spt", "fifo"}[(a+c)%3]
						}
					}
					in.Areas = areas
				}, controller(t, "greedy", seed)},
			}
			for _, v := range variants {
				in := *plant(t, inst).Inst
				v.edit(&in)
				dir := t.TempDir()
				res, err := harness.RunToDir(context.Background(), harness.Episode{Plant: factory.Compile(&in), Seed: seed, Mode: coord.Centralized(),
					Controller: v.ctrl}, dir)
				if err != nil {
					t.Fatalf("%s %s seed %d: %v", inst, v.name, seed, err)
				}
				statuses[res.Metrics.Status]++
				fallbacks += res.Metrics.GFb
				rep, err := Dir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() {
					t.Errorf("instance %s (%s) seed %d: %d problems:%s", inst, v.name, seed, len(rep.Problems), problemsText(rep, 10))
				}
			}
		}
	}
	t.Logf("statuses %v, fallbacks %d", statuses, fallbacks)
	for _, s := range []string{"time_limit", "decision_limit", "no_progress"} {
		if statuses[s] == 0 {
			t.Errorf("no episode ended with %s", s)
		}
	}
	if fallbacks == 0 {
		t.Error("no fallback decision")
	}
}
