package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/suite"
)

// patchResult rewrites a run's result.json through f.
func patchResult(t *testing.T, dir string, f func(res map[string]any, agents []map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, play.FileResult)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var agents []map[string]any
	for _, a := range res["agents"].([]any) {
		agents = append(agents, a.(map[string]any))
	}
	f(res, agents)
	if b, err = json.Marshal(res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSuiteAsPublished builds a suite with merged baselines of two sizes
// (scripted reference teams on two tasks), gives its single-agent
// baselines a computation_error and one team run two labelled, failed
// agents, and a model turn log to another run, then checks the analyses
// the paper made: co-occurrence over multi-agent runs only, one baseline
// row per size, rounds of successful against failed runs overall, the
// per-task table and context-use percentiles.
func TestSuiteAsPublished(t *testing.T) {
	s, err := suite.Resolve(suite.Options{Tasks: "I-01,II-13", Agents: "2,4", Protocols: "p2p", Agent: "reference"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := suite.Run(context.Background(), s, dir, suite.RunOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	runDir := func(id string) string { return filepath.Join(dir, suite.RunsDir, id) }
	entries, err := os.ReadDir(filepath.Join(dir, suite.RunsDir))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Name())
		if strings.Contains(e.Name(), "merged-n") {
			patchResult(t, runDir(e.Name()), func(_ map[string]any, ag []map[string]any) {
				ag[0]["labels"] = []string{"computation_error"}
			})
		}
	}
	if len(ids) != 8 {
		t.Fatalf("runs %v, want 8 (2 tasks × N = 2, 4 and their merged baselines)", ids)
	}
	failed := "II-13__n4__p2p__reference__seeded-s1"
	patchResult(t, runDir(failed), func(res map[string]any, ag []map[string]any) {
		res["success"], res["S"], res["rounds"] = false, 0.5, 13
		for _, a := range ag[:2] {
			a["correct"], a["labels"] = false, []string{"premature_submission", "consensus_failure"}
		}
	})
	turns := `{"round":1,"agent":0,"usage":{"prompt_tokens":400}}
{"round":1,"agent":1,"usage":{"prompt_tokens":100}}
{"round":2,"agent":0,"outcome":"model_error","usage":{"prompt_tokens":0}}
{"round":2,"agent":1,"usage":{"prompt_tokens":300,"completion_tokens":9}}
{"round":3,"agent":1,"usage":{"prompt_tokens":200}}
`
	if err := os.WriteFile(filepath.Join(runDir("I-01__n2__p2p__reference__seeded-s1"), FileTurnsLog), []byte(turns), 0o644); err != nil {
		t.Fatal(err)
	}

	a, err := Analyze(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Merged baselines: one row per size, none pooled into a plain N = 1.
	var baselines []int
	for _, r := range a.Topology {
		if r.N == 1 {
			if r.MergedFrom == 0 {
				t.Errorf("a pooled N = 1 row: %+v", r)
			}
			baselines = append(baselines, r.MergedFrom)
		}
	}
	if !slices.Equal(baselines, []int{2, 4, 2, 4}) {
		t.Errorf("baseline rows of sizes %v, want [2 4 2 4] (levels I and II)", baselines)
	}
	// Co-occurrence: the baselines' computation_error is not counted.
	if got := a.LabelOrder["labels"]; !slices.Equal(got, []string{"premature_submission", "consensus_failure"}) {
		t.Errorf("labels %v", got)
	}
	for _, l := range a.Labels {
		if l.Level == AllLevels && (l.GroupRuns != 4 || l.GroupAgents != 12 || l.Agents != 2 || l.Runs != 1) {
			t.Errorf("overall label row %+v: want 2 agents in 1 of 4 runs (12 agents)", l)
		}
	}
	// Rounds overall: three successful runs against the failed one.
	var okRounds int
	for _, r := range a.Runs {
		if r.N > 1 && r.Success {
			okRounds += r.Rounds
		}
	}
	want := RoundsRow{Agent: "reference", Runs: 4, Successes: 3, RoundsSuccess: float64(okRounds) / 3, RoundsFailed: 13,
		HasRoundsSuccess: true, HasRoundsFailed: true}
	if len(a.Rounds) != 1 || a.Rounds[0] != want {
		t.Errorf("rounds %+v, want %+v", a.Rounds, want)
	}
	// Per task, per protocol and over all protocols, team runs only.
	var tasks []string
	for _, r := range a.Tasks {
		tasks = append(tasks, r.Task+"/"+r.Protocol+"/"+f4(r.Success)+"/"+f4(r.S)+"/"+itoa(r.Runs))
	}
	if w := []string{"I-01/p2p/1.0000/1.0000/2", "I-01/all/1.0000/1.0000/2", "II-13/p2p/0.5000/0.7500/2",
		"II-13/all/0.5000/0.7500/2"}; !slices.Equal(tasks, w) {
		t.Errorf("tasks %v, want %v", tasks, w)
	}
	// Context: four counted calls (the model error has no count).
	wantCtx := ContextRow{Agent: "reference", Runs: 1, Calls: 4, Mean: 250, P: []int64{200, 400, 400, 400}, Max: 400, RunMaxMean: 400}
	if len(a.Context) != 1 || a.Context[0].Calls != wantCtx.Calls || a.Context[0].Mean != wantCtx.Mean ||
		!slices.Equal(a.Context[0].P, wantCtx.P) || a.Context[0].Max != 400 || a.Context[0].RunMaxMean != 400 {
		t.Errorf("context %+v, want %+v", a.Context, wantCtx)
	}

	var md bytes.Buffer
	a.WriteMarkdown(&md)
	for _, s := range []string{"## Rounds of successful and failed runs, overall", "| 1 (of 4) |", "## Results by task",
		"| reference | II    | II-13 | 0.5000 / 0.7500 |", "## Context use", "Multi-agent runs only"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("analysis.md lacks %q:\n%s", s, md.String())
		}
	}
	var sum bytes.Buffer
	a.WriteSummary(&sum)
	if line := "mean rounds of reference's multi-agent runs: successful " + f4(want.RoundsSuccess) + ", failed 13.0000\n"; !strings.Contains(sum.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, sum.String())
	}
	out := t.TempDir()
	if err := a.Write(out); err != nil {
		t.Fatal(err)
	}
	for f, line := range map[string]string{
		FileRounds:  "reference,4,3,",
		FileTasks:   "reference,II,II-13,p2p,2,0.5000,0.7500",
		FileContext: "reference,1,4,250.0000,200,400,400,400,400,400.0000",
	} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), line) {
			t.Errorf("%s lacks %q (%v):\n%s", f, line, err, b)
		}
	}
}

