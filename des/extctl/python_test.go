//go:build unix

package extctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
)

// pythonRunner returns the shell command running a Python runner, or
// skips the test when python3 is missing (fails in CI, where CI is set).
func pythonRunner(t testing.TB, script string) string {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	return shellQuote(py) + " " + shellQuote(abs)
}

const greedyRunner = "../../examples/python/greedy_runner.py"

// artifacts is what one episode wrote.
type artifacts struct {
	trace, messages, decisions []byte
	metrics                    harness.Metrics
}

func play(t *testing.T, ctrl coord.Controller, mode coord.AuthorityMode, seed uint64) artifacts {
	t.Helper()
	var a artifacts
	var tr, msg, dec bytes.Buffer
	res := harness.Run(context.Background(), harness.Episode{Plant: plantOf(t, faultInstance), Seed: seed, Mode: mode, Controller: ctrl,
		Trace: &tr, Messages: &msg, Decisions: &dec})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	a.trace, a.messages, a.decisions, a.metrics = tr.Bytes(), msg.Bytes(), dec.Bytes(), res.Metrics
	return a
}

// choices lists the decisions of a decisions.jsonl as "step agent action".
func choices(t *testing.T, dec []byte, wantSource coord.Source) []string {
	t.Helper()
	var out []string
	for i, line := range bytes.Split(bytes.TrimSpace(dec), []byte("\n")) {
		var a audit
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if a.Source != wantSource {
			t.Fatalf("decision %d: source %s (%s), want %s", i, a.Source, a.Reason, wantSource)
		}
		out = append(out, fmt.Sprintf("%d %s %s %d", a.Step, a.AgentID, a.Kind, a.Action))
	}
	return out
}

// playRunner plays one A3C9-1 episode with the external runner command,
// ends it, and requires a clean runner: no failure, no protocol violation.
// It returns the artifacts and what the runner wrote on stderr.
func playRunner(t *testing.T, command string, mode coord.AuthorityMode, seed uint64) (artifacts, string) {
	t.Helper()
	var stderr testenv.Buffer
	c, err := extctl.Start(context.Background(), extctl.Config{Command: command, Stderr: &stderr,
		Episode: extctl.EpisodeOf(plantOf(t, faultInstance), mode, seed)})
	if err != nil {
		t.Fatal(err)
	}
	a := play(t, c, mode, seed)
	if err := c.End(a.metrics); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if vs := c.Violations(); len(vs) > 0 {
		t.Errorf("violations: %v", vs)
	}
	return a, stderr.String()
}

// The Python example and its Go twin make the same decisions and produce
// byte-identical traces, under every paradigm, on two seeds.
func TestPythonRunnerMatchesGoTwin(t *testing.T) {
	command := pythonRunner(t, greedyRunner)
	seeds := plantOf(t, faultInstance).Inst.Seeds.Test[:2]
	for _, mode := range coord.Builtins() {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/s%d", mode.ID, seed), func(t *testing.T) {
				t.Parallel()
				py, stderr := playRunner(t, command, mode, seed)
				twin, err := policy.New("greedy_py", seed)
				if err != nil {
					t.Fatal(err)
				}
				goRun := play(t, twin, mode, seed)
				a, b := choices(t, py.decisions, coord.SourceExternal), choices(t, goRun.decisions, coord.SourceBuiltin)
				if len(a) != len(b) {
					t.Fatalf("python %d decisions, go %d", len(a), len(b))
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("decision %d: python %q, go twin %q", i, a[i], b[i])
					}
				}
				if !bytes.Equal(py.trace, goRun.trace) {
					t.Error("trace.jsonl differs")
				}
				if !bytes.Equal(py.messages, goRun.messages) {
					t.Error("messages.jsonl differs")
				}
				if py.metrics.GMk != goRun.metrics.GMk || py.metrics.GFb != 0 || py.metrics.Status != goRun.metrics.Status {
					t.Errorf("metrics: python %+v\ngo %+v", py.metrics, goRun.metrics)
				}
				if !strings.Contains(stderr, "greedy_runner: episode over: status "+py.metrics.Status) {
					t.Errorf("the runner did not see episode_end:\n%s", stderr)
				}
			})
		}
	}
}

