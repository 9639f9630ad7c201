package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
)

// writeRun writes a run directory: result.json, calls.jsonl and, if turns
// is non-nil, turns.jsonl (in llmagent's JSON shape).
func writeRun(t *testing.T, res round.Result, calls []proto.LogEntry, turns []llmagent.TurnRecord) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileResult), b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeLines(t, filepath.Join(dir, FileCalls), calls)
	if turns != nil {
		writeLines(t, filepath.Join(dir, FileTurns), turns)
	}
	return dir
}

func writeLines[T any](t *testing.T, path string, recs []T) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func show(t *testing.T, dir string, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, dir, opt); err != nil {
		t.Fatalf("Write: %v\n%s", err, b.String())
	}
	return b.String()
}

func all() Options { return Options{Agent: AllAgents} }

func entry(rnd, agent, seq int, tool, args, result, errMsg string) proto.LogEntry {
	return proto.LogEntry{Round: rnd, Agent: agent, Seq: seq, Tool: tool,
		Args: json.RawMessage(args), Result: json.RawMessage(result), Error: errMsg}
}

func twoAgents(p proto.Protocol) round.Result {
	return round.Result{
		Task: "I-01", N: 2, Protocol: p, MaxRounds: 100, Rounds: 2, S: 0.5, P: 0.5,
		Agents: []round.AgentResult{
			{ID: 0, Submitted: true, Answer: json.RawMessage("984"), Round: 2, Correct: true},
			{ID: 1, Answer: json.RawMessage("null"), Labels: []string{round.LabelNoSubmission}},
		},
	}
}

// wantLines checks that out holds each line, in order.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	rest := out
	for _, l := range lines {
		i := strings.Index(rest, l+"\n")
		if i < 0 {
			t.Fatalf("missing (or out of order) line %q in\n%s", l, out)
		}
		rest = rest[i+len(l):]
	}
}

func TestShowP2P(t *testing.T) {
	dir := writeRun(t, twoAgents(proto.P2P), []proto.LogEntry{
		entry(1, 0, 0, "wait", `{}`, `{"status":"waiting"}`, ""),
		entry(1, 1, 0, "send_message", `{"content":"DATA 1 [1, 2, 3]","target_id":0}`, `{"success":true,"message":"Message sent to agent 0"}`, ""),
		entry(1, 1, 1, "send_message", `{"content":"x","target_id":7}`, `{"error":"Invalid target agent 7"}`, "Invalid target agent 7"),
		entry(1, 1, 2, "send_message", `{"content":"line one\nline two","target_id":0}`, `{"success":true,"message":"Message sent to agent 0"}`, ""),
		entry(1, 1, 3, "wait", `{}`, `{"status":"waiting"}`, ""),
		entry(2, 0, 0, "receive_messages", `{}`, `{"messages":[{"from":1,"content":"DATA 1 [1, 2, 3]","timestamp":1},{"from":1,"content":"y","timestamp":1}]}`, ""),
		entry(2, 0, 1, "submit_result", `{"answer":984}`, `{"status":"submitted"}`, ""),
		entry(2, 1, 0, "receive_messages", `{}`, `{"messages":[]}`, ""),
		entry(2, 1, 1, "frobnicate", `{"x":1}`, `{"success":true}`, ""),
	}, nil)
	out := show(t, dir, all())
	wantLines(t, out,
		"task I-01  N=2  protocol p2p  rounds 2 (max 100)  (rounds numbered from 1)",
		"S 0.500  success false  P 0.500  tool calls 0  messages 0",
		"== Round 1 ==",
		"  agent 0 waits",
		`  agent 1 → agent 0  send_message: "DATA 1 [1, 2, 3]"`,
		"  agent 1 ✗ send_message: Invalid target agent 7",
		`  agent 1 → agent 0  send_message: "line one⏎line two"`,
		"  agent 1 waits",
		"== Round 2 ==",
		"  agent 0 ← receive_messages: 2 messages (from 1)",
		"  agent 0 SUBMITS 984",
		"  agent 1 ← receive_messages: no messages",
		`  agent 1 calls frobnicate({"x":1})`,
		"== Answers ==",
		"agent 0: 984 (round 2) ✓",
		"agent 1: no answer ✗  no_submission",
	)
	if strings.Contains(out, "model tokens") {
		t.Error("scripted run shows model tokens")
	}
	// Deterministic.
	if again := show(t, dir, all()); again != out {
		t.Error("two renderings differ")
	}
}

