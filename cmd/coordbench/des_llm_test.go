package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// ruleModel is a recording stub model that answers every des prompt with
// the contract's reply, as the rule controller would decide.
func ruleModel(t *testing.T) *stubmodel.Server {
	t.Helper()
	srv := stubmodel.NewServer(despolicy.Rule)
	t.Cleanup(srv.Close)
	return srv
}

// desLLMRun runs one LLM episode of A3C9-1 against the model at url into
// dir, with extra flags.
func desLLMRun(t *testing.T, url, dir string, extra ...string) {
	t.Helper()
	args := append([]string{"des", "run", "--instance", "A3C9-1", "--paradigm", "centralized", "--seed", "1",
		"--controller", "llm", "--llm-model", "m", "--llm-base-url", url, "--out", dir}, extra...)
	if out, err := run(t, args...); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// The des LLM controller sends no output cap by default (a reasoning
// model would spend a small one thinking, and never answer); the request
// carries max_completion_tokens only when --llm-max-tokens is given.
func TestDesMaxTokensDefaultIsNoCap(t *testing.T) {
	srv := ruleModel(t)
	desLLMRun(t, srv.URL, filepath.Join(t.TempDir(), "run"))
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model call")
	}
	for _, r := range reqs {
		if r.MaxCompletionTokens != nil || r.MaxTokens != nil {
			t.Fatalf("request %d by default: max_completion_tokens %v, max_tokens %v (want neither sent)", r.Seq, r.MaxCompletionTokens, r.MaxTokens)
		}
	}

	capped := ruleModel(t)
	desLLMRun(t, capped.URL, filepath.Join(t.TempDir(), "run"), "--llm-max-tokens", "300")
	for _, r := range capped.Requests() {
		if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 300 {
			t.Fatalf("request %d with --llm-max-tokens 300: max_completion_tokens %v", r.Seq, r.MaxCompletionTokens)
		}
	}
}

// des show --request rebuilds, from decisions.jsonl alone, the request
// the model received for a decision, byte for byte, and checks it against
// the audit's prompt_sha256; a tampered audit fails the check, a built-in
// decision has no request; a replay from the cache writes the same
// decisions.jsonl.
func TestDesShowRequest(t *testing.T) {
	srv := ruleModel(t)
	tmp := t.TempDir()
	dir, cache := filepath.Join(tmp, "run"), filepath.Join(tmp, "cache.db")
	desLLMRun(t, srv.URL, dir, "--llm-cache", cache)
	decisions := filepath.Join(dir, harness.FileDecisions)
	live := mustRead(t, decisions)

	// The last decision whose user message holds framework memory.
	var pick coord.Audit
	for _, line := range bytes.Split(bytes.TrimSpace(live), []byte("\n")) {
		var a coord.Audit
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if a.AgentNote != nil && a.FrameworkState != nil && bytes.Contains(*a.FrameworkState, []byte("shared_state")) {
			pick = a
		}
	}
	if pick.AgentNote == nil {
		t.Fatal("no decision with framework memory")
	}
	var sent []stubmodel.Message
	for _, r := range srv.Requests() {
		msgs := []llm.Message{}
		for _, m := range r.Messages {
			msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
		}
		if llmctl.PromptSHA256(msgs) == pick.PromptSHA256 {
			sent = r.Messages
		}
	}
	if len(sent) != 2 {
		t.Fatalf("the stub received no request hashing to step %d %s's prompt_sha256 %s", pick.Step, pick.AgentID, pick.PromptSHA256)
	}
	step := strconv.Itoa(pick.Step)
	out, err := run(t, "des", "show", dir, "--step", step, "--agent", pick.AgentID, "--request")
	want := fmt.Sprintf("[0 system] %s\n[1 user] %s\nprompt_sha256 %s: the rebuilt messages are the ones sent\n", sent[0].Content, sent[1].Content, pick.PromptSHA256)
	if err != nil || !strings.HasSuffix(out, want) || sent[0].Role != "system" || sent[1].Role != "user" {
		t.Fatalf("des show --request: %v\n%s\nwant it to end with\n%s", err, out, want)
	}

	// The listing shows the decision; a tampered memory fails the check.
	if out, err := run(t, "des", "show", dir, "--step", step, "--agent", pick.AgentID); err != nil ||
		!strings.Contains(out, fmt.Sprintf("step %s  t=", step)) || !strings.Contains(out, pick.AgentID+" (") || !strings.Contains(out, `reply: {"action": `) {
		t.Errorf("des show --step --agent: %v\n%s", err, out)
	}
	tampered := bytes.Replace(live, *pick.FrameworkState, bytes.Replace(*pick.FrameworkState, []byte("t="), []byte("t=9"), 1), 1)
	if bytes.Equal(tampered, live) {
		t.Fatal("nothing tampered")
	}
	if err := os.WriteFile(decisions, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "des", "show", dir, "--step", step, "--agent", pick.AgentID, "--request"); err == nil || !strings.Contains(err.Error(), "not the request as sent") {
		t.Errorf("a tampered audit: %v\n%s", err, out)
	}
	if _, err := run(t, "des", "show", dir, "--request", "--step", step); err == nil || !strings.Contains(err.Error(), "--request needs --step and --agent") {
		t.Errorf("--request without --agent: %v", err)
	}

	// A replay from the cache writes the same audit, hashes and memory included.
	replay, calls := filepath.Join(tmp, "replay"), len(srv.Requests())
	desLLMRun(t, srv.URL, replay, "--llm-cache", cache, "--llm-cache-mode", "replay")
	if !bytes.Equal(live, mustRead(t, filepath.Join(replay, harness.FileDecisions))) || len(srv.Requests()) != calls {
		t.Errorf("the replay's decisions.jsonl differs from the live run's, or it called the model (%d calls, %d before)", len(srv.Requests()), calls)
	}

	// A built-in controller's decision has no request.
	rule := filepath.Join(tmp, "rule")
	if out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "centralized", "--seed", "1", "--out", rule); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := run(t, "des", "show", rule, "--step", "0", "--agent", "plant", "--request"); err == nil || !strings.Contains(err.Error(), "no request to rebuild") {
		t.Errorf("a built-in decision: %v", err)
	}
}
