package llmagent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
)

const (
	xmlWait   = "<tool_call><tool>wait</tool></tool_call>"
	xmlSubmit = "<tool_call><tool>submit_result</tool><parameters><answer>7</answer></parameters></tool_call>"
)

// TestPlanningRound: round 1 is for planning; submit_result is refused
// there (not executed, the agent keeps its turn) and allowed in round 2,
// which opens with a note.
func TestPlanningRound(t *testing.T) {
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Text(xmlSubmit + xmlWait) })
	defer srv.Close()
	in := seeded(t, "I-01", 2)
	out := play(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil), Scaffold: llmagent.Scaffold{Planning: true}}, 5)
	if out.res.Rounds != 2 || out.res.Agents[0].Round != 2 {
		t.Fatalf("rounds %d, submitted in round %d", out.res.Rounds, out.res.Agents[0].Round)
	}
	r1 := out.turns[0]
	if len(r1.Calls) != 2 || r1.Calls[0].Executed || !strings.Contains(string(r1.Calls[0].Result), "planning round") || !r1.Calls[1].Executed {
		t.Errorf("round 1 calls %+v", r1.Calls)
	}
	if !strings.Contains(r1.Input[1].Content, "## Planning round") {
		t.Error("task prompt lacks the planning note")
	}
	if r2 := out.turns[2]; !strings.Contains(r2.Input[0].Content, "planning round is over") {
		t.Errorf("round 2 input %+v", r2.Input)
	}
}

// TestReminderScratchpadTopology: reminders are added from the second
// turn on, the scratchpad section is in the system prompt, and the
// topology hint can be removed from the task prompt.
func TestReminderScratchpadTopology(t *testing.T) {
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		if turnOf(req) < 2 {
			return stubmodel.Text("<scratchpad>nothing yet</scratchpad>" + xmlWait)
		}
		return stubmodel.Text(xmlSubmit)
	})
	defer srv.Close()
	in := seeded(t, "I-01", 2)
	sc := llmagent.Scaffold{Reminders: true, Scratchpad: true, NoTopologyHint: true}
	out := play(t, in, proto.SFS, llmagent.Config{Model: client(t, srv, nil), Scaffold: sc}, 5)
	first := out.turns[0].Input
	if !strings.Contains(first[0].Content, "<scratchpad>") {
		t.Error("system prompt lacks the scratchpad section")
	}
	if in.Hint == "" || strings.Contains(first[1].Content, strings.TrimSpace(in.Hint)) {
		t.Error("topology hint not removed")
	}
	if strings.Contains(first[1].Content, "Reminder:") {
		t.Error("reminder on the first turn")
	}
	for _, r := range out.turns[2:] {
		last := r.Input[len(r.Input)-1].Content
		if !strings.Contains(last, "Reminder: you are agent") || !strings.Contains(last, "read_file") {
			t.Errorf("round %d agent %d: no reminder in %q", r.Round, r.Agent, last)
		}
	}
	// the published prompt: hint on, no reminders, no scratchpad
	plain := play(t, in, proto.SFS, llmagent.Config{Model: client(t, srv, nil)}, 5)
	if p := plain.turns[0].Input; strings.Contains(p[0].Content, "<scratchpad>") || !strings.Contains(p[1].Content, strings.TrimSpace(in.Hint)) {
		t.Error("published prompt changed")
	}
	for _, r := range plain.turns[2:] {
		if strings.Contains(r.Input[len(r.Input)-1].Content, "Reminder:") {
			t.Error("reminder without the scaffold")
		}
	}
}

// TestContextBudget: with a budget, whole old turns are dropped before a
// call would overflow, the task prompt says so, the system and task
// prompts and the latest turn stay, and tool-call/tool-result pairs of
// native mode are never split.
func TestContextBudget(t *testing.T) {
	for _, native := range []bool{false, true} {
		srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
			if len(req.Tools) > 0 {
				r := stubmodel.Calls(stubmodel.ToolCall{ID: "c1", Name: "receive_messages", Arguments: "{}"},
					stubmodel.ToolCall{ID: "c2", Name: "list_agents", Arguments: "{}"}, stubmodel.ToolCall{ID: "c3", Name: "wait", Arguments: "{}"})
				r.Content = strings.Repeat("thinking out loud ", 40)
				return r
			}
			return stubmodel.Text(strings.Repeat("thinking out loud ", 40) + "<tool_call><tool>list_agents</tool></tool_call>" + xmlWait)
		})
		in := seeded(t, "I-01", 2)
		const budget = 1200
		out := play(t, in, proto.Broadcast, llmagent.Config{Model: client(t, srv, nil), Native: native,
			ContextBudget: budget, ReplyReserve: 200}, 12)
		srv.Close()
		last := out.turns[len(out.turns)-1]
		if last.Context.DroppedTurns == 0 || out.res.Usage.TruncatedTurns == 0 {
			t.Fatalf("native %v: nothing dropped (context %+v)", native, last.Context)
		}
		reqs := srv.Requests()
		if !strings.Contains(reqs[len(reqs)-1].Messages[1].Content, "[Context note:") {
			t.Error("no omission note")
		}
		for _, req := range reqs {
			if req.Messages[0].Role != "system" || !strings.Contains(req.Messages[1].Content, "**Task:") {
				t.Fatal("system or task prompt dropped")
			}
			if len(req.Messages) > 20 { // 12 rounds of full history would be 26 (XML) or 50 (native)
				t.Errorf("native %v: %d messages sent under a budget", native, len(req.Messages))
			}
			// every tool message answers a call of the assistant message before it
			calls := map[string]bool{}
			for _, m := range req.Messages {
				for _, c := range m.ToolCalls {
					calls[c.ID] = true
				}
				if m.Role == "tool" && !calls[m.ToolCallID] {
					t.Fatalf("native %v: tool message for %q without its call", native, m.ToolCallID)
				}
			}
		}
		for _, r := range out.turns[4:] {
			if r.Context.EstTokens+200 > budget && !r.Context.OverBudget {
				t.Errorf("estimate %d over budget %d", r.Context.EstTokens, budget)
			}
		}
	}
}

