package stubmodel_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

func post(t *testing.T, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

const chatBody = `{"model":"m","messages":[{"role":"system","content":"a b"},{"role":"user","content":[{"type":"text","text":"c "},{"type":"text","text":"d"}]}],"temperature":0.2,"max_tokens":9,"seed":5}`

func TestDecodeAndLog(t *testing.T) {
	srv := stubmodel.NewServer(nil)
	defer srv.Close()
	resp, body, err := post(t, srv.URL+"/chat/completions", chatBody)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %v, err %v", resp, err)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Choices[0].Message.Content != "echo: c d" {
		t.Fatalf("body %s (%v)", body, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "m" || len(r.Messages) != 2 || r.Messages[1].Content != "c d" || *r.Temperature != 0.2 ||
		*r.MaxTokens != 9 || r.MaxCompletionTokens != nil || *r.Seed != 5 {
		t.Errorf("decoded %+v", r)
	}
	if got := strings.Join(r.Fields, ","); got != "max_tokens,messages,model,seed,temperature" {
		t.Errorf("fields %s", got)
	}
	n, u := srv.Completed()
	if n != 1 || u.PromptTokens != 4 || u.CompletionTokens != 3 {
		t.Errorf("completed %d, usage %+v", n, u)
	}
}

func TestBadRequestsSkipTheHandler(t *testing.T) {
	called := false
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { called = true; return stubmodel.Text("x") })
	defer srv.Close()
	for _, tc := range []struct{ path, body string }{
		{"/chat/completions", "not json"},
		{"/embeddings", chatBody},
		{"/chat/completions", `{"messages":[{"role":"user","content":{"x":1}}]}`},
	} {
		resp, _, err := post(t, srv.URL+tc.path, tc.body)
		if err != nil || resp.StatusCode != 400 {
			t.Errorf("%s %q: %v %v", tc.path, tc.body, resp, err)
		}
	}
	if called {
		t.Error("handler called for bad requests")
	}
	for _, rec := range srv.Log() {
		if rec.Outcome != stubmodel.OutcomeBadRequest || rec.Request.DecodeError == "" {
			t.Errorf("record %+v", rec)
		}
	}
}

func TestFaults(t *testing.T) {
	srv := stubmodel.NewServer(stubmodel.Sequence(
		stubmodel.RateLimited("7"),
		stubmodel.Drop(),
		stubmodel.Truncated(),
		stubmodel.NonJSON(),
		stubmodel.BadJSON(),
		stubmodel.Raw(201, "text/plain", "raw!"),
		stubmodel.Text("last"),
	))
	defer srv.Close()
	url := srv.URL + "/chat/completions"

	resp, body, err := post(t, url, chatBody)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(body), "rate limited") {
		t.Errorf("429: %v %s %v", resp, body, err)
	}
	if _, _, err := post(t, url, chatBody); err == nil {
		t.Error("drop: no error")
	}
	if _, _, err := post(t, url, chatBody); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: err = %v", err)
	}
	resp, body, _ = post(t, url, chatBody)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "<html>") {
		t.Errorf("nonjson: %v %s", resp.Header, body)
	}
	_, body, _ = post(t, url, chatBody)
	if json.Valid(body) {
		t.Errorf("badjson is valid: %s", body)
	}
	resp, body, _ = post(t, url, chatBody)
	if resp.StatusCode != 201 || string(body) != "raw!" {
		t.Errorf("raw: %d %s", resp.StatusCode, body)
	}
	for range 2 { // the last reply repeats
		_, body, _ = post(t, url, chatBody)
		if !strings.Contains(string(body), `"last"`) {
			t.Errorf("sequence end: %s", body)
		}
	}
	var outcomes []string
	for _, rec := range srv.Log() {
		outcomes = append(outcomes, string(rec.Outcome))
	}
	if got := strings.Join(outcomes, ","); got != "status,drop,truncated,nonjson,badjson,raw,ok,ok" {
		t.Errorf("outcomes = %s", got)
	}
}

