package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
)

// showRun runs `silo show` with args and returns its output. It executes
// siloShowCmd directly so the test does not depend on where the command
// is registered.
func showRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := siloShowCmd()
	var out bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs(args)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return out.String(), err
}

func TestSiloShow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := run(t, "silo", "run", "--task", "I-01", "--agents", "3", "--protocol", "p2p", "--out", dir); err != nil {
		t.Fatalf("silo run: %v\n%s", err, out)
	}
	out, err := showRun(t, dir)
	if err != nil {
		t.Fatalf("silo show: %v\n%s", err, out)
	}
	for _, want := range []string{
		"task I-01  N=3  protocol p2p  rounds 3 (max 100)  (rounds numbered from 1)  message order random\n",
		"S 1.000  success true  P 1.000",
		"== Round 1 ==\n",
		"  agent 1 → agent 0  send_message: \"{\"kind\":\"shard\"",
		"== Round 2 ==\n  agent 0 ← receive_messages: 2 messages (from 1, 2)\n",
		"  agent 0 SUBMITS 984\n",
		"== Answers ==\nagent 0: 984 (round 2) ✓\nagent 1: 984 (round 3) ✓\nagent 2: 984 (round 3) ✓\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, err = showRun(t, dir, "--round", "3", "--agent", "2", "--width", "10")
	if err != nil || strings.Contains(out, "Round 2") || strings.Contains(out, "agent 1") ||
		!strings.Contains(out, "== Round 3 ==\n  agent 2 ← receive_messages: 1 message (from 0)\n  agent 2 SUBMITS 984\n") {
		t.Errorf("--round 3 --agent 2: %v\n%s", err, out)
	}

	if _, err := showRun(t, filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing directory accepted")
	}
	os.Remove(filepath.Join(dir, "calls.jsonl"))
	if _, err := showRun(t, dir); err == nil || !strings.Contains(err.Error(), "calls.jsonl") {
		t.Errorf("missing calls.jsonl: %v", err)
	}
	if _, err := showRun(t); err == nil {
		t.Error("no DIR accepted")
	}
}

// TestSiloShowLLM shows an LLM run of a suite: a scripted model broadcasts
// once, then submits.
func TestSiloShowLLM(t *testing.T) {
	idRE := regexp.MustCompile(`Your agent id is (\d+)\.`)
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		id := "?"
		if m := idRE.FindStringSubmatch(req.Messages[0].Content); m != nil {
			id = m[1]
		}
		if len(req.Messages) <= 2 {
			return stubmodel.Text(fmt.Sprintf("I share my data.\n<tool_call>\n<tool>broadcast_message</tool>\n<parameters><content>hello from %s</content></parameters>\n</tool_call>\n<tool_call>\n<tool>wait</tool>\n<parameters></parameters>\n</tool_call>", id))
		}
		if len(req.Messages) <= 4 {
			return stubmodel.Text("Hmm, no tool call here.")
		}
		return stubmodel.Text("<tool_call>\n<tool>receive_messages</tool>\n<parameters></parameters>\n</tool_call>\n" +
			"<tool_call>\n<tool>submit_result</tool>\n<parameters><answer>0</answer></parameters>\n</tool_call>\n" +
			"<tool_call>\n<tool>wait</tool>\n<parameters></parameters>\n</tool_call>")
	})
	defer srv.Close()
	dir := t.TempDir()
	if out, err := run(t, "silo", "suite", "--agent", "llm", "--tasks", "I-01", "--agents", "2", "--protocols", "broadcast",
		"--llm-model", "m", "--llm-base-url", srv.URL+"/v1", "--out", dir); err != nil {
		t.Fatalf("silo suite: %v\n%s", err, out)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "runs", "*__n2__*"))
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	out, err := showRun(t, runs[0], "--replies")
	if err != nil {
		t.Fatalf("silo show: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Log(out)
	}
	for _, want := range []string{
		"task I-01  N=2  protocol broadcast  rounds 3 (max 100)  (rounds numbered from 1)  message order random\n",
		"requests: no temperature (server default); tool format xml, tool results published\n",
		"model tokens in ",
		"== Round 1 ==\nagent 0: [in ",
		"    reply: I share my data.⏎<tool_call>⏎",
		"  agent 0 ⇒ all  broadcast_message: \"hello from 0\"\n  agent 0 waits\n",
		"agent 1: reply had no valid tool call (wasted) [in ",
		"    reply: Hmm, no tool call here.\n",
		"  agent 1 ← receive_messages: 1 message (from 0)\n  agent 1 SUBMITS 0\n  (1 call after the turn ended was not executed)\n",
		"agent 0: 0 (round 3) ✗",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, err = showRun(t, runs[0], "--prompts", "--round", "1", "--agent", "0", "--width", "40")
	if err != nil || !strings.Contains(out, "    > system: ") || !strings.Contains(out, "    > user: ") || strings.Contains(out, "reply:") {
		t.Errorf("--prompts: %v\n%s", err, out)
	}
	// --request rebuilds the whole conversation of a call: round 2 holds the
	// prompts, the round-1 reply and its tool results.
	out, err = showRun(t, runs[0], "--request", "--round", "2", "--agent", "1", "--width", "40")
	for _, want := range []string{"agent 1, round 2 (rounds numbered from 1): 4 messages sent",
		"with no temperature (server default); tool format xml, tool results published", "[0 system] ", "[1 user] ", "[2 assistant] ", "[3 user] "} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("--request: missing %q (%v)\n%s", want, err, out)
		}
	}
	if _, err := showRun(t, runs[0], "--request", "--round", "2"); err == nil {
		t.Error("--request without --agent accepted")
	}
}