// TestNativeArguments: native calls with invalid JSON arguments are
// answered with an error and not executed; calls after wait are answered
// "not executed"; every call gets a tool message.
func TestNativeArguments(t *testing.T) {
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		if turnOf(req) == 0 {
			return stubmodel.Calls(
				stubmodel.ToolCall{ID: "a", Name: "send_message", Arguments: `{"target_id": 1, "content": `},
				stubmodel.ToolCall{ID: "b", Name: "send_message", Arguments: `{"target_id": 1, "content": "hello"}`},
				stubmodel.ToolCall{ID: "c", Name: "wait", Arguments: `{}`},
				stubmodel.ToolCall{ID: "d", Name: "submit_result", Arguments: `{"answer": 1}`})
		}
		return stubmodel.Calls(stubmodel.ToolCall{ID: "e", Name: "submit_result", Arguments: `{"answer": 2}`})
	})
	defer srv.Close()
	in := seeded(t, "I-01", 2)
	out := play(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil), Native: true}, 5)
	r := out.turns[0]
	if len(r.Calls) != 3 || r.Calls[0].Executed || !r.Calls[1].Executed || r.Dropped != 1 {
		t.Fatalf("calls %+v dropped %d", r.Calls, r.Dropped)
	}
	if out.res.Messages != 1 || out.res.Agents[0].Round != 2 { // agent 1 cannot message itself
		t.Errorf("messages %d, submitted round %d", out.res.Messages, out.res.Agents[0].Round)
	}
	next := out.turns[2].Input
	if len(next) != 4 {
		t.Fatalf("round 2 input %d messages, want 4 tool messages", len(next))
	}
	var e struct{ Error string }
	json.Unmarshal([]byte(next[3].Content), &e)
	if next[3].ToolCallID != "d" || !strings.Contains(e.Error, "not executed") {
		t.Errorf("dropped call answered %+v", next[3])
	}
}

// TestConversationFromLog: the turn log holds every prompt: Conversation
// rebuilds the exact messages of every call the server received, with full
// history and under a context budget, in both tool formats.
func TestConversationFromLog(t *testing.T) {
	for _, tc := range []struct {
		native bool
		budget int64
	}{{false, 0}, {true, 0}, {false, 1200}, {true, 1200}} {
		in := seeded(t, "I-01", 3)
		srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
			if len(req.Tools) > 0 {
				r := stubmodel.Calls(stubmodel.ToolCall{Name: "receive_messages", Arguments: "{}"},
					stubmodel.ToolCall{Name: "broadcast_message", Arguments: `{"content": "status"}`}, stubmodel.ToolCall{Name: "wait", Arguments: "{}"})
				r.Content = strings.Repeat("pondering ", 30)
				return r
			}
			return stubmodel.Text(strings.Repeat("pondering ", 30) + "<tool_call><tool>receive_messages</tool></tool_call>" +
				"<tool_call><tool>broadcast_message</tool><parameters><content>status</content></parameters></tool_call>" + xmlWait)
		})
		out := play(t, in, proto.Broadcast, llmagent.Config{Model: client(t, srv, nil), Native: tc.native,
			ContextBudget: tc.budget, ReplyReserve: 200, Scaffold: llmagent.Scaffold{Reminders: true}}, 8)
		srv.Close()
		calls := map[int]int{} // agent → calls seen so far
		dropped := 0
		for _, req := range srv.Requests() {
			var id int
			fmt.Sscanf(req.Messages[0].Content[strings.Index(req.Messages[0].Content, "Your agent id is "):], "Your agent id is %d", &id)
			round := calls[id] + 1 // every agent calls once per round here
			calls[id]++
			got, err := llmagent.Conversation(out.turns, id, round)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(req.Messages) {
				t.Fatalf("%+v agent %d round %d: %d messages rebuilt, %d sent", tc, id, round, len(got), len(req.Messages))
			}
			for k, m := range req.Messages {
				g := got[k]
				same := g.Role == m.Role && g.Content == m.Content && g.ToolCallID == m.ToolCallID && len(g.ToolCalls) == len(m.ToolCalls)
				for j := range m.ToolCalls {
					same = same && g.ToolCalls[j].ID == m.ToolCalls[j].ID && g.ToolCalls[j].Name == m.ToolCalls[j].Name &&
						g.ToolCalls[j].Arguments == m.ToolCalls[j].Arguments
				}
				if !same {
					t.Fatalf("%+v agent %d round %d message %d differs:\n%+v\n%+v", tc, id, round, k, g, m)
				}
			}
		}
		for _, r := range out.turns {
			dropped = max(dropped, r.Context.DroppedTurns)
		}
		if (tc.budget > 0) != (dropped > 0) {
			t.Errorf("%+v: %d turns dropped", tc, dropped)
		}
	}
}
