package play_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// fakeAgent is an LLMAgent with a client that is never called.
func fakeAgent(t *testing.T, name string, mod func(*llmagent.Config)) *play.LLMAgent {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: name})
	if err != nil {
		t.Fatal(err)
	}
	l := &play.LLMAgent{Config: llmagent.Config{Model: c}, Model: name}
	if mod != nil {
		mod(&l.Config)
	}
	return l
}

func team(shares bool, members ...play.Member) *play.Team {
	return &play.Team{Members: members, Shares: shares}
}

// TestTeamCounts: exact counts give one N; shares are apportioned by the
// largest remainder, ties to the earlier model, and each model needs an
// agent; agents are assigned in member order.
func TestTeamCounts(t *testing.T) {
	a, b, c := fakeAgent(t, "a", nil), fakeAgent(t, "b", nil), fakeAgent(t, "c", nil)
	exact := team(false, play.Member{LLM: a, Count: 3}, play.Member{LLM: b, Count: 2})
	if got, err := exact.Models(5); err != nil || !slices.Equal(got, []string{"a", "a", "a", "b", "b"}) {
		t.Errorf("counts 3,2 at N=5: %v, %v", got, err)
	}
	if exact.Size() != 5 {
		t.Errorf("size %d", exact.Size())
	}
	var oe *opterr.Error
	if _, err := exact.Models(4); !errors.As(err, &oe) || oe.Option != "Teams" || !strings.Contains(err.Error(), "not N = 4") {
		t.Errorf("counts 3,2 at N=4: %v", err)
	}
	for _, tc := range []struct {
		shares []int
		n      int
		want   []int // counts per member, nil: an error
	}{
		{[]int{1, 1}, 4, []int{2, 2}},
		{[]int{1, 1}, 5, []int{3, 2}}, // a tie: the earlier model
		{[]int{3, 2}, 6, []int{4, 2}}, // 3.6, 2.4
		{[]int{1, 2}, 4, []int{1, 3}}, // 1.33, 2.67
		{[]int{1, 1, 1}, 4, []int{2, 1, 1}},
		{[]int{1, 1, 1}, 2, nil},
		{[]int{2, 1}, 4, []int{3, 1}}, // 2.67, 1.33
		{[]int{9, 1}, 3, nil},         // 2.7, 0.3: b gets none
	} {
		var ms []play.Member
		for i, s := range tc.shares {
			ms = append(ms, play.Member{LLM: []*play.LLMAgent{a, b, c}[i], Count: s})
		}
		got, err := team(true, ms...).Counts(tc.n)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "without an agent") {
				t.Errorf("shares %v at N=%d: %v, %v; want an error", tc.shares, tc.n, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("shares %v at N=%d: %v, %v; want %v", tc.shares, tc.n, got, err, tc.want)
		}
	}
}

// TestTeamLabel: the parts are reduced, so equal agents share a label;
// scaffolds and the tool format follow; labels never collide with a
// single model's.
func TestTeamLabel(t *testing.T) {
	sc := func(c *llmagent.Config) { c.Scaffold.Consensus, c.Native = true, true }
	a, b := fakeAgent(t, "a", nil), fakeAgent(t, "org/b", nil)
	counts := team(false, play.Member{LLM: a, Count: 4}, play.Member{LLM: b, Count: 2})
	shares := team(true, play.Member{LLM: a, Count: 2}, play.Member{LLM: b, Count: 1})
	if counts.Label() != shares.Label() || counts.Label() != "llm-mix-a=2-org-b-"+strings.TrimPrefix(b.Label(), "llm-org-b-")+"=1" {
		t.Errorf("labels %q, %q", counts.Label(), shares.Label())
	}
	as, bs := fakeAgent(t, "a", sc), fakeAgent(t, "b", sc)
	if got := team(false, play.Member{LLM: as, Count: 1}, play.Member{LLM: bs, Count: 1}).Label(); got != "llm-mix-a=1-b=1+consensus+native" {
		t.Errorf("label %q", got)
	}
	if got := (play.Players{Kind: play.AgentTeam, Team: counts}).Label(); got != counts.Label() {
		t.Errorf("players label %q", got)
	}
}