// TestHubReachAtSubmit: the hub's reach counts the peers it was linked to
// by the end of the round it submitted in (the paper's G.1 "28 of 100"),
// not those who wrote to it afterwards.
func TestHubReachAtSubmit(t *testing.T) {
	rounds := [][]call{
		{send(1, 0)},
		{{0, proto.ToolSubmit, `{"answer":1}`}, send(2, 0)},
		{send(3, 0), send(4, 0)},
	}
	rep := analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "late"), proto.P2P, rounds, plainAgents(5)))
	top := rep.Runs[0].Topology
	if top.Hub != 0 || top.HubReached != 4 || top.HubSubmit != 2 || top.HubReachedAtSubmit != 2 {
		t.Errorf("hub %d reached %d, submitted in round %d having reached %d; want 0, 4, 2, 2",
			top.Hub, top.HubReached, top.HubSubmit, top.HubReachedAtSubmit)
	}
	if row := rep.Runs[0].row(); row[len(row)-2] != "2" || row[len(row)-1] != "2" {
		t.Errorf("runs.csv hub_submit_round, hub_reached_at_submit = %q, %q", row[len(row)-2], row[len(row)-1])
	}
	// A hub that never submits: its whole reach.
	rep = analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "never"), proto.P2P, rounds[2:], plainAgents(5)))
	if top := rep.Runs[0].Topology; top.HubSubmit != 0 || top.HubReachedAtSubmit != 2 {
		t.Errorf("no submission: %+v", top)
	}
}

// TestContextErrors: a turn log that is not JSON is an error naming it.
func TestContextErrors(t *testing.T) {
	dir := craft(t, filepath.Join(t.TempDir(), "r"), proto.P2P, [][]call{{send(1, 0)}}, plainAgents(2))
	for body, want := range map[string]string{
		"{\"usage\":{\"prompt_tokens\":1}}\n{": "record 2",
		`{"usage":{"prompt_tokens":-5}}`:       "prompt_tokens -5",
	} {
		if err := os.WriteFile(filepath.Join(dir, FileTurnsLog), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(dir, Options{}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), FileTurnsLog) {
			t.Errorf("%q: err = %v, want it to mention %q", body, err, want)
		}
	}
}
