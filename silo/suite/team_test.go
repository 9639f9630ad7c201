package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/play"
)

// twoStubs serves the gather strategy at two loopback endpoints: model
// "good" computes and submits right; model "sloppy" submits 0 for every
// answer, so the two are told apart by their scores.
func twoStubs(t *testing.T) (good, sloppy *stubmodel.Server) {
	t.Helper()
	g := silogather.Model{Solve: silogather.PromptSolver}
	s := silogather.Model{Solve: silogather.PromptSolver, Wrong: func(int, json.RawMessage) json.RawMessage { return json.RawMessage("0") }}
	good, sloppy = stubmodel.NewServer(g.Handle), stubmodel.NewServer(s.Handle)
	t.Cleanup(good.Close)
	t.Cleanup(sloppy.Close)
	return good, sloppy
}

// stubAgents builds the two models' agents, each with its own endpoint
// limits and both with one response cache.
func stubAgents(t *testing.T, good, sloppy string, cache *llm.Cache, mode string) (*play.LLMAgent, *play.LLMAgent) {
	t.Helper()
	mk := func(name, model, url string) *play.LLMAgent {
		l, err := play.NewLLMAgent(play.LLMConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Name: name, Model: model, BaseURL: url},
			Limits: llm.Limits{Concurrency: 4}}, Options: llm.Options{Cache: cache, CacheMode: mode, Timeout: 10 * time.Second},
			MaxModelFailures: 1})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return mk("a", "stub-good", good), mk("b", "stub-sloppy", sloppy)
}

func teamOptions(a, b *play.LLMAgent) Options {
	return Options{Tasks: "I-01,II-11", Agents: "4,6", Protocols: "sfs", Agent: "llm,team", Seeds: "1", MaxRounds: 12,
		LLMs: []*play.LLMAgent{a, b}, Teams: []*play.Team{{Shares: true, Members: []play.Member{{LLM: a, Count: 1}, {LLM: b, Count: 1}}}}}
}

// TestMixedTeamSuite is the "done when": a suite with a mixed team
// runs against two stub endpoints and reports per model. The models'
// plain runs run beside it; the team gets no baseline; the team's runs
// record their agents' models; summary_models.csv and
// aggregate_models.csv (and aggregate.md) hold the figures per model; a
// second run resumes everything; and a replay from the response cache
// alone gives the same files.
func TestMixedTeamSuite(t *testing.T) {
	good, sloppy := twoStubs(t)
	cache, err := llm.OpenCache(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	a, b := stubAgents(t, good.URL, sloppy.URL, cache, "")
	s, err := Resolve(teamOptions(a, b))
	if err != nil {
		t.Fatal(err)
	}
	const mix = "llm-mix-a=1-b=1"
	var teamCases, baselines int
	for _, c := range s.Cases {
		if c.Agent == mix {
			teamCases++
			if c.N == 1 {
				t.Errorf("a team case at N = 1: %s", c.ID)
			}
		}
		if c.MergedFrom > 0 {
			baselines++
		}
	}
	// 2 tasks × 2 N × 1 protocol: 4 team runs; the plain models' merged
	// baselines: 2 models × 4.
	if teamCases != 4 || baselines != 8 || len(s.Cases) != 4+8+8 {
		t.Fatalf("%d team cases, %d baselines, %d cases", teamCases, baselines, len(s.Cases))
	}
	if id := "I-01__n4__sfs__" + mix + "__seeded-s1"; !slices.ContainsFunc(s.Cases, func(c Case) bool { return c.ID == id }) {
		t.Errorf("no case %s", id)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), s, dir, RunOptions{Workers: 4})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("%v %+v", err, rep.Failures)
	}

	// Per run: the team's manifest names each model's agents; the plain
	// runs' manifests are as they were.
	var man Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, RunsDir, "I-01__n6__sfs__"+mix+"__seeded-s1", FileManifest), &man); err != nil {
		t.Fatal(err)
	}
	if man.LLM != nil || man.Team == nil || !man.Team.Shares || len(man.Team.Members) != 2 ||
		!slices.Equal(man.Team.Members[0].Agents, []int{0, 1, 2}) || !slices.Equal(man.Team.Members[1].Agents, []int{3, 4, 5}) ||
		man.Team.Members[1].Model != "stub-sloppy" || man.Team.Members[1].BaseURL != sloppy.URL {
		t.Errorf("team manifest %+v", man.Team)
	}
	plainMan, _ := os.ReadFile(filepath.Join(dir, RunsDir, "I-01__n4__sfs__llm-a__seeded-s1", FileManifest))
	if bytes.Contains(plainMan, []byte(`"team"`)) {
		t.Errorf("a plain run's manifest names a team: %s", plainMan)
	}

	// Per model: the good model's agents are right, the sloppy one's wrong.
	sum := readCSV(t, filepath.Join(dir, FileSummaryModels))
	col := func(name string) int { return slices.Index(sum[0], name) }
	if len(sum) != 1+2*4 {
		t.Fatalf("%d rows in %s", len(sum), FileSummaryModels)
	}
	for _, r := range sum[1:] {
		n, _ := strconv.Atoi(r[col("N")])
		switch r[col("model")] {
		case "a":
			if r[col("S")] != "1" || r[col("agents")] != strconv.Itoa(n/2) || r[col("agent_ids")] != "0-"+strconv.Itoa(n/2-1) {
				t.Errorf("model a row %v", r)
			}
		case "b":
			if r[col("S")] != "0" || r[col("agent_ids")] != strconv.Itoa(n/2)+"-"+strconv.Itoa(n-1) {
				t.Errorf("model b row %v", r)
			}
		default:
			t.Errorf("row of model %q", r[col("model")])
		}
		if r[col("model_calls")] == "0" || r[col("input_tokens")] == "0" {
			t.Errorf("row without usage %v", r)
		}
	}
	agg := readCSV(t, filepath.Join(dir, FileAggregateModels))
	acol := func(name string) int { return slices.Index(agg[0], name) }
	if len(agg) != 1+2*2*2 { // models × levels × N
		t.Fatalf("%d rows in %s", len(agg), FileAggregateModels)
	}
	for _, r := range agg[1:] {
		want := map[string]string{"a": "1.0000", "b": "0.0000"}[r[acol("model")]]
		if r[acol("agent")] != mix || r[acol("S_mean")] != want || r[acol("turns_per_agent")] == "0.0" {
			t.Errorf("aggregate row %v", r)
		}
	}
	// The team's rows in the aggregate: no baseline, so no RCC.
	for _, r := range readCSV(t, filepath.Join(dir, FileAggregate))[1:] {
		if r[0] == mix && (r[13] != "" || r[15] != "") {
			t.Errorf("team aggregate row with RCC: %v", r)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, FileAggregateMD))
	if !bytes.Contains(md, []byte("by model (mixed teams)")) {
		t.Error("aggregate.md has no table by model")
	}
	// The summary's model column of a team run names both models.
	for _, r := range readCSV(t, filepath.Join(dir, FileSummary))[1:] {
		if r[5] == mix && r[20] != "stub-good+stub-sloppy" {
			t.Errorf("summary row %v", r)
		}
	}

	// Resume: nothing runs, nothing changes.
	before := files(t, dir)
	rep, err = Run(context.Background(), s, dir, RunOptions{Workers: 4})
	if err != nil || rep.Ran != 0 || rep.Skip != len(s.Cases) {
		t.Fatalf("resume: %v, ran %d", err, rep.Ran)
	}
	after := files(t, dir)
	for name, data := range before {
		if !bytes.Equal(data, after[name]) {
			t.Errorf("%s changed on resume", name)
		}
	}

	// Replay: the servers are gone; each model's calls come from the one
	// cache, keyed by model and endpoint.
	good.Close()
	sloppy.Close()
	a2, b2 := stubAgents(t, good.URL, sloppy.URL, cache, llm.CacheReplay)
	s2, err := Resolve(teamOptions(a2, b2))
	if err != nil {
		t.Fatal(err)
	}
	replay := t.TempDir()
	if rep, err := Run(context.Background(), s2, replay, RunOptions{Workers: 4}); err != nil || len(rep.Failures) > 0 {
		t.Fatalf("replay: %v %+v", err, rep.Failures)
	}
	re := files(t, replay)
	if len(re) != len(before) {
		t.Fatalf("%d files replayed, %d live", len(re), len(before))
	}
	for name, data := range before {
		if !bytes.Equal(data, re[name]) {
			t.Errorf("%s differs after replay", name)
		}
	}
}