// The Python example passes the conformance checker without a warning,
// and the checked episodes cover every decision kind.
func TestPythonRunnerPassesChecker(t *testing.T) {
	command := pythonRunner(t, greedyRunner)
	dir := t.TempDir()
	var progress bytes.Buffer
	rep, err := extctl.Check(context.Background(), command, extctl.CheckOptions{Dir: dir, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	t.Logf("\n%s", text.String())
	if !rep.Clean() || rep.Warnings != 0 || len(rep.Episodes) != 5 {
		t.Fatalf("not clean:\n%s", text.String())
	}
	kinds, steps := map[string]int{}, 0
	for _, e := range rep.Episodes {
		steps += e.Steps
		if e.Fallbacks != 0 || e.Runner.Failure != "" || e.Decisions == 0 || e.RunError != "" {
			t.Errorf("%s: %+v", e.Name, e)
		}
		for k, n := range e.Kinds {
			kinds[k] += n
		}
		for _, f := range []string{extctl.StderrFile, extctl.SummaryFile, harness.FileTrace, harness.FileManifest} {
			if _, err := os.Stat(filepath.Join(e.Dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
	for _, k := range []string{coord.KindRelease, coord.KindSelectArea, coord.KindSelectCell, coord.KindBid, coord.KindAward, coord.KindCommit} {
		if kinds[k] == 0 {
			t.Errorf("no %s decision in the check (%v)", k, kinds)
		}
	}
	last := rep.Episodes[4]
	if last.Status == "done" || last.Horizon == 0 {
		t.Errorf("the short episode was not truncated: %s", last.Status)
	}
	if rep.Latency.N != steps || rep.Latency.P50 <= 0 || rep.Latency.Max < rep.Latency.P99 {
		t.Errorf("latency: %+v", rep.Latency)
	}
	if strings.Count(progress.String(), "\n") != 5 || !strings.Contains(text.String(), "OK: no violation in 5 episodes") {
		t.Errorf("progress:\n%s\nreport:\n%s", progress.String(), text.String())
	}
}

// The checker reports a faulty runner: the violations of each episode, the
// failure, the end of the runner's stderr, and slow answers.
func TestCheckerReportsFaults(t *testing.T) {
	eps := extctl.CheckEpisodes()
	if len(eps) != 5 {
		t.Fatalf("%d check episodes", len(eps))
	}
	rep, err := extctl.Check(context.Background(), helperCommand(t, "crash:30"), extctl.CheckOptions{Episodes: eps[:1]})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	out := text.String()
	for _, want := range []string{"FAILED: external runner failed at step 30: runner exited: exit status 2", "step 30 error exited",
		"| helper: crashing at step 30", "FAIL: 1 protocol errors"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if rep.Clean() {
		t.Error("a crashing runner is clean")
	}
	rep, err = extctl.Check(context.Background(), helperCommand(t, "slow:3"), extctl.CheckOptions{Episodes: eps[:1], Slow: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() || rep.Warnings != 1 || rep.Counts[extctl.VSlow] != 1 || rep.Latency.P50 < 3 {
		t.Errorf("slow runner: clean %v warnings %d counts %v latency %+v", rep.Clean(), rep.Warnings, rep.Counts, rep.Latency)
	}
	for _, spec := range []string{"illegal:5", "wrong:5", "garbage:5", "missing:5", "notint:5", "badexit", "linger", "nohello"} {
		rep, err := extctl.Check(context.Background(), helperCommand(t, spec), extctl.CheckOptions{Episodes: eps[:1], Grace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Clean() {
			t.Errorf("%s: clean", spec)
		}
	}
}

// Crafted payloads with ties, full cells and float sums that do not round
// trip (0.1 + 0.2 > 0.3): the Python runner answers as greedy_py does.
func TestPythonRunnerEdgeCases(t *testing.T) {
	command := pythonRunner(t, greedyRunner)
	cell := func(proc, transport float64, free int) coord.Option {
		return coord.Option{Action: coord.ActAssign, Cell: &coord.CellOption{Cell: "C", ProcTime: proc, TransportTime: transport, FreeSlots: free}}
	}
	area := func(proc, transport float64, free int) coord.Option {
		return coord.Option{Action: coord.ActAllocate, Area: &coord.AreaOption{Area: "A", MinProcTime: proc, TransportTime: transport, FreeSlots: free}}
	}
	job := func(due float64) coord.Option {
		return coord.Option{Action: coord.ActRelease, Job: &coord.JobOption{Due: due}}
	}
	bids := []coord.Option{{Action: coord.ActBid, Bid: "high"}, {Action: coord.ActBid, Bid: "medium"}, {Action: coord.ActBid, Bid: "low"}, {Action: coord.ActDecline}}
	views := map[string]struct {
		kind string
		opts []coord.Option
		free int // observation.cell.free_slots, for bids
		mask []int
	}{
		"a:tie":        {kind: coord.KindSelectCell, opts: []coord.Option{cell(10, 4, 1), cell(12, 2, 1), cell(14, 0, 1)}},
		"b:float":      {kind: coord.KindAward, opts: []coord.Option{cell(0.1, 0.2, 1), cell(0.3, 0, 1)}},
		"c:full":       {kind: coord.KindReroute, opts: []coord.Option{cell(1, 0, 0), cell(30, 5, 1), {Action: coord.ActEscalate}}},
		"d:allfull":    {kind: coord.KindSelectCell, opts: []coord.Option{cell(9, 0, 0), cell(5, 0, -1), {Action: coord.ActEscalate}}},
		"e:escalate":   {kind: coord.KindReroute, opts: []coord.Option{{Action: coord.ActEscalate}}},
		"f:area":       {kind: coord.KindSelectArea, opts: []coord.Option{area(5, 1, 0), area(9, 1, 2), area(8.99, 1.01, 3)}},
		"g:release":    {kind: coord.KindRelease, opts: []coord.Option{job(500), job(300.5), job(300.5), {Action: coord.ActDefer}}},
		"h:bid":        {kind: coord.KindBid, opts: bids, free: 2},
		"i:bidfull":    {kind: coord.KindBid, opts: bids, free: 0},
		"j:commit":     {kind: coord.KindCommit, opts: []coord.Option{{Action: coord.ActAccept}, {Action: coord.ActReject}}},
		"k:masked":     {kind: coord.KindSelectCell, opts: []coord.Option{cell(1, 0, 1), cell(9, 0, 1), cell(5, 0, 1)}, mask: []int{1, 2}},
		"l:newkind":    {kind: "negotiate", opts: []coord.Option{{Action: "x"}, {Action: "y"}}, mask: []int{1}},
		"m:releaseall": {kind: coord.KindRelease, opts: []coord.Option{{Action: coord.ActDefer}}},
	}
	d := &coord.Decision{Version: coord.PayloadVersion, ActiveAgents: map[string]*coord.View{}}
	for id, x := range views {
		v := &coord.View{AgentID: id, Role: "cell", Kind: x.kind, Context: coord.Context{Trigger: "test"}}
		v.Observation.Cell = &coord.CellObservation{FreeSlots: x.free}
		for i, o := range x.opts {
			o.Index = i
			v.Options = append(v.Options, o)
			v.ActionMask = append(v.ActionMask, x.mask == nil)
		}
		v.LegalActions = x.mask
		if x.mask == nil {
			for i := range x.opts {
				v.LegalActions = append(v.LegalActions, i)
			}
		}
		for _, i := range x.mask {
			v.ActionMask[i] = true
		}
		d.ActiveAgents[id] = v
	}
	c, err := extctl.Start(context.Background(), extctl.Config{Command: command, Episode: extctl.EpisodeOf(plantOf(t, faultInstance), coord.Centralized(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	py, _ := c.Act(context.Background(), d)
	want, _ := policy.GreedyPy{}.Act(context.Background(), d)
	for id := range views {
		if py[id] != want[id] {
			t.Errorf("%s: python %d, go twin %d (%s)", id, py[id], want[id], c.Notes()[id].Error)
		}
	}
	if want["b:float"] != 1 || want["c:full"] != 1 || want["d:allfull"] != 1 || want["k:masked"] != 2 || want["f:area"] != 2 && want["f:area"] != 1 {
		t.Errorf("the twin's choices: %v", want)
	}
}
