package llmctl_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// Every request a model receives is rebuilt from the audit alone, message
// for message, and its hash is the audit's prompt_sha256; under both
// frameworks, with their memory (shared state, history, handoffs) in the
// user message.
func TestRequestRebuiltFromAudit(t *testing.T) {
	p := plant(t, "A3C9-1")
	for _, fw := range llmctl.Frameworks() {
		srv := stubmodel.NewServer(despolicy.Rule)
		c := controller(t, llm.Config{BaseURL: srv.URL, Model: "m", Concurrency: 4}, fw)
		var dec bytes.Buffer
		r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 3, Mode: coord.HeterarchicalCNP(), Controller: c, Decisions: &dec})
		srv.Close()
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		sent := map[string]int{} // the requests received, as their messages' JSON
		for _, req := range srv.Requests() {
			var msgs []llm.Message
			for _, m := range req.Messages {
				msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
			}
			sent[key(t, msgs)]++
		}
		rebuilt, memory := 0, 0
		sc := bufio.NewScanner(&dec)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var a coord.Audit
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			if a.AgentNote == nil || a.PromptSHA256 == "" {
				t.Fatalf("%s: step %d %s: no prompt_sha256", fw, a.Step, a.AgentID)
			}
			msgs, err := llmctl.Request(a.Payload, a.FrameworkState)
			if err != nil {
				t.Fatal(err)
			}
			if got := llmctl.PromptSHA256(msgs); got != a.PromptSHA256 {
				t.Fatalf("%s: step %d %s: rebuilt hash %s, recorded %s", fw, a.Step, a.AgentID, got, a.PromptSHA256)
			}
			k := key(t, msgs)
			if sent[k] == 0 {
				t.Fatalf("%s: step %d %s: the rebuilt request is not one the model received:\n%s", fw, a.Step, a.AgentID, k)
			}
			sent[k]--
			rebuilt++
			if a.FrameworkState != nil && len(*a.FrameworkState) > len(`{"name":"graph"}`) {
				memory++
			}
		}
		if rebuilt != len(srv.Requests()) || memory == 0 {
			t.Errorf("%s: %d requests rebuilt of %d received, %d with framework memory", fw, rebuilt, len(srv.Requests()), memory)
		}
	}
}

// key is the JSON of msgs, a map key.
func key(t *testing.T, msgs []llm.Message) string {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
