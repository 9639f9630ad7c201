package extctl_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// The proxy forwards tools, tool_choice, response_format and a
// conversation's tool calls and results to its upstream (here the generic
// stub played in-process, --llm-proxy-upstream stub:generic), and returns
// the model's tool calls in OpenAI's shape.
func TestProxyForwardsTools(t *testing.T) {
	p, err := extctl.NewProxy(extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: "stub:generic"}},
		Options: llm.Options{Stubs: stubmodel.Policies{stubmodel.GenericPolicy()}, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tok := p.Issue()
	post := func(body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%d: %s", res.StatusCode, b)
		}
		var out struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("%s: %v", b, err)
		}
		return out.Choices[0].Message
	}
	tools := `"tools":[{"type":"function","function":{"name":"choose","parameters":{"type":"object","properties":{"index":{"type":"integer","enum":[4,7]}},"required":["index"]}}}]`
	m := post(`{"model":"m","messages":[{"role":"user","content":"choose"}],` + tools + `,"tool_choice":{"type":"function","function":{"name":"choose"}}}`)
	calls, _ := m["tool_calls"].([]any)
	if len(calls) != 1 || m["content"] != nil {
		t.Fatalf("message %v", m)
	}
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	var args struct{ Index int }
	if fn["name"] != "choose" || json.Unmarshal([]byte(fn["arguments"].(string)), &args) != nil || (args.Index != 4 && args.Index != 7) {
		t.Errorf("call %v", calls[0])
	}
	id := calls[0].(map[string]any)["id"].(string)
	// The conversation goes on with the call and its result: under auto
	// the model now answers in text.
	m = post(`{"model":"m","messages":[{"role":"user","content":"choose"},{"role":"assistant","content":null,"tool_calls":[{"id":"` + id +
		`","type":"function","function":{"name":"choose","arguments":"{\"index\":4}"}}]},{"role":"tool","tool_call_id":"` + id + `","content":"done"}],` + tools + `}`)
	if c, _ := m["content"].(string); !strings.HasPrefix(c, "stub reply ") || m["tool_calls"] != nil {
		t.Errorf("after the tool result: %v", m)
	}
	m = post(`{"model":"m","messages":[{"role":"user","content":"json"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","properties":{"ok":{"const":1}},"required":["ok"]}}}}`)
	if m["content"] != `{"ok":1}` {
		t.Errorf("response_format: %v", m)
	}
	if tot := p.Totals(); tot.Calls != 3 || tot.Failures != 0 {
		t.Errorf("totals %+v", tot)
	}
}
