package llm_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

const weatherSchema = `{
	"type": "object",
	"properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 12345678901234567890}},
	"required": ["city"]
}`

func weatherTools() []llm.Tool {
	return []llm.Tool{
		{Name: "get_weather", Description: "Weather for a city.", Parameters: json.RawMessage(weatherSchema)},
		{Name: "now"}, // nil Parameters: an empty object schema is sent
	}
}

// TestToolCallRoundTrip: tools go out with their schemas, the model's calls
// come back, and the follow-up carries the assistant's calls and the tool
// results in OpenAI's shape.
func TestToolCallRoundTrip(t *testing.T) {
	srv := startServer(t, stubmodel.Sequence(
		stubmodel.Calls(
			stubmodel.ToolCall{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			stubmodel.ToolCall{ID: "call_b", Name: "now", Arguments: `{}`},
		),
		stubmodel.Text("It is sunny in Paris."),
	))
	c := newClient(t, srv, nil)
	ctx := context.Background()
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You answer with tools."},
		{Role: llm.RoleUser, Content: "Weather in Paris now?"},
	}
	resp, err := c.CompleteWithTools(ctx, msgs, weatherTools())
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []llm.ToolCall{
		{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris"}`},
		{ID: "call_b", Name: "now", Arguments: `{}`},
	}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) || resp.Content != "" || resp.FinishReason != "tool_calls" {
		t.Fatalf("response = %+v", resp)
	}

	req := srv.Requests()[0]
	if got := strings.Join(req.Fields, ","); got != "messages,model,tools" {
		t.Errorf("fields %s (tool_choice must be left to the server)", got)
	}
	if len(req.Tools) != 2 || req.Tools[0].Name != "get_weather" || req.Tools[0].Description != "Weather for a city." ||
		req.Tools[1].Name != "now" || req.Tools[1].Description != "" {
		t.Fatalf("server saw tools %+v", req.Tools)
	}
	assertJSONEqual(t, "tools[0].parameters", req.Tools[0].Parameters, weatherSchema)
	assertJSONEqual(t, "tools[1].parameters", req.Tools[1].Parameters, `{"type":"object","properties":{}}`)
	if !strings.Contains(string(req.Tools[0].Parameters), "12345678901234567890") {
		t.Errorf("schema numbers must be sent exactly: %s", req.Tools[0].Parameters)
	}

	// Continue the conversation with the calls and their results.
	msgs = append(msgs,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_a", Content: "sunny 21 C"},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_b", Content: "12:00"},
	)
	resp2, err := c.CompleteWithTools(ctx, msgs, weatherTools())
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Content != "It is sunny in Paris." || resp2.ToolCalls != nil || resp2.FinishReason != "stop" {
		t.Errorf("second response = %+v", resp2)
	}
	req2 := srv.Requests()[1]
	want := []stubmodel.Message{
		{Role: "system", Content: "You answer with tools."},
		{Role: "user", Content: "Weather in Paris now?"},
		{Role: "assistant", ToolCalls: []stubmodel.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "call_b", Name: "now", Arguments: `{}`},
		}},
		{Role: "tool", ToolCallID: "call_a", Content: "sunny 21 C"},
		{Role: "tool", ToolCallID: "call_b", Content: "12:00"},
	}
	if !reflect.DeepEqual(req2.Messages, want) {
		t.Errorf("server saw messages\n%+v\nwant\n%+v", req2.Messages, want)
	}
	// The raw wire shape: type "function" on each call, no content on an
	// assistant message that only calls tools.
	var body struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(req2.Body, &body); err != nil {
		t.Fatal(err)
	}
	if c, ok := body.Messages[2]["content"]; ok && string(c) != "null" && string(c) != `""` {
		t.Errorf("assistant tool-call message content = %s", c)
	}
	assertJSONEqual(t, "assistant tool_calls", body.Messages[2]["tool_calls"],
		`[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
		  {"id":"call_b","type":"function","function":{"name":"now","arguments":"{}"}}]`)
	if string(body.Messages[3]["tool_call_id"]) != `"call_a"` || string(body.Messages[3]["role"]) != `"tool"` {
		t.Errorf("tool message on the wire: %v", body.Messages[3])
	}

	// Usage is the server's (words of contents and of tool calls), summed
	// as before.
	_, total := srv.Completed()
	var sum llm.Usage
	sum.Add(resp.Usage)
	sum.Add(resp2.Usage)
	if sum.PromptTokens != total.PromptTokens || sum.CompletionTokens != total.CompletionTokens || resp.Usage.CompletionTokens != 5 {
		t.Errorf("usage %+v / %+v, server %+v", resp.Usage, resp2.Usage, total)
	}
}

func assertJSONEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %s: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// TestToolCallArgumentsPassThrough: arguments that are not valid JSON (or
// are oddly spaced) are returned exactly as sent, for the caller to judge;
// so is a call ID the client did not make up.
func TestToolCallArgumentsPassThrough(t *testing.T) {
	args := []string{`{"city": "Par`, `not json at all`, "{\n  \"a\" :1 }", ``}
	var calls []stubmodel.ToolCall
	for i, a := range args {
		calls = append(calls, stubmodel.ToolCall{ID: "id" + strings.Repeat("x", i), Name: "f", Arguments: a})
	}
	srv := startServer(t, stubmodel.Sequence(stubmodel.Calls(calls...)))
	c := newClient(t, srv, nil)
	resp, err := c.CompleteWithTools(context.Background(), user("go"), []llm.Tool{{Name: "f"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != len(args) {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	for i, a := range args {
		if got := resp.ToolCalls[i]; got.Arguments != a || got.Name != "f" || got.ID != calls[i].ID {
			t.Errorf("call %d = %+v, want arguments %q", i, got, a)
		}
	}

	// A server that sends the arguments as an object instead of a string.
	srv2 := startServer(t, stubmodel.Sequence(stubmodel.Raw(200, "application/json",
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{"x":1}}}]},"finish_reason":"tool_calls"}]}`)))
	resp, err = newClient(t, srv2, nil).CompleteWithTools(context.Background(), user("go"), []llm.Tool{{Name: "f"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"x":1}` || resp.ToolCalls[0].ID != "c1" {
		t.Errorf("object arguments: %+v", resp.ToolCalls)
	}
}

// TestToolCallsCacheAndReplay: tool calls are stored, answered from the
// cache, and replayed identically from the file with the server gone.
func TestToolCallsCacheAndReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.db")
	srv := stubmodel.NewServer(func(r stubmodel.ChatRequest) stubmodel.Reply {
		if len(r.Tools) == 0 {
			return stubmodel.Echo(r)
		}
		last := r.Messages[len(r.Messages)-1].Content
		return stubmodel.Calls(stubmodel.ToolCall{Name: "get_weather", Arguments: `{"city": "` + last + `", bad`})
	})
	cache, err := llm.OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	mode := func(cache *llm.Cache, m string) func(*llm.Config) {
		return func(c *llm.Config) { c.Cache = cache; c.CacheMode = m }
	}
	rw := newClient(t, srv, mode(cache, llm.CacheReadWrite))
	ctx := context.Background()
	first, err := rw.CompleteWithTools(ctx, user("Paris"), weatherTools())
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].ID == "" || first.Cached {
		t.Fatalf("first = %+v", first)
	}
	hit, err := rw.CompleteWithTools(ctx, user("Paris"), weatherTools())
	if err != nil {
		t.Fatal(err)
	}
	if !hit.Cached || !reflect.DeepEqual(hit.ToolCalls, first.ToolCalls) || hit.FinishReason != "tool_calls" || hit.Usage != first.Usage {
		t.Errorf("hit = %+v, first = %+v", hit, first)
	}
	// The tools are part of the key: other tools, or none, are misses.
	other := weatherTools()
	other[0].Description = "Weather."
	for _, tools := range [][]llm.Tool{other, weatherTools()[:1], nil} {
		resp, err := rw.CompleteWithTools(ctx, user("Paris"), tools)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Cached {
			t.Errorf("tools %+v answered from the entry of other tools", tools)
		}
	}
	if srv.Count() != 4 {
		t.Errorf("server saw %d requests, want 4", srv.Count())
	}
	// Whitespace in a schema does not change the key (it is compacted).
	spaced := weatherTools()
	spaced[0].Parameters = json.RawMessage(strings.ReplaceAll(weatherSchema, " ", "  "))
	if resp, err := rw.CompleteWithTools(ctx, user("Paris"), spaced); err != nil || !resp.Cached {
		t.Errorf("re-spaced schema: %+v, %v", resp, err)
	}
	srv.Close()
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}

	cache = openCacheAt(t, path)
	replay := newClient(t, srv, mode(cache, llm.CacheReplay))
	got, err := replay.CompleteWithTools(ctx, user("Paris"), weatherTools())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Cached || !reflect.DeepEqual(got.ToolCalls, first.ToolCalls) || got.Content != first.Content ||
		got.FinishReason != first.FinishReason || got.Usage != first.Usage || got.Model != first.Model {
		t.Errorf("replay = %+v, original %+v", got, first)
	}
	// Responses without tool calls replay with nil ToolCalls.
	plain, err := replay.Complete(ctx, user("Paris"))
	if err != nil || plain.ToolCalls != nil || plain.Content != "echo: Paris" {
		t.Errorf("replay without tools: %+v, %v", plain, err)
	}
}

