package silogather_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

func play(t *testing.T, in *task.Instance, p proto.Protocol, native bool, h func(stubmodel.ChatRequest) stubmodel.Reply) *round.Result {
	t.Helper()
	return playWith(t, in, p, llmagent.Scaffold{}, native, h)
}

func playWith(t *testing.T, in *task.Instance, p proto.Protocol, sc llmagent.Scaffold, native bool, h func(stubmodel.ChatRequest) stubmodel.Reply) *round.Result {
	t.Helper()
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "silo-gather", Concurrency: 64,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	team, err := llmagent.NewTeam(in, p, llmagent.Config{Model: c, Native: native, Scaffold: sc})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: p, MaxRounds: 12,
		Options: proto.Options{Consensus: sc.Consensus},
		DB:      filepath.Join(dir, "run.db"), OnEnd: func(st *proto.Store) error { return team.WriteLogs(dir, st) }}, team.Agents())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPromptSolverReachesSuccess: the model that computes from the prompt
// text alone solves every task, at every protocol, through the real agent.
func TestPromptSolverReachesSuccess(t *testing.T) {
	m := silogather.Model{Solve: silogather.PromptSolver}
	for _, tk := range task.All() {
		for _, n := range []int{1, 3} {
			in, err := task.Seeded(tk.ID, n, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS} {
				native := tk.Level == 2 // both tool formats, over the tasks
				name := fmt.Sprintf("%s/n%d/%s/native=%v", tk.ID, n, p, native)
				res := play(t, in, p, native, m.Handle)
				if !res.Success || res.S != 1 {
					t.Errorf("%s: S = %v, agents %+v", name, res.S, res.Agents)
				}
			}
		}
	}
}