// TestTeamResolveErrors: a team that cannot play the suite's N, or a team
// without its agent kind (or the kind without a team), is refused before
// anything runs, naming the option.
func TestTeamResolveErrors(t *testing.T) {
	good, sloppy := twoStubs(t)
	a, b := stubAgents(t, good.URL, sloppy.URL, nil, "")
	exact := &play.Team{Members: []play.Member{{LLM: a, Count: 3}, {LLM: b, Count: 2}}}
	shares := &play.Team{Shares: true, Members: []play.Member{{LLM: a, Count: 1}, {LLM: b, Count: 1}}}
	for _, tc := range []struct {
		name   string
		mod    func(*Options)
		option string
		want   string
	}{
		{"counts against N", func(o *Options) { o.Teams = []*play.Team{exact} }, "Teams", "has 5 agents (its counts' sum), not N = 4"},
		{"shares at N = 2 of three", func(o *Options) {
			c := *b
			c.Name = "c"
			o.Agents = "2"
			o.Teams = []*play.Team{{Shares: true, Members: []play.Member{{LLM: a, Count: 1}, {LLM: b, Count: 1}, {LLM: &c, Count: 1}}}}
		}, "Teams", "without an agent"},
		{"only N = 1", func(o *Options) { o.Agents = "1"; o.Teams = []*play.Team{shares} }, "Teams", "plays at no N"},
		{"kind without team", func(o *Options) { o.Teams = nil }, "Agent", "needs a mixed team"},
		{"team without kind", func(o *Options) { o.Agent = "llm"; o.Teams = []*play.Team{shares} }, "Teams", "agent kinds lack team"},
		{"the same team twice", func(o *Options) { o.Teams = []*play.Team{shares, shares} }, "Teams", "team 2: another team has the same agents"},
	} {
		opt := Options{Tasks: "I-01", Agents: "4", Protocols: "p2p", Agent: "llm,team", LLMs: []*play.LLMAgent{a, b}}
		tc.mod(&opt)
		_, err := Resolve(opt)
		var oe *opterr.Error
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %s: …%s…", tc.name, err, tc.option, tc.want)
		}
	}
	// Exact counts at their own N are fine, and a plain suite names no team.
	if _, err := Resolve(Options{Tasks: "I-01", Agents: "5", Protocols: "p2p", Agent: "team", Teams: []*play.Team{exact}}); err != nil {
		t.Errorf("counts 3,2 at N = 5: %v", err)
	}
}
