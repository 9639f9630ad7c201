package stubmodel_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A script answers the requests its entries match, first match first (on
// a substring, a regular expression, the request's index), in YAML and in
// JSON Lines; the policy answers the rest. Served over a real server.
func TestScript(t *testing.T) {
	yamlScript := `# replies
- call: 0
  reply: first
- contains: weather
  tool_calls:
    - name: get_weather
      arguments: {city: Paris}
- regexp: '^pick \d+$'
  reply: "2"
`
	jsonl := `{"call": 0, "reply": "first"}
# a comment
{"contains": "weather", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
{"regexp": "^pick \\d+$", "reply": "2"}
`
	for name, text := range map[string]string{"s.yaml": yamlScript, "s.jsonl": jsonl} {
		s, err := stubmodel.LoadScript(writeScript(t, name, text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h, served, err := stubmodel.Policies{stubmodel.GenericPolicy()}.New("generic", stubmodel.Options{Script: s})
		if err != nil {
			t.Fatal(err)
		}
		c, err := llm.New(llm.Config{BaseURL: "stub:x", Model: "m", Stubs: fixed{h}})
		if err != nil {
			t.Fatal(err)
		}
		ask := func(q string) *llm.Response {
			r, err := c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: q}})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if r := ask("pick 3"); r.Content != "first" {
			t.Errorf("%s: call 0: %q", name, r.Content)
		}
		if r := ask("the weather?"); len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != `{"city":"Paris"}` {
			t.Errorf("%s: contains: %+v", name, r)
		}
		if r := ask("pick 12"); r.Content != "2" {
			t.Errorf("%s: regexp: %q", name, r.Content)
		}
		if r := ask("pick twelve"); !strings.HasPrefix(r.Content, "stub reply ") {
			t.Errorf("%s: unmatched: %q, want the policy's answer", name, r.Content)
		}
		if got := served(); got != "3 scripted replies; 1 requests" {
			t.Errorf("%s: summary %q", name, got)
		}
	}
}

// fixed is Stubs with one handler, whatever the name.
type fixed struct{ h http.Handler }

func (f fixed) NewStub(string, url.Values) (http.Handler, error) { return f.h, nil }

// Bad scripts are refused with the file and line of the fault.
func TestScriptErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"a.yaml", "- reply: ok\n- contains: x\n", "a.yaml:2: an entry needs a reply or tool_calls"},
		{"b.yaml", "- reply: ok\n  colour: red\n", `b.yaml:2: unknown key "colour"`},
		{"c.yaml", "reply: ok\n", "c.yaml:1: want a list of entries"},
		{"d.yaml", "- regexp: '('\n  reply: x\n", "d.yaml:1: regexp:"},
		{"e.jsonl", "{\"reply\": \"ok\"}\n\n{\"reply\": 3}\n", "e.jsonl:3:"},
		{"f.jsonl", "{\"reply\": \"ok\", \"when\": 1}\n", `f.jsonl:1: json: unknown field "when"`},
		{"g.yaml", "- call: -1\n  reply: x\n", "g.yaml:1: call -1"},
		{"h.yaml", "- tool_calls: [{name: f, arguments: [1]}]\n", "h.yaml:1: tool_calls[0] (f): arguments"},
	} {
		_, err := stubmodel.LoadScript(writeScript(t, c.name, c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	big := writeScript(t, "big.yaml", strings.Repeat("- reply: x\n", stubmodel.MaxScriptBytes/11+1))
	if _, err := stubmodel.LoadScript(big); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("big script: %v", err)
	}
}
