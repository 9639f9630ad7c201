package llmagent_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
)

var agentIDRE = regexp.MustCompile(`Your agent id is (\d+)\.`)

// consensusModel: agent 0 proposes 7 in its first turn and submits it in
// its second; the others wait, then vote for the proposal they were told
// of and submit its value. In XML or with function calls.
func consensusModel(req stubmodel.ChatRequest) stubmodel.Reply {
	native := len(req.Tools) > 0
	id := agentIDRE.FindStringSubmatch(req.Messages[0].Content)[1]
	turn := turnOf(req)
	call := func(name, args, xmlArgs string) (stubmodel.ToolCall, string) {
		return stubmodel.ToolCall{Name: name, Arguments: args},
			"<tool_call><tool>" + name + "</tool><parameters>" + xmlArgs + "</parameters></tool_call>"
	}
	var calls []stubmodel.ToolCall
	var text string
	add := func(c stubmodel.ToolCall, x string) {
		calls = append(calls, c)
		text += x
	}
	switch {
	case id == "0" && turn == 0:
		add(call("propose_answer", `{"value": 7}`, "<value>7</value>"))
		add(call("wait", `{}`, ""))
	case id == "0":
		add(call("submit_result", `{"answer": 7}`, "<answer>7</answer>"))
	case turn == 0:
		add(call("wait", `{}`, ""))
	default:
		last := req.Messages[len(req.Messages)-1].Content
		m := regexp.MustCompile(`"proposal_id":"([^"]+)"`).FindStringSubmatch(last)
		if m == nil {
			return stubmodel.Text("no proposal yet")
		}
		add(call("vote", `{"proposal_id": "`+m[1]+`", "agree": true}`, "<proposal_id>"+m[1]+"</proposal_id><agree>true</agree>"))
		add(call("submit_result", `{"answer": 7}`, "<answer>7</answer>"))
	}
	if native {
		for k := range calls {
			calls[k].ID = "c" + string(rune('0'+k))
		}
		return stubmodel.Calls(calls...)
	}
	return stubmodel.Text(text)
}

// TestConsensusScaffold: with the consensus scaffold the tools are offered
// (in the prompt's list and as function schemas), the system prompt says
// how the helper works, the proposal reaches the others at the start of
// their next turn as a consensus_tally block after their tool results (a
// user message after the tool messages in native mode), and the run counts
// the helper's calls and messages. Without it, nothing of the helper
// appears.
func TestConsensusScaffold(t *testing.T) {
	for _, native := range []bool{false, true} {
		srv := stubmodel.NewServer(consensusModel)
		in := seeded(t, "I-01", 3)
		cfg := llmagent.Config{Model: client(t, srv, nil), Native: native, Scaffold: llmagent.Scaffold{Consensus: true}}
		team, err := llmagent.NewTeam(in, proto.Broadcast, cfg)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.Broadcast, MaxRounds: 5,
			Options: proto.Options{Consensus: true}, DB: filepath.Join(dir, "run.db"),
			OnEnd: func(st *proto.Store) error { return team.WriteLogs(dir, st) }}, team.Agents())
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		sys := reqs[0].Messages[0].Content
		if !strings.Contains(sys, "## Consensus helper") || !strings.Contains(sys, "propose_answer") || !strings.Contains(sys, "vote") {
			t.Errorf("native %v: system prompt lacks the helper:\n%s", native, sys)
		}
		if native {
			names := map[string]bool{}
			for _, tl := range reqs[0].Tools {
				names[tl.Name] = true
			}
			if !names["propose_answer"] || !names["vote"] {
				t.Errorf("function tools %v", names)
			}
		} else if !strings.Contains(sys, "<tool>propose_answer</tool>") {
			t.Error("xml prompt: no propose_answer example")
		}
		recs, _ := team.Records()
		var told bool
		for _, r := range recs {
			if r.Agent != 1 || r.Round != 2 {
				continue
			}
			last := r.Input[len(r.Input)-1]
			if last.Role != "user" || !strings.Contains(last.Content, "<tool>consensus_tally</tool>") ||
				!strings.Contains(last.Content, `"proposal_id":"r1-a0-s0"`) || !strings.Contains(last.Content, `"value":7`) {
				t.Errorf("native %v: agent 1's round-2 input ends with %+v", native, last)
			}
			if native && r.Input[0].Role != "tool" {
				t.Errorf("native: the tool messages do not come first: %+v", r.Input)
			}
			told = true
		}
		if !told {
			t.Fatalf("native %v: no round-2 turn of agent 1", native)
		}
		if !res.AllSubmitted || res.CallsByTool["propose_answer"] != 1 || res.CallsByTool["vote"] != 2 || res.Messages != 3 {
			t.Errorf("native %v: all submitted %v, calls %v, messages %d", native, res.AllSubmitted, res.CallsByTool, res.Messages)
		}
	}
	// Without the scaffold: the published prompt.
	srv := stubmodel.NewServer(consensusModel)
	defer srv.Close()
	out := play(t, seeded(t, "I-01", 3), proto.Broadcast, llmagent.Config{Model: client(t, srv, nil)}, 3)
	if sys := out.turns[0].Input[0].Content; strings.Contains(sys, "propose_answer") || strings.Contains(sys, "Consensus") {
		t.Error("the helper appears without the scaffold")
	}
	if out.res.CallsByTool["propose_answer"] != 1 || out.res.CallErrors == 0 {
		t.Errorf("without the helper propose_answer is an unknown tool: calls %v, errors %d", out.res.CallsByTool, out.res.CallErrors)
	}
}

// TestMixedTeamLabels: a team built with a config per agent records each
// agent's model in its turns.
func TestMixedTeamLabels(t *testing.T) {
	srv := stubmodel.NewServer(consensusModel)
	defer srv.Close()
	in := seeded(t, "I-01", 3)
	c := client(t, srv, nil)
	team, err := llmagent.NewTeamOf(in, proto.P2P, func(i int) llmagent.Config {
		return llmagent.Config{Model: c, Label: []string{"a", "a", "b"}[i]}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.P2P, MaxRounds: 2}, team.Agents()); err != nil {
		t.Fatal(err)
	}
	recs, _ := team.Records()
	for _, r := range recs {
		if want := []string{"a", "a", "b"}[r.Agent]; r.Model != want {
			t.Errorf("round %d agent %d: model %q", r.Round, r.Agent, r.Model)
		}
	}
}
