package rescore

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/scorediff/difftest"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/suite"
)

// runSuite runs the suite of opt into a new directory.
func runSuite(t *testing.T, opt suite.Options) string {
	t.Helper()
	s, err := suite.Resolve(opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "suite")
	rep, err := suite.Run(context.Background(), s, dir, suite.RunOptions{Workers: 2})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("%v %+v", err, rep.Failures)
	}
	return dir
}

// scripted is a small suite of scripted agents, with merged baselines.
func scripted() suite.Options {
	return suite.Options{Tasks: "I-01,II-11", Agents: "2,3", Protocols: "p2p", Agent: "reference,tree", Seeds: "1,2", MaxRounds: 2}
}

// mixed is a suite of two stub models (one answers right, one submits
// 0) and their mixed team: model usage, token cost and per-model files.
func mixed(t *testing.T) suite.Options {
	g := silogather.Model{Solve: silogather.PromptSolver}
	s := silogather.Model{Solve: silogather.PromptSolver, Wrong: func(int, json.RawMessage) json.RawMessage { return json.RawMessage("0") }}
	good, sloppy := stubmodel.NewServer(g.Handle), stubmodel.NewServer(s.Handle)
	t.Cleanup(good.Close)
	t.Cleanup(sloppy.Close)
	mk := func(name, model, url string) *play.LLMAgent {
		l, err := play.NewLLMAgent(play.LLMConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Name: name, Model: model, BaseURL: url + "/v1"}},
			Options: llm.Options{Timeout: 10 * time.Second}, MaxModelFailures: 1})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := mk("a", "stub-good", good.URL), mk("b", "stub-sloppy", sloppy.URL)
	return suite.Options{Tasks: "I-01", Agents: "4", Protocols: "sfs", Agent: "llm,team", Seeds: "1", MaxRounds: 12,
		LLMs: []*play.LLMAgent{a, b}, Teams: []*play.Team{{Shares: true, Members: []play.Member{{LLM: a, Count: 1}, {LLM: b, Count: 1}}}}}
}

// TestRescoreUnchangedIsIdentical: rescoring a suite (scripted agents;
// model agents and a mixed team) or one of its runs under the rules it
// was scored with changes no byte of it.
func TestRescoreUnchangedIsIdentical(t *testing.T) {
	for name, opt := range map[string]suite.Options{"scripted": scripted(), "mixed": mixed(t)} {
		t.Run(name, func(t *testing.T) {
			dir := runSuite(t, opt)
			before := difftest.Snapshot(t, dir)
			rep, err := Dir(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, suite.RunsDir))
			if len(rep.Changes) != 0 || len(rep.Written) != 0 || rep.Runs != len(ents) || rep.Was[0] != suite.ScorerVersion {
				t.Errorf("report: %+v", rep)
			}
			after := difftest.Snapshot(t, dir)
			delete(after, scorediff.ReportFile)
			for rel, b := range before {
				if after[rel] != b {
					t.Errorf("%s changed", rel)
				}
			}
			if len(after) != len(before) {
				t.Errorf("%d files, %d before", len(after), len(before))
			}
			run := filepath.Join(dir, suite.RunsDir, ents[len(ents)-1].Name())
			if rep, err := Dir(context.Background(), run, Options{DryRun: true}); err != nil || len(rep.Changes) != 0 || rep.Kind != "run" {
				t.Errorf("a run of the suite: %v %+v", err, rep)
			}
		})
	}
}

// breakBaseline gives agent 0 of the merged baseline run of task I-01,
// N = 3, seed 1 a wrong answer in its stored result.json (its manifest's
// hash updated): its recorded scores are now stale, as those of a run
// scored under other rules.
func breakBaseline(t *testing.T, dir string) string {
	t.Helper()
	id := "I-01__n1__p2p__reference__seeded-s1-merged-n3"
	run := filepath.Join(dir, suite.RunsDir, id)
	var res round.Result
	if err := atomicfs.ReadJSON(filepath.Join(run, play.FileResult), &res); err != nil {
		t.Fatal(err)
	}
	res.Agents[0].Answer = json.RawMessage(`"not the answer"`)
	b := atomicfs.MarshalLine(&res)
	os.WriteFile(filepath.Join(run, play.FileResult), b, 0o644)
	var man suite.Manifest
	if err := atomicfs.ReadJSON(filepath.Join(run, suite.FileManifest), &man); err != nil {
		t.Fatal(err)
	}
	man.ResultSHA256 = sha(b)
	os.WriteFile(filepath.Join(run, suite.FileManifest), atomicfs.MarshalLine(&man), 0o644)
	return id
}