func TestShowBroadcast(t *testing.T) {
	dir := writeRun(t, twoAgents(proto.Broadcast), []proto.LogEntry{
		entry(1, 0, 0, "broadcast_message", `{"content":"hello all"}`, `{"success":true,"broadcast_id":"r1-a0-s0"}`, ""),
		entry(1, 1, 0, "broadcast_message", `{"content":"`+strings.Repeat("é", 30)+`"}`, `{"success":true,"broadcast_id":"r1-a1-s0"}`, ""),
		entry(2, 0, 0, "receive_messages", `{}`, `{"messages":[{"from":3,"content":"a","timestamp":1},{"from":1,"content":"b","timestamp":1},{"from":3,"content":"c","timestamp":1}]}`, ""),
		entry(2, 0, 1, "submit_result", `{"answer":{"k":[1,2]}}`, `{"status":"submitted"}`, ""),
	}, nil)
	out := show(t, dir, Options{Agent: AllAgents, Width: 10})
	wantLines(t, out,
		`  agent 0 ⇒ all  broadcast_message: "hello all"`,
		`  agent 1 ⇒ all  broadcast_message: "éééééééééé…"`,
		"  agent 0 ← receive_messages: 3 messages (from 1, 3)",
		`  agent 0 SUBMITS {"k":[1,2]…`,
	)
	full := show(t, dir, Options{Agent: AllAgents, Width: 10, Full: true})
	if !strings.Contains(full, `"`+strings.Repeat("é", 30)+`"`) {
		t.Errorf("--full clipped:\n%s", full)
	}
}

func TestShowSFS(t *testing.T) {
	dir := writeRun(t, twoAgents(proto.SFS), []proto.LogEntry{
		entry(1, 0, 0, "list_agents", `{}`, `{"agent_ids":[0,1],"total":2}`, ""),
		entry(1, 0, 1, "read_file", `{"path":"data_9"}`, `{"success":false,"content":null,"metadata":{},"error":"Key not found: data_9"}`, ""),
		entry(1, 1, 0, "write_file", `{"content":"one two","path":"data_1"}`, `{"success":true,"path":"data_1"}`, ""),
		entry(1, 1, 1, "write_file", `{"content":[1,2,3],"path":"data_3"}`, `{"success":true,"path":"data_3"}`, ""),
		entry(2, 0, 0, "list_files", `{}`, `{"files":[{"path":"data_1","modified_by":1,"modified_at_round":1},{"path":"data_3","modified_by":1,"modified_at_round":1}]}`, ""),
		entry(2, 0, 1, "list_files", `{"prefix":"data_"}`, `{"files":[]}`, ""),
		entry(2, 0, 2, "read_file", `{"path":"data_3"}`, `{"success":true,"content":[1,2,3],"metadata":{"modified_by":1,"modified_at_round":1}}`, ""),
		entry(2, 0, 3, "delete_file", `{"path":"data_1"}`, `{"success":true,"path":"data_1"}`, ""),
		entry(2, 0, 4, "delete_file", `{"path":"nope"}`, `{"success":false,"error":"Key not found: nope"}`, ""),
		entry(2, 0, 5, "write_file", `{"oversized_args_bytes":999999}`, `{"error":"arguments too large"}`, "arguments too large"),
	}, nil)
	out := show(t, dir, all())
	wantLines(t, out,
		"  agent 0 lists agents: 2",
		"  agent 0 reads data_9: not found",
		`  agent 1 writes data_1: "one two"`,
		"  agent 1 writes data_3: [1,2,3]",
		"  agent 0 lists files: 2",
		`  agent 0 lists files "data_": 0`,
		"  agent 0 reads data_3 (by agent 1, round 1)",
		"  agent 0 deletes data_1",
		"  agent 0 deletes nope: not found",
		"  agent 0 ✗ write_file: arguments too large",
	)
}

