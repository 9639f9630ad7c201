package llm_test

import (
	"context"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// FuzzResponseBody serves arbitrary 200 application/json bodies: Complete
// must return a response or an error, never panic. The body travels as the
// user message, so every fuzz worker shares nothing but its own server.
func FuzzResponseBody(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
		`{"choices":[]}`,
		`{"choices":[{"message":{"content":null}}]}`,
		`{"choices":[{"message":null}]}`,
		`{"choices":[null]}`,
		`{"choices":{"0":1}}`,
		`{"usage":{"prompt_tokens":"x"}}`,
		`{"usage":{"prompt_tokens":-5,"completion_tokens":1e300}}`,
		`{"choices":[{"message":{"content":["a"]}}]}`,
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"message":{"tool_calls":[null,{"function":{"arguments":{"a":1}}},{"type":"custom","custom":{"name":"g","input":"i"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":{"0":1}}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":null}]}}]}`,
		`null`, `[]`, `"x"`, `{`, ``,
	} {
		f.Add(s)
	}
	srv := stubmodel.NewServer(func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Raw(200, "application/json", r.Messages[0].Content)
	})
	f.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m", MaxAttempts: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		resp, err := c.Complete(context.Background(), user(body))
		if (resp == nil) == (err == nil) {
			t.Fatalf("resp = %v, err = %v", resp, err)
		}
	})
}