// TestRescoreChangedRule: a stored run whose recorded scores are stale is
// rescored (its S and the aggregate rows it enters change); then under an
// RCC variant (S(baseline) − S(N) for 1 − S(N)/S(baseline), and the same
// for RCC_success) exactly the RCC and RCC_success cells differ whose
// baseline figure is neither 1 nor the row's, and nothing else.
func TestRescoreChangedRule(t *testing.T) {
	dir := runSuite(t, scripted())
	broken := breakBaseline(t, dir)
	rep, err := Dir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sawS := false
	for _, c := range rep.Changes {
		if !strings.HasPrefix(c.Case, "aggregate") && c.Case != broken {
			t.Errorf("change in %s (%s %s)", c.Case, c.File, c.Metric)
		}
		sawS = sawS || (c.Case == broken && c.Metric == "S" && c.Old == "1" && c.New == "0")
	}
	if !sawS || rep.ChangedRuns != 1 {
		t.Errorf("the stale run's S 1 → 0 not reported: %+v", rep.Changes)
	}
	os.RemoveAll(filepath.Join(dir, scorediff.BackupDir))

	agg := readCSV(t, filepath.Join(dir, suite.FileAggregate))
	want := map[string]bool{}
	for _, r := range agg.rows {
		if r["RCC"] == "" {
			continue
		}
		base := agg.find(r["agent"], r["level"], "1", r["N"], r["protocol"])
		key := "aggregate " + strings.Join([]string{r["agent"], r["level"], r["N"], r["merged_from"], r["protocol"]}, "/")
		for col, from := range map[string]string{"RCC": "S_mean", "RCC_success": "success_rate"} {
			s, b := num(t, r[from]), num(t, base[from])
			if r[col] != "" && b != 1 && s != b {
				want[key+" "+col] = true
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no aggregate row has a baseline figure other than 1: the variant changes nothing")
	}
	variant := suite.Scorer{Version: "silo-score/test-difference", Rules: suite.Rules{RCC: suite.RCCDifference}}
	rep, err = Dir(context.Background(), dir, Options{Scorer: variant})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range rep.Changes {
		if c.File != suite.FileAggregate || (c.Metric != "RCC" && c.Metric != "RCC_success") {
			t.Errorf("change of %s %s %s: only RCC and RCC_success change", c.Case, c.File, c.Metric)
		}
		got[c.Case+" "+c.Metric] = true
	}
	if len(got) != len(want) || rep.ChangedRuns != 0 {
		t.Errorf("changed %v (%d runs), want %v", got, rep.ChangedRuns, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s: RCC change not reported", k)
		}
	}
	var cfg suite.Config
	if err := atomicfs.ReadJSON(filepath.Join(dir, suite.FileConfig), &cfg); err != nil || cfg.Scorer != variant.Version {
		t.Errorf("%s records %q (%v)", suite.FileConfig, cfg.Scorer, err)
	}
	// A suite recorded under another version is not resumed.
	s, _ := suite.Resolve(scripted())
	if _, err := suite.Run(context.Background(), s, dir, suite.RunOptions{Workers: 1}); err == nil || !strings.Contains(err.Error(), "silo rescore") {
		t.Errorf("resume of a suite under another scorer: %v", err)
	}
}

type table struct{ rows []map[string]string }

func readCSV(t *testing.T, path string) table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		tb.rows = append(tb.rows, m)
	}
	return tb
}

// find is the row of agent, level, N, merged_from and protocol.
func (tb table) find(agent, level, n, from, protocol string) map[string]string {
	for _, r := range tb.rows {
		if r["agent"] == agent && r["level"] == level && r["N"] == n && r["merged_from"] == from && r["protocol"] == protocol {
			return r
		}
	}
	return nil
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRescoreRefuses: a run changed after it was written, an incomplete
// suite, a directory of neither kind.
func TestRescoreRefuses(t *testing.T) {
	dir := runSuite(t, suite.Options{Tasks: "I-01", Agents: "2", Protocols: "p2p", Agent: "reference", Seeds: "1", MaxRounds: 2})
	ents, _ := os.ReadDir(filepath.Join(dir, suite.RunsDir))
	run := filepath.Join(dir, suite.RunsDir, ents[0].Name())
	b, _ := os.ReadFile(filepath.Join(run, play.FileResult))
	os.WriteFile(filepath.Join(run, play.FileResult), append(b, ' '), 0o644)
	if _, err := Dir(context.Background(), run, Options{}); err == nil || !strings.Contains(err.Error(), "does not match the SHA-256") {
		t.Errorf("edited result: %v", err)
	}
	os.WriteFile(filepath.Join(run, play.FileResult), b, 0o644)
	os.RemoveAll(filepath.Join(dir, suite.RunsDir, ents[1].Name()))
	if _, err := Dir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "incomplete suite") {
		t.Errorf("incomplete suite: %v", err)
	}
	if _, err := Dir(context.Background(), t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "neither a silo run directory") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, scorediff.ReportFile)); err == nil {
		t.Error("rescore.json written after a refusal")
	}
}
