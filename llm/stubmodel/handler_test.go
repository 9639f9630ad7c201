package stubmodel_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
)

// TestHandler: a plain handler decodes requests and encodes replies as the
// server does; the fault devices of a Server are refused with a 500.
func TestHandler(t *testing.T) {
	var mu sync.Mutex
	var seqs []int
	h := stubmodel.Handler(func(req stubmodel.ChatRequest) stubmodel.Reply {
		mu.Lock()
		seqs = append(seqs, req.Seq)
		mu.Unlock()
		switch req.Messages[0].Content {
		case "status":
			return stubmodel.RateLimited("1")
		case "hang":
			return stubmodel.Hang()
		case "tools":
			return stubmodel.Calls(stubmodel.ToolCall{Name: "wait", Arguments: "{}"})
		}
		return stubmodel.Echo(req)
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	post := func(path, content string) (int, string, string) {
		t.Helper()
		body := `{"model":"m","messages":[{"role":"user","content":"` + content + `"}]}`
		resp, err := ts.Client().Post(ts.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	if code, _, body := post("/v1/chat/completions", "hello there"); code != 200 || !strings.Contains(body, `"content":"echo: hello there"`) ||
		!strings.Contains(body, `"prompt_tokens":2`) {
		t.Errorf("echo: %d %s", code, body)
	}
	if code, _, body := post("/v1/chat/completions", "tools"); code != 200 || !strings.Contains(body, `"tool_calls"`) ||
		!strings.Contains(body, `"call_1_0"`) {
		t.Errorf("tool calls: %d %s", code, body)
	}
	if code, ra, _ := post("/v1/chat/completions", "status"); code != 429 || ra != "1" {
		t.Errorf("rate limited: %d, Retry-After %q", code, ra)
	}
	if code, _, body := post("/v1/chat/completions", "hang"); code != 500 || !strings.Contains(body, "hang") {
		t.Errorf("hang: %d %s", code, body)
	}
	if code, _, _ := post("/v1/models", "x"); code != 400 {
		t.Errorf("wrong path: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seqs) != 4 || seqs[0] != 0 || seqs[3] != 3 {
		t.Errorf("seqs %v", seqs)
	}
}
