package extctl

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A call through the proxy that fails on an unusable reply is recorded
// with that reply's tokens (they were spent) and counts as a billed call
// in the agent's note; one that fails without a reply counts as no call,
// as the LLM controller counts them (sweep's cost files read the notes).
func TestProxyFailedCallsBilled(t *testing.T) {
	up := stubmodel.NewServer(stubmodel.Sequence(stubmodel.NoChoices(70, 5), stubmodel.Status(401, "denied")))
	defer up.Close()
	p, err := NewProxy(ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: up.URL + "/v1"}}, Options: llm.Options{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	tok := p.Issue()
	defer p.Revoke(tok)
	for range 2 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		r.Header.Set("Authorization", "Bearer "+tok)
		p.ServeHTTP(w, r)
		if w.Code != 502 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	calls := p.Take()
	if len(calls) != 2 || !calls[0].Failed || calls[0].PromptTokens != 70 || calls[0].CompletionTokens != 5 || calls[1].PromptTokens != 0 {
		t.Fatalf("calls %+v: want the unusable reply's 70 + 5 tokens, then a call without any", calls)
	}
	notes := map[string]coord.AgentNote{}
	attribute(notes, []string{"plant"}, calls)
	if n := notes["plant"]; n.Calls != 1 || n.PromptTokens != 70 || n.CompletionTokens != 5 {
		t.Errorf("note %+v: want 1 billed call with 70 + 5 tokens", n)
	}
	if tot := p.Totals(); tot.Calls != 2 || tot.Failures != 2 || tot.PromptTokens != 70 {
		t.Errorf("totals %+v", tot)
	}
	// A replayed reply and a call that failed without one: the note is
	// the replay's, cached (free), not a billed call.
	notes = map[string]coord.AgentNote{}
	attribute(notes, []string{"plant"}, []ProxyCall{{Model: "m", PromptTokens: 100, CompletionTokens: 3, Cached: true}, {Model: "m", Failed: true}})
	if n := notes["plant"]; !n.Cached || n.Calls != 1 || n.PromptTokens != 100 {
		t.Errorf("replay and failed call: note %+v; want 1 cached call", n)
	}
	notes = map[string]coord.AgentNote{}
	attribute(notes, []string{"plant"}, []ProxyCall{{Model: "m", Failed: true}})
	if n := notes["plant"]; n.Cached || n.Calls != 0 || n.Model != "m" {
		t.Errorf("one failed call: note %+v; want no call, not cached, model m", n)
	}
}