// TestPromptSolverWithScaffolds: the prompt scaffolds (a planning round,
// reminders, a scratchpad request, no topology hint) do not confuse it.
func TestPromptSolverWithScaffolds(t *testing.T) {
	m := silogather.Model{Solve: silogather.PromptSolver}
	sc := llmagent.Scaffold{Planning: true, Reminders: true, Scratchpad: true, NoTopologyHint: true}
	for _, id := range []string{"II-18", "III-25"} {
		in, err := task.Seeded(id, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []proto.Protocol{proto.P2P, proto.SFS} {
			if res := playWith(t, in, p, sc, p == proto.SFS, m.Handle); !res.Success || res.S != 1 {
				t.Errorf("%s/%s: S = %v, agents %+v", id, p, res.S, res.Agents)
			}
		}
	}
}

// TestPromptSolverMatchesGold: on prompts alone, the solver computes the
// gold answers of every task, for several sizes.
func TestPromptSolverMatchesGold(t *testing.T) {
	for _, tk := range task.All() {
		for _, n := range []int{1, 2, 5} {
			in, err := task.Seeded(tk.ID, n, 1)
			if err != nil {
				t.Fatal(err)
			}
			prompt := in.Prompt(0, true)
			texts := make([]string, n)
			for i := range texts {
				p := in.Prompt(i, i%2 == 0)
				s, ok := silogather.PromptShard(p)
				if !ok || s != in.ShardText(i) {
					t.Fatalf("%s n=%d: PromptShard(agent %d) = %q, %v; want %q", tk.ID, n, i, s, ok, in.ShardText(i))
				}
				texts[i] = s
			}
			got, err := silogather.PromptSolver(prompt, texts)
			if err != nil {
				t.Fatalf("%s n=%d: %v", tk.ID, n, err)
			}
			for i := range got {
				if string(got[i]) != string(in.Expected[i]) {
					t.Fatalf("%s n=%d agent %d: got %s, want %s", tk.ID, n, i, got[i], in.Expected[i])
				}
			}
		}
	}
}

// TestSolverErrorsFailHonestly: a prompt the solver does not understand
// gives null answers, submitted by everyone: the run ends, wrong.
func TestSolverErrorsFailHonestly(t *testing.T) {
	in, err := task.Seeded("I-01", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := silogather.Model{Solve: func(prompt string, texts []string) ([]json.RawMessage, error) {
		return silogather.PromptSolver(strings.Replace(prompt, "**Task: Global Max**", "**Task: Something Else**", 1), texts)
	}}
	res := play(t, in, proto.Broadcast, false, m.Handle)
	if res.S != 0 || !res.AllSubmitted {
		t.Fatalf("S = %v, all submitted %v", res.S, res.AllSubmitted)
	}
	if _, err := silogather.PromptSolver("no title", []string{"[1]"}); err == nil {
		t.Error("a prompt without a title was solved")
	}
}

// TestPromptSolverAtScale: the official 100-agent instances of a global
// task with a large answer (III-24's distance map) and a segmented one
// (II-12): one shared answer travels once, so messages stay within the
// protocol's size limit.
func TestPromptSolverAtScale(t *testing.T) {
	m := silogather.Model{Solve: silogather.PromptSolver}
	for _, id := range []string{"III-24", "II-12"} {
		in, err := task.Official(id, 100)
		if err != nil {
			t.Fatal(err)
		}
		if res := play(t, in, proto.Broadcast, false, m.Handle); !res.Success || res.CallErrors != 0 {
			t.Errorf("%s n=100: S = %v, call errors %d", id, res.S, res.CallErrors)
		}
	}
}

// TestPolicyServesAndCounts: the silo-gather stub policy answers through
// stubmodel.Handler and counts the requests it served.
func TestPolicyServesAndCounts(t *testing.T) {
	p := silogather.Policy()
	if p.Name != "silo-gather" {
		t.Fatalf("name %q", p.Name)
	}
	h, served := p.New(stubmodel.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	in, err := task.Seeded("I-01", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "silo-gather", Concurrency: 4,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	team, err := llmagent.NewTeam(in, proto.P2P, llmagent.Config{Model: c})
	if err != nil {
		t.Fatal(err)
	}
	res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.P2P, MaxRounds: 12,
		DB: filepath.Join(t.TempDir(), "run.db")}, team.Agents())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Errorf("silo-gather did not solve I-01 with 2 agents: S %v", res.S)
	}
	if got := served(); !regexp.MustCompile(`^[1-9]\d* requests$`).MatchString(got) {
		t.Errorf("summary %q, want the count of requests", got)
	}
}

// TestConsensusGather: with the consensus helper the gather strategy
// proposes the answer instead of shipping it, the others vote for it and
// submit it (their part of a segmented task's list), and agent 0 submits
// once all have voted: every task family solved, in both tool formats
// and every protocol, in as many rounds as without the helper (agent 0
// submits two rounds after proposing, but the others learn of the
// proposal at the start of a turn, a round before a receive_messages
// result would show it).
func TestConsensusGather(t *testing.T) {
	m := silogather.Model{Solve: silogather.PromptSolver}
	for k, id := range []string{"I-03", "II-11", "II-12", "III-21"} {
		in, err := task.Seeded(id, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS} {
			for _, native := range []bool{(k+j)%2 == 1} { // both formats, over the tasks
				name := fmt.Sprintf("%s/%s/native=%v", id, p, native)
				plain := playWith(t, in, p, llmagent.Scaffold{}, native, m.Handle)
				res := playWith(t, in, p, llmagent.Scaffold{Consensus: true}, native, m.Handle)
				if !res.Success {
					t.Errorf("%s: S = %v, agents %+v", name, res.S, res.Agents)
				}
				if res.CallsByTool[proto.ToolPropose] != 1 || res.CallsByTool[proto.ToolVote] != 3 {
					t.Errorf("%s: calls %v", name, res.CallsByTool)
				}
				if res.Rounds != plain.Rounds {
					t.Errorf("%s: %d rounds with the helper, %d without", name, res.Rounds, plain.Rounds)
				}
			}
		}
	}
}

// TestHasty: silo-hasty's agents other than 0 submit the answer over their
// own shard when none has come by their second turn (premature
// submissions); with the consensus helper they wait for the proposal.
func TestHasty(t *testing.T) {
	m := silogather.Model{Solve: silogather.PromptSolver, Hasty: true}
	in, err := task.Seeded("I-01", 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []proto.Protocol{proto.P2P, proto.SFS} {
		res := play(t, in, p, false, m.Handle)
		if res.Agents[0].Correct != true || res.Failures[round.LabelPremature] == 0 {
			t.Errorf("%s: hasty: agents %+v, failures %v", p, res.Agents, res.Failures)
		}
		for _, a := range res.Agents[1:] {
			if a.Round != 2 {
				t.Errorf("%s: hasty agent %d submitted in round %d", p, a.ID, a.Round)
			}
		}
		if res := playWith(t, in, p, llmagent.Scaffold{Consensus: true}, false, m.Handle); !res.Success {
			t.Errorf("%s: hasty with the helper: S %v", p, res.S)
		}
	}
}
