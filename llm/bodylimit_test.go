package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A response body larger than MaxResponseBytes is not read whole: the
// attempt fails as a bad response (and is retried as one); a body under the
// bound is read as usual.
func TestResponseBodyIsBounded(t *testing.T) {
	reply := func(content string) string {
		return `{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"` + content + `"}}]}`
	}
	huge := reply(strings.Repeat("a", llm.MaxResponseBytes))
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Raw(200, "application/json", huge) })
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxAttempts = 2 })
	_, err := c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err == nil || llm.ErrorClass(err) != llm.ClassBadResponse || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("a %d-byte body: %v (class %q)", len(huge), err, llm.ErrorClass(err))
	}
	if n := len(srv.Log()); n != 2 {
		t.Fatalf("%d attempts, want 2 (retried as a bad response)", n)
	}

	ok := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Raw(200, "application/json", reply(strings.Repeat("b", 1<<20)))
	})
	res, err := newClient(t, ok, nil).Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err != nil || len(res.Content) != 1<<20 {
		t.Fatalf("a 1 MiB reply: %v", err)
	}
}
