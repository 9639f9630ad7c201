package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// recordingStubs are stub policies whose handlers record what they got.
type recordingStubs struct {
	mu   sync.Mutex
	reqs []stubmodel.ChatRequest
	made []string // the names and options of the handlers made
}

func (s *recordingStubs) policies() stubmodel.Policies {
	return stubmodel.Policies{{Name: "echo", New: func(o stubmodel.Options) (http.Handler, func() string) {
		return stubmodel.Handler(func(req stubmodel.ChatRequest) stubmodel.Reply {
			s.mu.Lock()
			s.reqs = append(s.reqs, req)
			s.mu.Unlock()
			return stubmodel.Echo(req)
		}), func() string { return "" }
	}}, stubmodel.GenericPolicy()}
}

// A "stub:" base URL is played in-process: no listener, the handler sees
// the request, the reply comes back as from a server, and the URL is
// normalized (options sorted) for the endpoint and the cache key.
func TestStubURLInProcess(t *testing.T) {
	rec := &recordingStubs{}
	ps := rec.policies()
	c, err := llm.New(llm.Config{BaseURL: " stub:echo?seed=3 ", Model: "m", Stubs: ps})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Config().BaseURL; got != "stub:echo?seed=3" {
		t.Errorf("base URL %q", got)
	}
	resp, err := c.Complete(context.Background(), user("hello"))
	if err != nil || resp.Content != "echo: hello" || resp.Usage.PromptTokens != 1 || resp.Attempts != 1 {
		t.Fatalf("response %+v, %v", resp, err)
	}
	if len(rec.reqs) != 1 || rec.reqs[0].Model != "m" || !strings.HasSuffix(rec.reqs[0].Path, "/chat/completions") {
		t.Errorf("the stub got %+v", rec.reqs)
	}
	// The same stub through the response cache: a hit the second time.
	cache, err := llm.OpenCache(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	cc, err := llm.New(llm.Config{BaseURL: "stub:generic", Model: "m", Stubs: ps, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := cc.Complete(context.Background(), user("say something"))
	b, err2 := cc.Complete(context.Background(), user("say something"))
	if err1 != nil || err2 != nil || a.Content != b.Content || !b.Cached || !strings.HasPrefix(a.Content, "stub reply ") {
		t.Errorf("cached stub: %+v %v / %+v %v", a, err1, b, err2)
	}
}

// Stub names are checked early, with the policies listed; a stub URL
// without stub models, or with bad syntax or options, is an error that
// names BaseURL.
func TestStubURLErrors(t *testing.T) {
	ps := (&recordingStubs{}).policies()
	for _, c := range []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{BaseURL: "stub:oracle", Model: "m", Stubs: ps}, `unknown stub policy "oracle" (want echo or generic)`},
		{llm.Config{BaseURL: "stub:generic?seed=x", Model: "m", Stubs: ps}, `seed "x": want one integer`},
		{llm.Config{BaseURL: "stub:generic?temperature=1", Model: "m", Stubs: ps}, `unknown option "temperature"`},
		{llm.Config{BaseURL: "stub:Two Words", Model: "m", Stubs: ps}, "want stub:POLICY"},
		{llm.Config{BaseURL: "stub:", Model: "m", Stubs: ps}, "want stub:POLICY"},
		{llm.Config{BaseURL: "stub:generic", Model: "m"}, "plays none"},
	} {
		_, err := llm.New(c.cfg)
		var oe *opterr.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &oe) || oe.Option != "BaseURL" {
			t.Errorf("%q: %v, want an error on BaseURL with %q", c.cfg.BaseURL, err, c.want)
		}
	}
	// Validate checks the name only when it has the stubs; the syntax always.
	if err := (llm.Config{BaseURL: "stub:oracle", Model: "m"}).Validate(); err != nil {
		t.Errorf("Validate without stubs: %v", err)
	}
	if err := (llm.Config{BaseURL: "stub:oracle", Model: "m", Stubs: ps}).Validate(); err == nil {
		t.Error("Validate with stubs accepts an unknown policy")
	}
	if n, err := llm.NormalizeBaseURL("stub:generic?seed=2&seed=1"); err != nil || n != "stub:generic?seed=2&seed=1" {
		t.Errorf("NormalizeBaseURL: %q %v", n, err)
	}
}

// tool_choice and response_format reach the server as sent and are part
// of the cache key; a request without them keeps its old key (checked by
// the cache tests' fixed keys) and sends neither field.
func TestRequestOptions(t *testing.T) {
	srv := startServer(t, stubmodel.Generic(0))
	c := newClient(t, srv, nil)
	ctx := context.Background()
	tools := []llm.Tool{{Name: "pick", Parameters: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer","enum":[3,5]}},"required":["i"]}`)}}
	resp, err := c.CompleteRequest(ctx, llm.Request{Messages: user("pick one"), Tools: tools,
		ToolChoice: json.RawMessage(`{"type": "function", "function": {"name": "pick"}}`)})
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "pick" {
		t.Fatalf("tool choice: %+v %v", resp, err)
	}
	var args struct{ I int }
	if json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &args) != nil || (args.I != 3 && args.I != 5) {
		t.Errorf("arguments %s", resp.ToolCalls[0].Arguments)
	}
	format := `{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"ok":{"const":true}},"required":["ok"]}}}`
	resp, err = c.CompleteRequest(ctx, llm.Request{Messages: user("answer"), ResponseFormat: json.RawMessage(format)})
	if err != nil || resp.Content != `{"ok":true}` {
		t.Fatalf("response format: %+v %v", resp, err)
	}
	if _, err := c.Complete(ctx, user("plain")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if string(reqs[0].ToolChoice) != `{"type":"function","function":{"name":"pick"}}` || string(reqs[1].ResponseFormat) != format {
		t.Errorf("sent %s / %s", reqs[0].ToolChoice, reqs[1].ResponseFormat)
	}
	if reqs[2].ToolChoice != nil || reqs[2].ResponseFormat != nil || strings.Contains(strings.Join(reqs[2].Fields, ","), "format") {
		t.Errorf("a plain request sent %v", reqs[2].Fields)
	}
	for _, bad := range []llm.Request{
		{Messages: user("x"), ToolChoice: json.RawMessage(`"auto"`)},
		{Messages: user("x"), Tools: tools, ToolChoice: json.RawMessage(`"always"`)},
		{Messages: user("x"), Tools: tools, ToolChoice: json.RawMessage(`{"type":"function","function":{"name":"other"}}`)},
		{Messages: user("x"), ResponseFormat: json.RawMessage(`{"type":"yaml"}`)},
		{Messages: user("x"), ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{}}`)},
		{Messages: user("x"), ResponseFormat: json.RawMessage(`{`)},
	} {
		if _, err := c.CompleteRequest(ctx, bad); err == nil {
			t.Errorf("accepted %s %s", bad.ToolChoice, bad.ResponseFormat)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests sent, want 3 (bad ones are refused before)", n)
	}
}