// TestTeamCheck: the team's mistakes are errors of option Teams.
func TestTeamCheck(t *testing.T) {
	a, b := fakeAgent(t, "a", nil), fakeAgent(t, "b", nil)
	native := fakeAgent(t, "c", func(c *llmagent.Config) { c.Native = true })
	for _, tc := range []struct {
		name string
		team *play.Team
		want string
	}{
		{"one model", team(false, play.Member{LLM: a, Count: 3}), "at least two models"},
		{"zero count", team(false, play.Member{LLM: a, Count: 0}, play.Member{LLM: b, Count: 1}), "count 0"},
		{"huge share", team(true, play.Member{LLM: a, Count: 1 << 20}, play.Member{LLM: b, Count: 1}), "share 1048576"},
		{"twice", team(false, play.Member{LLM: a, Count: 1}, play.Member{LLM: a, Count: 1}), "named twice"},
		{"no model", team(false, play.Member{LLM: a, Count: 1}, play.Member{Count: 1}), "needs a model"},
		{"settings", team(false, play.Member{LLM: a, Count: 1}, play.Member{LLM: native, Count: 1}), "configured unlike"},
	} {
		var oe *opterr.Error
		if err := tc.team.Check(); !errors.As(err, &oe) || oe.Option != "Teams" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want Teams: …%s…", tc.name, err, tc.want)
		}
	}
}

// TestRunMixedTeam: a mixed team against two stub endpoints writes each
// agent's model into turns.jsonl and result.json, and the figures per
// model; each model's requests go to its own endpoint.
func TestRunMixedTeam(t *testing.T) {
	in, err := task.Seeded("I-01", 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	gather := silogather.Model{Solve: silogather.PromptSolver}
	srvA, srvB := stubmodel.NewServer(gather.Handle), stubmodel.NewServer(gather.Handle)
	defer srvA.Close()
	defer srvB.Close()
	agent := func(name, url string) *play.LLMAgent {
		l, err := play.NewLLMAgent(play.LLMConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Model: name, BaseURL: url}}, MaxModelFailures: 1})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	tm := team(false, play.Member{LLM: agent("stub-a", srvA.URL), Count: 3}, play.Member{LLM: agent("stub-b", srvB.URL), Count: 2})
	dir := t.TempDir()
	res, _, err := play.Run(context.Background(), in, proto.P2P, play.Players{Kind: play.AgentTeam, Team: tm}, play.Limits{MaxRounds: 10}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || len(res.ByModel) != 2 || res.ByModel[0].Model != "stub-a" || res.ByModel[1].Model != "stub-b" ||
		res.ByModel[0].Usage == nil || res.ByModel[1].Usage == nil {
		t.Fatalf("success %v, by model %+v", res.Success, res.ByModel)
	}
	if got := res.ByModel[0].Usage.ModelCalls + res.ByModel[1].Usage.ModelCalls; got != res.Usage.ModelCalls {
		t.Errorf("model calls %d by model, %d in all", got, res.Usage.ModelCalls)
	}
	// Each endpoint served its own agents' calls, and only those.
	idsOf := func(srv *stubmodel.Server) map[int]bool {
		ids := map[int]bool{}
		for _, r := range srv.Requests() {
			v, ok := silogather.ReadView(r)
			if !ok || r.Model != map[*stubmodel.Server]string{srvA: "stub-a", srvB: "stub-b"}[srv] {
				t.Fatalf("request %+v", r.Model)
			}
			ids[v.ID] = true
		}
		return ids
	}
	if a, b := idsOf(srvA), idsOf(srvB); len(a) != 3 || !a[0] || !a[2] || len(b) != 2 || !b[3] || !b[4] {
		t.Errorf("endpoint a served agents %v, b %v", a, b)
	}
	if srvA.Count() != res.ByModel[0].Usage.ModelCalls || srvB.Count() != res.ByModel[1].Usage.ModelCalls {
		t.Errorf("served %d and %d, usage %d and %d", srvA.Count(), srvB.Count(), res.ByModel[0].Usage.ModelCalls, res.ByModel[1].Usage.ModelCalls)
	}
	f, err := os.Open(filepath.Join(dir, llmagent.FileTurns))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r llmagent.TurnRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if want := []string{"stub-a", "stub-a", "stub-a", "stub-b", "stub-b"}[r.Agent]; r.Model != want {
			t.Errorf("turn of agent %d: model %q", r.Agent, r.Model)
		}
	}
	var disk round.Result
	b, _ := os.ReadFile(filepath.Join(dir, play.FileResult))
	if err := json.Unmarshal(b, &disk); err != nil || disk.Agents[4].Model != "stub-b" || len(disk.ByModel) != 2 {
		t.Errorf("result.json: %v, agent 4 model %q", err, disk.Agents[4].Model)
	}
	// The wrong size is an error before anything runs.
	in4, _ := task.Seeded("I-01", 4, 1)
	if _, _, err := play.Run(context.Background(), in4, proto.P2P, play.Players{Kind: play.AgentTeam, Team: tm}, play.Limits{MaxRounds: 3}, t.TempDir()); err == nil {
		t.Error("a team of five at N = 4: no error")
	}
}