// TestToolCallsSharedInFlight: identical concurrent calls share one request,
// and every caller gets its own copy of the tool calls.
func TestToolCallsSharedInFlight(t *testing.T) {
	srv := startServer(t, stubmodel.Sequence(stubmodel.WithDelay(
		stubmodel.Calls(stubmodel.ToolCall{ID: "c1", Name: "f", Arguments: `{"a":1}`}), 150*time.Millisecond)))
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = openCache(t) })
	const n = 6
	resps := make([]*llm.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.CompleteWithTools(context.Background(), user("x"), []llm.Tool{{Name: "f"}})
			if err != nil {
				t.Error(err)
				return
			}
			resps[i] = r
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if srv.Count() != 1 {
		t.Errorf("server saw %d requests, want 1", srv.Count())
	}
	want := []llm.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}
	for i, r := range resps {
		if !reflect.DeepEqual(r.ToolCalls, want) {
			t.Errorf("caller %d got %+v", i, r.ToolCalls)
		}
	}
	for _, r := range resps {
		r.ToolCalls[0].Name = "changed by a caller"
	}
	for _, r := range resps {
		if r.ToolCalls[0].Name != "changed by a caller" {
			t.Fatal("callers share one ToolCalls slice")
		}
	}
}

// pinnedKey is the cache key of pinnedRequest computed before tool calling
// was added: keys of requests without tools must never change, or every
// existing cache file would silently stop replaying.
const pinnedKey = "70671ca7c5a54acca948c7ed801ebde2938290e4c7550053ba2f379e346d99c3"

func pinnedClient(t *testing.T, cache *llm.Cache, mode string) *llm.Client {
	// CacheKeyURL: the key form of before (always with the base URL), which
	// a default client also finds (TestCacheKeySurvivesANewPort).
	c, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "m", Cache: cache, CacheMode: mode,
		Temperature: ptr(0.5), MaxTokens: 64, Seed: ptr(int64(7)), CacheKeyURL: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var pinnedRequest = []llm.Message{
	{Role: llm.RoleSystem, Content: "You are a scheduler."},
	{Role: llm.RoleUser, Content: "Which job next?"},
	{Role: llm.RoleAssistant, Content: ""},
}

func TestCacheKeyWithoutToolsUnchanged(t *testing.T) {
	c := pinnedClient(t, openCache(t), llm.CacheReplay)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Complete":                func() error { _, err := c.Complete(ctx, pinnedRequest); return err },
		"CompleteWithTools nil":   func() error { _, err := c.CompleteWithTools(ctx, pinnedRequest, nil); return err },
		"CompleteWithTools empty": func() error { _, err := c.CompleteWithTools(ctx, pinnedRequest, []llm.Tool{}); return err },
	} {
		var miss *llm.CacheMissError
		if err := call(); !errors.As(err, &miss) || miss.Key != pinnedKey {
			t.Errorf("%s: key %v, want the pinned %s", name, err, pinnedKey)
		}
	}
	var miss *llm.CacheMissError
	_, err := c.CompleteWithTools(ctx, pinnedRequest, []llm.Tool{{Name: "f"}})
	if !errors.As(err, &miss) || miss.Key == pinnedKey {
		t.Errorf("with a tool: %v: the key must differ", err)
	}
}

