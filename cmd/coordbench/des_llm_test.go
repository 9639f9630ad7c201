package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// ruleModel is a recording stub model that answers every des prompt with
// the contract's reply, as the rule controller would decide.
func ruleModel(t *testing.T) *stubmodel.Server {
	t.Helper()
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		v, err := llmctl.ParseView(req.Messages[len(req.Messages)-1].Content)
		if err != nil {
			return stubmodel.Status(400, err.Error())
		}
		a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
		return stubmodel.Text(fmt.Sprintf(`{"action": %d}`, a[v.AgentID]))
	})
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