func TestShowFilters(t *testing.T) {
	dir := writeRun(t, twoAgents(proto.P2P), []proto.LogEntry{
		entry(1, 0, 0, "wait", `{}`, `{"status":"waiting"}`, ""),
		entry(1, 1, 0, "wait", `{}`, `{"status":"waiting"}`, ""),
		entry(2, 0, 0, "submit_result", `{"answer":984}`, `{"status":"submitted"}`, ""),
		entry(2, 1, 0, "wait", `{}`, `{"status":"waiting"}`, ""),
		// A malformed line after the selected round is never reached.
	}, nil)
	f, _ := os.OpenFile(filepath.Join(dir, FileCalls), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{broken\n")
	f.Close()

	out := show(t, dir, Options{Agent: AllAgents, Round: 1})
	if !strings.Contains(out, "== Round 1 ==") || strings.Contains(out, "== Round 2 ==") {
		t.Errorf("--round 1:\n%s", out)
	}
	if !strings.Contains(out, "agent 1: no answer") {
		t.Errorf("--round drops the answers:\n%s", out)
	}
	var b bytes.Buffer
	if err := Write(&b, dir, Options{Agent: 1}); err == nil || !strings.Contains(err.Error(), "calls.jsonl:5:") {
		t.Errorf("want a calls.jsonl:5 error, got %v", err)
	}
	if !strings.Contains(b.String(), "  agent 1 waits") || strings.Contains(b.String(), "agent 0 ") {
		t.Errorf("--agent 1 before the error:\n%s", b.String())
	}
	writeLines(t, filepath.Join(dir, FileCalls), []proto.LogEntry{
		entry(2, 0, 0, "submit_result", `{"answer":984}`, `{"status":"submitted"}`, ""),
		entry(2, 1, 0, "wait", `{}`, `{"status":"waiting"}`, ""),
	})
	out = show(t, dir, Options{Agent: 0, Round: 2})
	wantLines(t, out, "== Round 2 ==", "  agent 0 SUBMITS 984", "== Answers ==", "agent 0: 984 (round 2) ✓")
	if strings.Contains(out, "agent 1") || strings.Contains(out, "Round 1") {
		t.Errorf("--agent 0 --round 2:\n%s", out)
	}
}

func TestShowLLMTurns(t *testing.T) {
	res := twoAgents(proto.P2P)
	res.Usage = &round.Usage{ModelCalls: 5, InputTokens: 1234, OutputTokens: 56, WastedCalls: 1, ModelErrors: 1}
	c, cc := 0.56, 645.0
	res.C, res.CCode = &c, &cc
	refused, _ := json.Marshal(map[string]string{"error": "submit_result is not allowed in the planning round"})
	turns := []llmagent.TurnRecord{
		{
			Round: 1, Agent: 0,
			Input: []llm.Message{
				{Role: "system", Content: "You are agent 0.\nThe team has 2 agents."},
				{Role: "user", Content: "Task: add up the numbers."},
			},
			Reply: "I will tell agent 1.\n<tool_call>...</tool_call>",
			Calls: []llmagent.CallRecord{
				{Tool: "send_message", Args: json.RawMessage(`{"target_id":1,"content":"DATA 0 [1, 2]"}`), Result: json.RawMessage(`{"success":true,"message":"Message sent to agent 1"}`), Executed: true},
				{Tool: "submit_result", Args: json.RawMessage(`{"answer":3}`), Result: refused},
				{Tool: "wait", Args: json.RawMessage(`{}`), Result: json.RawMessage(`{"status":"waiting"}`), Executed: true},
			},
			Dropped: 2, Outcome: llmagent.OutcomeOK,
			Usage: llm.Usage{PromptTokens: 1000, CompletionTokens: 40},
		},
		{
			Round: 1, Agent: 1, Reply: "Let me think about it.",
			Outcome: llmagent.OutcomeNoToolCall, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10},
		},
		{
			Round: 2, Agent: 0,
			Input: []llm.Message{
				{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "wait", Arguments: "{}"}}},
				{Role: "tool", ToolCallID: "c1", Content: `{"status":"waiting"}`},
			},
			ReplyToolCalls: []llmagent.ReplyCall{{ToolCall: llm.ToolCall{ID: "c2", Name: "send_message"}}},
			Calls: []llmagent.CallRecord{
				{Tool: "send_message", Args: json.RawMessage(`{"target_id":1,"content":"a"}`), Result: json.RawMessage(`{"success":true}`), Executed: true},
			},
			Outcome: llmagent.OutcomeCapped, Usage: llm.Usage{PromptTokens: 120, CompletionTokens: 6},
		},
		{
			Round: 2, Agent: 1, Outcome: llmagent.OutcomeModelError, Error: "HTTP 503: overloaded",
		},
	}
	// calls.jsonl is ignored when turns.jsonl is present.
	dir := writeRun(t, res, []proto.LogEntry{entry(1, 0, 0, "wait", `{}`, `{}`, "")}, turns)
	out := show(t, dir, all())
	wantLines(t, out,
		"model tokens in 1234 / out 56  C 0.56  C_code 645.00  wasted 1  model errors 1",
		"== Round 1 ==",
		"agent 0: [in 1000 / out 40 tok]",
		`  agent 0 → agent 1  send_message: "DATA 0 [1, 2]"`,
		"  agent 0 SUBMITS 3 (refused by harness: submit_result is not allowed in the planning round)",
		"  agent 0 waits",
		"  (2 calls after the turn ended were not executed)",
		"agent 1: reply had no valid tool call (wasted) [in 100 / out 10 tok]",
		"== Round 2 ==",
		"agent 0: turn capped [in 120 / out 6 tok]",
		`  agent 0 → agent 1  send_message: "a"`,
		"agent 1: model error: HTTP 503: overloaded [in 0 / out 0 tok]",
	)
	if strings.Contains(out, "reply:") || strings.Contains(out, "> system") {
		t.Errorf("replies or prompts shown by default:\n%s", out)
	}

	out = show(t, dir, Options{Agent: AllAgents, Replies: true, Prompts: true, Width: 20})
	wantLines(t, out,
		"agent 0: [in 1000 / out 40 tok]",
		"    > system: You are agent 0.⏎The…",
		"    > user: Task: add up the num…",
		"    reply: I will tell agent 1.…",
		`  agent 0 → agent 1  send_message: "DATA 0 [1, 2]"`,
		"  agent 0 SUBMITS 3 (refused by harness: submit_result is not…)",
		"agent 1: reply had no valid tool call (wasted) [in 100 / out 10 tok]",
		"    reply: Let me think about i…",
		"agent 0: turn capped [in 120 / out 6 tok]",
		"    > assistant: tool call wait({})",
		`    > tool c1: {"status":"waiting"}`,
		"    reply: (1 native tool call)",
		"agent 1: model error: HTTP 503: overloaded [in 0 / out 0 tok]",
		"    reply: (empty)",
	)

	out = show(t, dir, Options{Agent: 0, Round: 1, Replies: true, Prompts: true, Full: true})
	wantLines(t, out,
		"    > system: You are agent 0.",
		"              The team has 2 agents.",
		"    reply: I will tell agent 1.",
		"           <tool_call>...</tool_call>",
	)

	// A malformed turn record is reported with its line number.
	p := filepath.Join(dir, FileTurns)
	b, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = `{"round": "two"}` + "\n"
	os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	err := Write(&bytes.Buffer{}, dir, all())
	if err == nil || !strings.Contains(err.Error(), "turns.jsonl:3:") {
		t.Errorf("want a turns.jsonl:3 error, got %v", err)
	}
}