// TestCacheMigratesOldFile opens a cache file written before tool calling
// (no tool_calls column): its entries still replay, and new entries with
// tool calls can be stored and replayed.
func TestCacheMigratesOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
		`INSERT INTO meta (k, v) VALUES ('schema', '1')`,
		`CREATE TABLE responses (
			key               TEXT PRIMARY KEY,
			request           TEXT NOT NULL,
			content           TEXT NOT NULL,
			model             TEXT NOT NULL,
			finish_reason     TEXT NOT NULL,
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL
		) WITHOUT ROWID`,
		`INSERT INTO responses VALUES ('` + pinnedKey + `', '{}', 'J3', 'm-served', 'stop', 11, 2)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for round := range 2 { // the second open finds the column already there
		cache, err := llm.OpenCache(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		resp, err := pinnedClient(t, cache, llm.CacheReplay).Complete(context.Background(), pinnedRequest)
		if err != nil {
			t.Fatalf("round %d: old entry: %v", round, err)
		}
		if !resp.Cached || resp.Content != "J3" || resp.Model != "m-served" || resp.ToolCalls != nil ||
			resp.Usage != (llm.Usage{PromptTokens: 11, CompletionTokens: 2}) {
			t.Errorf("round %d: old entry replayed as %+v", round, resp)
		}
		if n, err := cache.Len(); n != 1 || err != nil {
			t.Errorf("round %d: Len = %d, %v", round, n, err)
		}
		cache.Close()
	}

	srv := startServer(t, stubmodel.Sequence(stubmodel.Calls(stubmodel.ToolCall{ID: "c", Name: "f", Arguments: `{}`})))
	cache := openCacheAt(t, path)
	first, err := newClient(t, srv, func(c *llm.Config) { c.Cache = cache }).CompleteWithTools(context.Background(), user("x"), []llm.Tool{{Name: "f"}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := newClient(t, srv, func(c *llm.Config) { c.Cache = cache; c.CacheMode = llm.CacheReplay }).
		CompleteWithTools(context.Background(), user("x"), []llm.Tool{{Name: "f"}})
	if err != nil || !reflect.DeepEqual(again.ToolCalls, first.ToolCalls) || len(first.ToolCalls) != 1 {
		t.Errorf("migrated file: replay %+v (%v), original %+v", again, err, first)
	}
}

func TestToolValidation(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, nil)
	call := llm.ToolCall{ID: "c1", Name: "f", Arguments: "{}"}
	for _, tc := range []struct {
		name  string
		msgs  []llm.Message
		tools []llm.Tool
		want  string
	}{
		{"tool without ID", []llm.Message{{Role: llm.RoleTool, Content: "r"}}, nil, "needs a ToolCallID"},
		{"calls on user", []llm.Message{{Role: llm.RoleUser, Content: "x", ToolCalls: []llm.ToolCall{call}}}, nil, "only assistant messages"},
		{"calls on tool", []llm.Message{{Role: llm.RoleTool, ToolCallID: "c1", ToolCalls: []llm.ToolCall{call}}}, nil, "only assistant messages"},
		{"ID on user", []llm.Message{{Role: llm.RoleUser, Content: "x", ToolCallID: "c1"}}, nil, "only tool messages"},
		{"call without name", []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1"}}}}, nil, "must not be empty"},
		{"call without ID", []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f"}}}}, nil, "must not be empty"},
		{"legacy role", []llm.Message{{Role: "function", Content: "x"}}, nil, `role "function"`},
		{"tool without name", user("x"), []llm.Tool{{Name: " "}}, "name is empty"},
		{"duplicate tools", user("x"), []llm.Tool{{Name: "f"}, {Name: "f"}}, "both named"},
		{"parameters not JSON", user("x"), []llm.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":`)}}, "JSON object"},
		{"parameters an array", user("x"), []llm.Tool{{Name: "f", Parameters: json.RawMessage(`[]`)}}, "JSON object"},
		{"parameters null", user("x"), []llm.Tool{{Name: "f", Parameters: json.RawMessage(`null`)}}, "JSON object"},
		{"parameters trailing", user("x"), []llm.Tool{{Name: "f", Parameters: json.RawMessage(`{} {}`)}}, "JSON object"},
	} {
		_, err := c.CompleteWithTools(context.Background(), tc.msgs, tc.tools)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("invalid calls reached the server")
	}
	// Valid: an assistant message with calls and no content, and tools
	// through plain Complete (no tools offered).
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "x"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "done"},
	}
	if _, err := c.Complete(context.Background(), msgs); err != nil {
		t.Errorf("valid tool conversation: %v", err)
	}
	if r := srv.Requests(); len(r) != 1 || slices.Contains(r[0].Fields, "tools") {
		t.Errorf("Complete sent tools: %+v", r)
	}
}
