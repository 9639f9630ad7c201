package llmctl_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/payloadschema"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// chattyForms are the ways the chatty model words its (rule) choice, and
// how the published rule reads each.
var chattyForms = []struct{ format, parse string }{
	{`{"action": %d}`, "exact"},
	{"```json\n{\"action\": %d}\n```", "fenced_json"},
	{`{"action": %d, "reason": "least backlog"}`, "json"},
	{"%d", "bare_integer"},
	{"I choose action %d.", "in_text"},
	{"Best is %d, the least loaded cell.", "in_text"},
}

// chattyModel answers every payload with the rule controller's choice,
// worded in a form picked by a hash of the prompt (so the same prompt gets
// the same words, whatever the call order); served counts the forms.
func chattyModel(t *testing.T) (url string, served func() map[string]int) {
	var mu sync.Mutex
	count := map[string]int{}
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		user := req.Messages[len(req.Messages)-1].Content
		v, err := llmctl.ParseView(user)
		if err != nil {
			return stubmodel.Status(400, err.Error())
		}
		a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
		h := fnv.New64a()
		h.Write([]byte(user))
		f := chattyForms[h.Sum64()%uint64(len(chattyForms))]
		mu.Lock()
		count[f.format]++
		mu.Unlock()
		return stubmodel.Text(fmt.Sprintf(f.format, a[v.AgentID]))
	})
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, n := range count {
			out[k] = n
		}
		return out
	}
}

// End to end (prompt, HTTP, parsing, audit): a model that words its
// choices in code fences, with reasons, bare or in sentences is read as
// the paper reads it by default, so the run decides exactly as the rule
// controller and nothing falls back; under strict parsing every reply but
// the exact contract is a fallback. Every audit matches the schema.
func TestReplyFormsEndToEnd(t *testing.T) {
	auditSchema, err := payloadschema.Def("Audit")
	if err != nil {
		t.Fatal(err)
	}
	p := plant(t, "A3C9-1")
	mode := coord.HeterarchicalCNP()
	var want bytes.Buffer
	harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: policy.Rule{}, Trace: &want})
	for _, rule := range llmctl.ReplyParsings() {
		url, served := chattyModel(t)
		c := controller(t, llm.Config{BaseURL: url, Model: "chatty", Concurrency: 4}, "graph")
		if err := c.SetReplyParsing(rule); err != nil {
			t.Fatal(err)
		}
		var trace, dec bytes.Buffer
		r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: c, Trace: &trace, Decisions: &dec})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		m, forms := r.Metrics, served()
		exact := forms[chattyForms[0].format]
		for _, f := range chattyForms {
			if forms[f.format] == 0 {
				t.Fatalf("%s: the model never answered %q: %v", rule, f.format, forms)
			}
		}
		parses := map[string]int{}
		err := payloadschema.ValidateLines(auditSchema, bytes.NewReader(dec.Bytes()), func(v any) {
			a := v.(map[string]any)
			if p, ok := a["parse"].(string); ok {
				parses[p]++
				if a["source"] != "llm" {
					t.Errorf("%s: parse %q on a %v decision", rule, p, a["source"])
				}
			}
		})
		if err != nil {
			t.Fatalf("%s: decisions.jsonl does not match the schema: %v", rule, err)
		}
		if rule == llmctl.ParsingPublished {
			if !bytes.Equal(want.Bytes(), trace.Bytes()) {
				t.Errorf("published: the trace differs from the rule controller's")
			}
			if m.GFb != 0 || m.GLlm != m.Secondary.Decisions {
				t.Errorf("published: G_llm %d G_fb %d of %d decisions; forms %v", m.GLlm, m.GFb, m.Secondary.Decisions, forms)
			}
			wantParses := map[string]int{}
			for _, f := range chattyForms {
				wantParses[f.parse] += forms[f.format]
			}
			if fmt.Sprint(parses) != fmt.Sprint(wantParses) {
				t.Errorf("published: audited parses %v, want %v", parses, wantParses)
			}
			continue
		}
		if m.GLlm != exact || m.GFb != m.Secondary.Decisions-exact || parses["exact"] != exact || len(parses) != 1 {
			t.Errorf("strict: G_llm %d G_fb %d of %d decisions, %d exact replies, parses %v", m.GLlm, m.GFb, m.Secondary.Decisions, exact, parses)
		}
		for _, reason := range []string{"unusable reply: code fence", "unusable reply: not a single JSON object", "unusable reply: not the contract object"} {
			if !strings.Contains(dec.String(), reason) {
				t.Errorf("strict: no fallback audited with %q", reason)
			}
		}
	}
}