func TestShowMissingFiles(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, filepath.Join(t.TempDir(), "nope"), all()); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing dir: %v", err)
	}
	dir := t.TempDir()
	if err := Write(&b, dir, all()); err == nil || !strings.Contains(err.Error(), "result.json: missing") {
		t.Errorf("missing result.json: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileResult), []byte("{"), 0o644)
	if err := Write(&b, dir, all()); err == nil || !strings.Contains(err.Error(), "result.json") {
		t.Errorf("bad result.json: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileResult), []byte("{}"), 0o644)
	if err := Write(&b, dir, all()); err == nil || !strings.Contains(err.Error(), "calls.jsonl: missing") {
		t.Errorf("missing calls.jsonl: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileCalls), []byte(`{"round":1}`+"\n\nnot json\n"), 0o644)
	if err := Write(&b, dir, all()); err == nil || !strings.Contains(err.Error(), "calls.jsonl:3:") {
		t.Errorf("malformed line: %v", err)
	}
}

func TestShowLongLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // beyond bufio.Scanner's default 64 KiB
	dir := writeRun(t, twoAgents(proto.P2P), []proto.LogEntry{
		entry(1, 0, 0, "send_message", `{"content":"`+big+`","target_id":1}`, `{"success":true}`, ""),
	}, nil)
	out := show(t, dir, all())
	if !strings.Contains(out, `send_message: "`+strings.Repeat("x", DefaultWidth)+`…"`) {
		t.Errorf("long line:\n%.500s", out)
	}
}

// A log line longer than the bound fails with an error that names the
// file, the line and the bound; the lines before it were read.
func TestShowLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileCalls)
	body := "{}\n\n" + `{"x":"` + strings.Repeat("y", 100) + `"}` + "\n{}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	read := 0
	err := scanJSONLMax(path, 64, func([]byte) (bool, error) { read++; return false, nil })
	if err == nil || !strings.Contains(err.Error(), path+":3:") || !strings.Contains(err.Error(), "longer than 64 bytes") {
		t.Errorf("a line of 108 bytes, bound 64: %v (want an error naming %s:3 and the bound)", err, path)
	}
	if read != 1 {
		t.Errorf("%d lines read before the long one, want 1", read)
	}
}

// The header says the rounds' base, the message order and what the
// requests sent; --request says them for the agent's model.
func TestShowRequestSettings(t *testing.T) {
	res := twoAgents(proto.P2P)
	res.MessageOrder = proto.OrderRandom
	temp := 0.7
	res.Requests = []round.RequestSettings{{ToolFormat: "xml", ToolResults: "published"}}
	turns := []llmagent.TurnRecord{{Round: 1, Agent: 0, Outcome: llmagent.OutcomeOK,
		Input: []llm.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "task"}}}}
	dir := writeRun(t, res, nil, turns)
	wantLines(t, show(t, dir, all()),
		"task I-01  N=2  protocol p2p  rounds 2 (max 100)  (rounds numbered from 1)  message order random",
		"requests: no temperature (server default); tool format xml, tool results published",
		"== Round 1 ==")
	request := func(dir string) string {
		var b bytes.Buffer
		if err := WriteRequest(&b, dir, 0, 1, Options{Full: true}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	wantLines(t, request(dir),
		"agent 0, round 1 (rounds numbered from 1): 2 messages sent",
		"with no temperature (server default); tool format xml, tool results published")
	res.Requests = []round.RequestSettings{{Model: "a", Temperature: &temp, MaxTokens: 64, ToolFormat: "xml", ToolResults: "compact"},
		{Model: "b", ToolFormat: "xml", ToolResults: "published"}}
	turns[0].Model = "a"
	dir = writeRun(t, res, nil, turns)
	wantLines(t, show(t, dir, all()),
		"requests of model a: temperature 0.7, max_completion_tokens 64; tool format xml, tool results compact",
		"requests of model b: no temperature (server default); tool format xml, tool results published")
	wantLines(t, request(dir), "with temperature 0.7, max_completion_tokens 64; tool format xml, tool results compact")
	res.Requests = nil // a run from before they were recorded
	wantLines(t, request(writeRun(t, res, nil, turns)), "with settings not recorded (a run from before result.json held them)")
}

// Model replies, message contents, tool names and errors are untrusted:
// what show prints of them reaches the user's terminal with its control
// characters made visible (ESC as ␛), never as escape sequences.
func TestShowNeutralizesControlCharacters(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J\rgone\b\u009b31m\xff"
	res := twoAgents(proto.P2P)
	res.Agents[0].Answer = json.RawMessage(`"\u001b[31m"`)
	turns := []llmagent.TurnRecord{{
		Round: 1, Agent: 0,
		Input: []llm.Message{{Role: "system", Content: "sys " + evil}, {Role: "user", Content: "task"}},
		Reply: "reply " + evil,
		Calls: []llmagent.CallRecord{
			{Tool: "send_message", Args: mustArgs(t, map[string]any{"target_id": 1, "content": "msg " + evil}), Result: json.RawMessage(`{"success":true}`), Executed: true},
			{Tool: "frob" + evil, Args: json.RawMessage(`{}`), Result: mustArgs(t, map[string]string{"error": "err " + evil})},
		},
		ReplyToolCalls: []llmagent.ReplyCall{{ToolCall: llm.ToolCall{ID: "c1" + evil, Name: "send_message", Arguments: `{"content":"` + "\\u001b[2J" + `"}`}}},
		Outcome:        llmagent.OutcomeOK,
	}, {Round: 1, Agent: 1, Outcome: llmagent.OutcomeModelError, Error: "server said " + evil}}
	dir := writeRun(t, res, []proto.LogEntry{entry(1, 0, 0, "send_message", `{"content":"\u001b[2J","target_id":1}`, `{"success":true}`, "")}, turns)
	var outs []string
	for _, opt := range []Options{all(), {Agent: AllAgents, Full: true, Replies: true, Prompts: true}} {
		outs = append(outs, show(t, dir, opt))
	}
	var b bytes.Buffer
	if err := WriteRequest(&b, dir, 0, 1, Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	outs = append(outs, b.String())
	os.Remove(filepath.Join(dir, FileTurns)) // the scripted-run path: calls.jsonl
	outs = append(outs, show(t, dir, Options{Agent: AllAgents, Full: true}))
	for i, out := range outs {
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 {
				t.Errorf("output %d: control character %U in\n%q", i, r, out)
				break
			}
		}
		if !strings.Contains(out, "␛") {
			t.Errorf("output %d: the escape is not shown:\n%s", i, out)
		}
	}
}

func mustArgs(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShowMixedTeamAndConsensus: a mixed team's run names each model in the
// header and in every turn; the consensus helper's calls read as what
// they do.
func TestShowMixedTeamAndConsensus(t *testing.T) {
	res := twoAgents(proto.P2P)
	res.ByModel = []round.ModelResult{{Model: "a", Agents: []int{0}, Correct: 1, Usage: &round.Usage{InputTokens: 10, OutputTokens: 2}},
		{Model: "b", Agents: []int{1}}}
	dir := writeRun(t, res, []proto.LogEntry{
		entry(1, 0, 0, "propose_answer", `{"value":984}`, `{"success":true,"proposal_id":"r1-a0-s0"}`, ""),
		entry(2, 1, 0, "vote", `{"proposal_id":"r1-a0-s0","agree":false}`, `{"success":true,"proposal_id":"r1-a0-s0","agree":false}`, ""),
		entry(2, 1, 1, "vote", `{"proposal_id":"r1-a0-s0"}`, `{"success":true,"proposal_id":"r1-a0-s0","agree":true}`, ""),
	}, []llmagent.TurnRecord{
		{Round: 1, Agent: 0, Model: "a", Outcome: llmagent.OutcomeOK, Calls: []llmagent.CallRecord{
			{Tool: "propose_answer", Args: json.RawMessage(`{"value":984}`), Result: json.RawMessage(`{"success":true,"proposal_id":"r1-a0-s0"}`), Executed: true}}},
		{Round: 2, Agent: 1, Model: "b", Outcome: llmagent.OutcomeOK, Calls: []llmagent.CallRecord{
			{Tool: "vote", Args: json.RawMessage(`{"proposal_id":"r1-a0-s0","agree":false}`), Result: json.RawMessage(`{"success":true}`), Executed: true},
			{Tool: "vote", Args: json.RawMessage(`{"proposal_id":"r1-a0-s0"}`), Result: json.RawMessage(`{"success":true}`), Executed: true}}}})
	out := show(t, dir, all())
	wantLines(t, out,
		"model a: agents 0, 1 of 1 correct, tokens in 10 / out 2",
		"model b: agents 1, 0 of 1 correct",
		"agent 0: (a) [in 0 / out 0 tok]",
		`  agent 0 ⇒ all  propose_answer r1-a0-s0: 984`,
		"agent 1: (b) [in 0 / out 0 tok]",
		"  agent 1 ⇒ all  vote: disagrees with r1-a0-s0",
		"  agent 1 ⇒ all  vote: agrees with r1-a0-s0",
	)
}