// TestSiloRunSampling: by default a request carries no sampling parameter,
// as the published call; --temperature sends it; result.json records what
// was sent, and silo show --request says it (issue 27 item 3).
func TestSiloRunSampling(t *testing.T) {
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Text("<tool_call>\n<tool>submit_result</tool>\n<parameters><answer>é 1</answer></parameters>\n</tool_call>")
	})
	defer srv.Close()
	for _, c := range []struct {
		flags []string
		want  string // the temperature of every body, "" for none; result.json's
		rec   string
		show  string
	}{
		{nil, "", `"temperature":null`, "with no temperature (server default); tool format xml, tool results published"},
		{[]string{"--temperature", "0.7"}, "0.7", `"temperature":0.7`, "with temperature 0.7; tool format xml, tool results published"},
		{[]string{"--llm-temperature", "0", "--tool-results", "compact"}, "0", `"temperature":0`, "with temperature 0; tool format xml, tool results compact"},
	} {
		before := len(srv.Requests())
		dir := filepath.Join(t.TempDir(), "run")
		args := append([]string{"silo", "run", "--agent", "llm", "--task", "I-01", "--agents", "2", "--max-rounds", "1",
			"--llm-model", "m", "--llm-base-url", srv.URL + "/v1", "--out", dir}, c.flags...)
		if out, err := run(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s", c.flags, err, out)
		}
		reqs := srv.Requests()[before:]
		if len(reqs) != 2 {
			t.Fatalf("%v: %d requests, want 2", c.flags, len(reqs))
		}
		for _, r := range reqs {
			got := ""
			if r.Temperature != nil {
				got = fmt.Sprint(*r.Temperature)
			}
			if got != c.want || strings.Contains(string(r.Body), "top_p") {
				t.Errorf("%v: body %s: temperature %q, want %q", c.flags, r.Body, got, c.want)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		var res struct{ Requests []json.RawMessage }
		if err == nil {
			err = json.Unmarshal(b, &res)
		}
		if err != nil || len(res.Requests) != 1 || !strings.Contains(compactJSON(t, res.Requests[0]), "{"+c.rec+`,"tool_format":"xml"`) {
			t.Errorf("%v: result.json does not record %s: %v\n%s", c.flags, c.rec, err, b)
		}
		out, err := showRun(t, dir, "--request", "--round", "1", "--agent", "0")
		if err != nil || !strings.Contains(out, c.show+"\n") {
			t.Errorf("%v: silo show --request: %v\n%s", c.flags, err, out)
		}
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