func TestHangAndDelayEndWithTheClientOrClose(t *testing.T) {
	srv := stubmodel.NewServer(stubmodel.Sequence(stubmodel.Hang(), stubmodel.WithDelay(stubmodel.Text("slow"), time.Hour), stubmodel.Hang()))
	url := srv.URL + "/chat/completions"
	for range 2 { // the client gives up
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(chatBody))
		if _, err := http.DefaultClient.Do(req); err == nil {
			t.Error("no error")
		}
		cancel()
	}
	done := make(chan error, 1)
	go func() { _, _, err := post(t, url, chatBody); done <- err }()
	testenv.Wait(t, "the third request to reach the server", func() bool { return srv.Count() >= 3 })
	srv.Close() // must not wait for the hang
	if err := <-done; err == nil {
		t.Error("hanging request ended without error")
	}
	srv.Close() // idempotent
	log := srv.Log()
	if len(log) != 3 || log[0].Outcome != stubmodel.OutcomeHang || log[1].Outcome != stubmodel.OutcomeCanceled {
		t.Errorf("log = %+v", log)
	}
}

func TestMaxConcurrent(t *testing.T) {
	srv := stubmodel.NewServer(func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), 50*time.Millisecond)
	})
	defer srv.Close()
	done := make(chan struct{})
	for range 3 {
		go func() { post(t, srv.URL+"/chat/completions", chatBody); done <- struct{}{} }()
	}
	for range 3 {
		<-done
	}
	if m := srv.MaxConcurrent(); m < 1 || m > 3 {
		t.Errorf("max concurrent = %d", m)
	}
}

func TestToolsDecodeAndCalls(t *testing.T) {
	srv := stubmodel.NewServer(stubmodel.Sequence(
		stubmodel.Calls(
			stubmodel.ToolCall{ID: "call_x", Name: "get weather", Arguments: `{"city": "Paris"}`},
			stubmodel.ToolCall{Name: "now", Arguments: `not json`},
		),
		stubmodel.Reply{Content: "thinking aloud", ToolCalls: []stubmodel.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}, FinishReason: "stop"},
	))
	defer srv.Close()
	body := `{"model":"m","messages":[
		{"role":"user","content":"a b"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"r s t"}],
		"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}},
		         {"type":"function","function":{"name":"g"}}]}`
	resp, out, err := post(t, srv.URL+"/chat/completions", body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %v, err %v, body %s", resp, err, out)
	}
	var got struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	ch := got.Choices[0]
	if ch.Message.Content != nil || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("reply %s", out)
	}
	c0, c1 := ch.Message.ToolCalls[0], ch.Message.ToolCalls[1]
	if c0.ID != "call_x" || c0.Type != "function" || c0.Function.Name != "get weather" || c0.Function.Arguments != `{"city": "Paris"}` ||
		c1.ID != "call_3_1" || c1.Function.Arguments != "not json" {
		t.Errorf("tool calls %s", out)
	}
	// Prompt: "a b" (2) + call "f" "{"x": 1}" (1+2) + "r s t" (3) = 8.
	// Completion: "get weather" (2) + args (2) + "now" (1) + "not json" (2) = 7.
	if got.Usage.Prompt != 8 || got.Usage.Completion != 7 {
		t.Errorf("usage %+v", got.Usage)
	}

	r := srv.Requests()[0]
	wantMsgs := []stubmodel.Message{
		{Role: "user", Content: "a b"},
		{Role: "assistant", ToolCalls: []stubmodel.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x": 1}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "r s t"},
	}
	if !reflect.DeepEqual(r.Messages, wantMsgs) {
		t.Errorf("messages %+v", r.Messages)
	}
	if len(r.Tools) != 2 || r.Tools[0].Name != "f" || r.Tools[0].Description != "d" || string(r.Tools[0].Parameters) != `{"type":"object"}` ||
		r.Tools[1].Name != "g" || r.Tools[1].Parameters != nil {
		t.Errorf("tools %+v", r.Tools)
	}

	// Content beside calls, and an explicit finish reason.
	_, out, _ = post(t, srv.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if err := json.Unmarshal(out, &got); err != nil || got.Choices[0].Message.Content == nil ||
		*got.Choices[0].Message.Content != "thinking aloud" || got.Choices[0].FinishReason != "stop" || got.Usage.Completion != 4 {
		t.Errorf("reply %s", out)
	}

	// Only function tools and function calls are accepted.
	for _, bad := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"f"}}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"custom"}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":{"a":1}}}]}]}`,
	} {
		if resp, _, err := post(t, srv.URL+"/chat/completions", bad); err != nil || resp.StatusCode != 400 {
			t.Errorf("%s: %v %v", bad, resp, err)
		}
	}
}
