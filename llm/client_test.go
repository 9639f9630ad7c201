package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// testKey is a distinctive fake API key: tests scan errors, output and cache
// files for it.
const (
	testKeyEnv = "COORDBENCH_LLM_TEST_KEY"
	testKey    = "sk-test-DO-NOT-LEAK-7c1e5a9b3f"
)

// newClient returns a Client for srv with fast retries; mod adjusts the config.
func newClient(t testing.TB, srv *stubmodel.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL:        srv.URL,
		Model:          "m",
		Timeout:        5 * time.Second,
		RetryBaseDelay: 5 * time.Millisecond,
		RetryMaxDelay:  20 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startServer(t testing.TB, h func(stubmodel.ChatRequest) stubmodel.Reply) *stubmodel.Server {
	srv := stubmodel.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func user(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

func ptr[T any](v T) *T { return &v }

func TestRequestShape(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, func(cfg *llm.Config) {
		cfg.Model = "qwen-test"
		cfg.APIKeyEnv = testKeyEnv
		cfg.Temperature = ptr(0.7)
		cfg.MaxTokens = 64
		cfg.Seed = ptr(int64(42))
	})
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a scheduler."},
		{Role: llm.RoleUser, Content: "Which job next?"},
		{Role: llm.RoleAssistant, Content: "J3"},
		{Role: llm.RoleUser, Content: "Why?"},
	}
	resp, err := c.Complete(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "echo: Why?" || resp.FinishReason != "stop" || resp.Model != "qwen-test" || resp.Attempts != 1 || resp.Cached {
		t.Errorf("response = %+v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request line = %s %s", r.Method, r.Path)
	}
	if r.Model != "qwen-test" {
		t.Errorf("model = %q", r.Model)
	}
	if len(r.Messages) != len(msgs) {
		t.Fatalf("messages = %+v", r.Messages)
	}
	for i, m := range msgs {
		if r.Messages[i].Role != m.Role || r.Messages[i].Content != m.Content {
			t.Errorf("message %d = %+v, want %+v", i, r.Messages[i], m)
		}
	}
	if r.Temperature == nil || *r.Temperature != 0.7 {
		t.Errorf("temperature = %v", r.Temperature)
	}
	// openai-go v3 sends max_completion_tokens, never the legacy max_tokens.
	if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 64 || r.MaxTokens != nil {
		t.Errorf("max_completion_tokens = %v, max_tokens = %v", r.MaxCompletionTokens, r.MaxTokens)
	}
	if r.Seed == nil || *r.Seed != 42 {
		t.Errorf("seed = %v", r.Seed)
	}
	if got := r.BearerToken(); got != testKey {
		t.Errorf("Authorization bearer token = %q, want the key from $%s", got, testKeyEnv)
	}
	if got, want := strings.Join(r.Fields, ","), "max_completion_tokens,messages,model,seed,temperature"; got != want {
		t.Errorf("body fields = %s, want %s", got, want)
	}
}

func TestRequestShapeDefaults(t *testing.T) {
	// openai-go's NewClient would pick these up; this package must not.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-default-env-must-not-be-sent")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, nil)
	if _, err := c.Complete(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	// No sampling parameter unless asked for, as the published
	// SILO-BENCH call (issue 27 item 3).
	if r.MaxCompletionTokens != nil || r.MaxTokens != nil || r.Seed != nil || r.Temperature != nil {
		t.Errorf("unset parameters were sent: %s", r.Body)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none without APIKeyEnv", h)
	}
	if got, want := strings.Join(r.Fields, ","), "messages,model"; got != want {
		t.Errorf("body fields = %s, want %s", got, want)
	}
}

func TestUsageAndLatency(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
		r := stubmodel.Text("a b c")
		r.Usage = &stubmodel.Usage{PromptTokens: 123, CompletionTokens: 45}
		r.FinishReason = "length"
		r.Delay = 30 * time.Millisecond
		return r
	})
	c := newClient(t, srv, nil)
	resp, err := c.Complete(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 123, CompletionTokens: 45}) || resp.Usage.Total() != 168 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.FinishReason != "length" {
		t.Errorf("finish reason = %q", resp.FinishReason)
	}
	// A lower bound only: the server waited 30 ms before answering.
	if resp.Latency < 30*time.Millisecond {
		t.Errorf("latency = %v, want >= the server's injected 30ms", resp.Latency)
	}
	if got := c.Stats().Tokens(); got != resp.Usage {
		t.Errorf("stats tokens = %+v, want %+v", got, resp.Usage)
	}
	// The default usage of the fake server: word counts.
	srv.SetHandler(stubmodel.Echo)
	resp, err = c.Complete(context.Background(), []llm.Message{{Role: "system", Content: "one two"}, {Role: "user", Content: "three"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 3, CompletionTokens: 2}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if n, u := srv.Completed(); n != 2 || u.PromptTokens != 126 || u.CompletionTokens != 47 {
		t.Errorf("server log: %d completions, %+v", n, u)
	}
}

func TestRetriesThenSuccess(t *testing.T) {
	faults := []stubmodel.Reply{
		stubmodel.RateLimited("1"),
		stubmodel.Status(500, "boom"),
		stubmodel.Hang(),
		stubmodel.Drop(),
		stubmodel.Truncated(),
		stubmodel.BadJSON(),
		stubmodel.NonJSON(),
		stubmodel.Status(503, "overloaded"),
		stubmodel.Status(502, "bad gateway"),
	}
	srv := startServer(t, stubmodel.Sequence(append(faults, stubmodel.Text("finally"))...))
	c := newClient(t, srv, func(cfg *llm.Config) {
		cfg.MaxAttempts = len(faults) + 1
		cfg.Timeout = 300 * time.Millisecond // the hang ends here
	})
	resp, err := c.Complete(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(faults) + 1
	if resp.Content != "finally" || resp.Attempts != n {
		t.Errorf("response = %+v, want content finally after %d attempts", resp, n)
	}
	st := c.Stats().Snapshot()
	if st.Retries != int64(n-1) || st.Requests != int64(n) || st.Calls != 1 || st.Failures != 0 || st.InFlight != 0 {
		t.Errorf("stats = %+v", st)
	}
	if srv.Count() != n {
		t.Errorf("server saw %d requests, want %d", srv.Count(), n)
	}
	// Retry-After: 1 honoured, measured on the server's clock: the second
	// request arrived at least 1 s after the 429 was sent.
	log := srv.Log()
	var rateLimitedEnd, second time.Time
	for _, rec := range log {
		switch rec.Request.Seq {
		case 0:
			if rec.Status != 429 {
				t.Errorf("first reply status = %d", rec.Status)
			}
			rateLimitedEnd = rec.End
		case 1:
			second = rec.Request.Received
		}
	}
	if gap := second.Sub(rateLimitedEnd); gap < time.Second {
		t.Errorf("retry came %v after the 429 with Retry-After: 1", gap)
	}
	outcomes := map[stubmodel.Outcome]int{}
	for _, rec := range log {
		outcomes[rec.Outcome]++
	}
	want := map[stubmodel.Outcome]int{stubmodel.OutcomeStatus: 4, stubmodel.OutcomeHang: 1, stubmodel.OutcomeDrop: 1,
		stubmodel.OutcomeTruncated: 1, stubmodel.OutcomeBadJSON: 1, stubmodel.OutcomeNonJSON: 1, stubmodel.OutcomeOK: 1}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("server outcomes = %v, want %v", outcomes, want)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	var once sync.Once
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
		r := stubmodel.Text("ok")
		once.Do(func() {
			// HTTP dates have 1 s resolution: 2 s ahead is at least 1 s ahead.
			r = stubmodel.RateLimited(time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat))
		})
		return r
	})
	c := newClient(t, srv, nil)
	resp, err := c.Complete(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Errorf("attempts = %d", resp.Attempts)
	}
	log := srv.Log()
	if gap := log[1].Request.Received.Sub(log[0].End); gap < time.Second {
		t.Errorf("retry came %v after a 429 whose Retry-After date was >= 1 s ahead", gap)
	}
}

func TestNonRetryableFailFast(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	for _, code := range []int{400, 401, 403, 404, 422} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			// The server echoes the key, as some real servers echo part of it.
			srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
				return stubmodel.Status(code, "denied for key "+testKey)
			})
			c := newClient(t, srv, func(cfg *llm.Config) { cfg.APIKeyEnv = testKeyEnv; cfg.Model = "model-x" })
			_, err := c.Complete(context.Background(), user("hi"))
			if err == nil {
				t.Fatal("no error")
			}
			if srv.Count() != 1 {
				t.Errorf("server saw %d requests, want exactly 1", srv.Count())
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != code || e.Attempts != 1 || e.Retryable {
				t.Fatalf("error = %#v", err)
			}
			msg := err.Error()
			wantPrefix := fmt.Sprintf("llm: POST %s/chat/completions (model \"model-x\"): %d %s: denied for key [REDACTED]",
				srv.URL, code, http.StatusText(code))
			if !strings.HasPrefix(msg, wantPrefix) {
				t.Errorf("error = %q\nwant prefix %q", msg, wantPrefix)
			}
			if strings.Contains(msg, testKey) {
				t.Errorf("error contains the key: %q", msg)
			}
			if st := c.Stats().Snapshot(); st.Retries != 0 || st.Failures != 1 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestAttemptBound(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(500, "always broken") })
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxAttempts = 4 })
	_, err := c.Complete(context.Background(), user("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Attempts != 4 || !e.Retryable || e.Status != 500 {
		t.Fatalf("error = %v (%#v)", err, err)
	}
	if !strings.Contains(err.Error(), "500 Internal Server Error: always broken (gave up after 4 attempts)") {
		t.Errorf("error = %q", err)
	}
	if srv.Count() != 4 {
		t.Errorf("server saw %d requests, want 4", srv.Count())
	}
	if st := c.Stats().Snapshot(); st.Retries != 3 || st.Requests != 4 || st.Failures != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestDefaultMaxAttempts(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Drop() })
	c := newClient(t, srv, nil)
	if got := c.Config().MaxAttempts; got != llm.DefaultMaxAttempts {
		t.Fatalf("MaxAttempts default = %d", got)
	}
	if _, err := c.Complete(context.Background(), user("hi")); err == nil {
		t.Fatal("no error")
	}
	if srv.Count() != llm.DefaultMaxAttempts {
		t.Errorf("server saw %d requests, want %d", srv.Count(), llm.DefaultMaxAttempts)
	}
}

func TestContextCancelStopsRetrying(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Hang() })
	c := newClient(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, user("hi"))
		errc <- err
	}()
	testenv.Wait(t, "the server to receive the request", func() bool { return srv.Count() > 0 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if srv.Count() != 1 || c.Stats().Retries() != 0 {
		t.Errorf("server saw %d requests, %d retries; want 1 and 0", srv.Count(), c.Stats().Retries())
	}
}

func TestConcurrencyLimit(t *testing.T) {
	srv := startServer(t, func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), 10*time.Millisecond)
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Concurrency = 4 })
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			if _, err := c.Complete(context.Background(), user(fmt.Sprint("q", i))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if srv.Count() != 50 {
		t.Errorf("server saw %d requests", srv.Count())
	}
	if m := srv.MaxConcurrent(); m > 4 {
		t.Errorf("server saw %d concurrent requests, limit 4", m)
	} else {
		t.Logf("max concurrent at server: %d (limit 4)", m)
	}
	if c.Stats().InFlight() != 0 {
		t.Errorf("in flight after all calls = %d", c.Stats().InFlight())
	}
}

func TestConcurrencySharedByClientsOfOneEndpoint(t *testing.T) {
	srv := startServer(t, func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), 10*time.Millisecond)
	})
	eps := llm.NewEndpoints()
	a := newClient(t, srv, func(cfg *llm.Config) { cfg.Concurrency = 3; cfg.Model = "a"; cfg.Endpoints = eps })
	// Same base URL, written with a trailing slash.
	b := newClient(t, srv, func(cfg *llm.Config) {
		cfg.Concurrency = 3
		cfg.Model = "b"
		cfg.BaseURL = srv.URL + "/"
		cfg.Endpoints = eps
	})
	if a.Stats() != b.Stats() {
		t.Error("clients of one endpoint have different Stats")
	}
	var wg sync.WaitGroup
	for i := range 40 {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			if _, err := c.Complete(context.Background(), user(fmt.Sprint("q", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := srv.MaxConcurrent(); m > 3 {
		t.Errorf("server saw %d concurrent requests from two clients sharing limit 3", m)
	}
	if got := a.Stats().Calls(); got != 40 {
		t.Errorf("shared stats count %d calls, want 40", got)
	}
	// A third client asking for another limit on the same endpoint is refused.
	_, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "c", Concurrency: 5, Endpoints: eps})
	if err == nil || !strings.Contains(err.Error(), "already has concurrency 3") {
		t.Errorf("conflicting limit: err = %v", err)
	}
	// Another owner (another command, or a test server on a reused port)
	// starts clean: no limits or stats leak between owners.
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "c", Concurrency: 5, Endpoints: llm.NewEndpoints()})
	if err != nil || c.Stats() == a.Stats() || c.Stats().Calls() != 0 {
		t.Errorf("a second owner shares state: err %v", err)
	}
	// A client without an owner has state of its own.
	d, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "d", Concurrency: 7})
	if err != nil || d.Stats() == a.Stats() || d.Stats() == c.Stats() {
		t.Errorf("a client without an owner shares state: err %v", err)
	}
}

func TestRPMLimit(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.RPM = 1200 }) // one request per 50 ms
	start := time.Now()
	for i := range 5 {
		if _, err := c.Complete(context.Background(), user(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	// Five requests at 20/s (burst 1) need four intervals of 50 ms between
	// the first permit and the last, so the calls take at least 200 ms of
	// the caller's time whatever the load: a lower bound that a slow
	// machine can only widen. (The server's receive times are not used:
	// a first request delayed on its way in would shorten their span.)
	if took := time.Since(start); took < 195*time.Millisecond {
		t.Errorf("5 requests at 1200 rpm took %v, want at least 200ms", took)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("the server got %d requests, want 5", n)
	}
}

func TestEdgeResponses(t *testing.T) {
	cases := []struct {
		name, body string
		content    string
		usage      llm.Usage
		err        string
	}{
		{name: "empty choices", body: `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}`, err: "response has no choices"},
		{name: "no choices field", body: `{"id":"x"}`, err: "response has no choices"},
		{name: "json null", body: `null`, err: "response has no choices"},
		{name: "null content", body: `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":0}}`,
			usage: llm.Usage{PromptTokens: 3}},
		{name: "missing usage", body: `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`, content: "hi"},
		{name: "null usage", body: `{"choices":[{"message":{"content":"hi"}}],"usage":null}`, content: "hi"},
		{name: "array body", body: `[1,2]`, err: "unreadable response body"},
		{name: "empty body", body: ``, err: "unreadable response body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
				return stubmodel.Raw(200, "application/json", tc.body)
			})
			c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxAttempts = 2 })
			resp, err := c.Complete(context.Background(), user("hi"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tc.content || resp.Usage != tc.usage {
				t.Errorf("response = %+v", resp)
			}
		})
	}
}

func TestInvalidMessages(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, nil)
	if _, err := c.Complete(context.Background(), nil); err == nil {
		t.Error("no messages: no error")
	}
	if _, err := c.Complete(context.Background(), []llm.Message{{Role: "developer", Content: "x"}}); err == nil || !strings.Contains(err.Error(), `role "developer"`) {
		t.Errorf("bad role: err = %v", err)
	}
	if srv.Count() != 0 {
		t.Errorf("invalid calls reached the server")
	}
}

func TestNewValidation(t *testing.T) {
	t.Setenv("COORDBENCH_EMPTY_KEY", "")
	cache := openCache(t)
	cases := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"no base url", llm.Config{Model: "m"}, "BaseURL: empty"},
		{"bad scheme", llm.Config{BaseURL: "ftp://x/v1", Model: "m"}, `scheme "ftp"`},
		{"credentials in url", llm.Config{BaseURL: "http://user:" + testKey + "@127.0.0.1:1/v1", Model: "m"}, "must not contain credentials"},
		{"query", llm.Config{BaseURL: "http://127.0.0.1:1/v1?key=" + testKey, Model: "m"}, "query"},
		{"no model", llm.Config{BaseURL: "http://127.0.0.1:1/v1"}, "Model: empty"},
		{"unset key env", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "COORDBENCH_UNSET_KEY_VAR"}, "COORDBENCH_UNSET_KEY_VAR"},
		{"empty key env", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "COORDBENCH_EMPTY_KEY"}, "not set or empty"},
		{"key instead of env name", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: testKey}, "NAME of an environment variable"},
		{"temperature", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Temperature: ptr(3.0)}, "Temperature: 3 out of range"},
		{"negative", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Concurrency: -1}, "negative"},
		{"cache mode", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", CacheMode: "sometimes"}, `CacheMode: "sometimes"`},
		{"replay without cache", llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", CacheMode: llm.CacheReplay}, "needs a cache"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error contains the key: %v", err)
			}
		})
	}
	// Replay never uses the network, so it needs no key.
	c, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "COORDBENCH_UNSET_KEY_VAR",
		Cache: cache, CacheMode: llm.CacheReplay})
	if err != nil {
		t.Fatalf("replay without the key: %v", err)
	}
	// A cache without a mode means read-write.
	c, err = llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Cache: cache})
	if err != nil || c.Config().CacheMode != llm.CacheReadWrite {
		t.Fatalf("cache without mode: %v, mode %q", err, c.Config().CacheMode)
	}
}

func TestKeyNeverInErrorsOrOutput(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	srv := startServer(t, nil)
	cache := openCache(t)
	var collected []string
	replies := []stubmodel.Reply{
		stubmodel.Status(401, "Incorrect API key provided: "+testKey),
		stubmodel.Status(500, "internal: "+testKey),
		stubmodel.Raw(403, "text/plain", "forbidden "+testKey),
		stubmodel.Drop(),
		stubmodel.Hang(),
		stubmodel.NonJSON(),
		stubmodel.Truncated(),
	}
	for i, r := range replies {
		srv.SetHandler(func(stubmodel.ChatRequest) stubmodel.Reply { return r })
		c := newClient(t, srv, func(cfg *llm.Config) {
			cfg.APIKeyEnv = testKeyEnv
			cfg.MaxAttempts = 2
			cfg.Timeout = 100 * time.Millisecond
			cfg.Cache = cache
		})
		_, err := c.Complete(context.Background(), user(fmt.Sprint("call ", i)))
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		collected = append(collected, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err),
			fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%+v", c.Config()), c.Stats().String())
		if u := errors.Unwrap(err); u != nil {
			collected = append(collected, u.Error())
		}
	}
	replay := newClient(t, srv, func(cfg *llm.Config) { cfg.APIKeyEnv = testKeyEnv; cfg.Cache = cache; cfg.CacheMode = llm.CacheReplay })
	_, err := replay.Complete(context.Background(), user("never cached"))
	collected = append(collected, err.Error())
	for _, s := range collected {
		if strings.Contains(s, testKey) {
			t.Errorf("output contains the key: %s", s)
		}
	}
}

func TestStatsString(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = openCache(t) })
	for range 2 {
		if _, err := c.Complete(context.Background(), user("a b")); err != nil {
			t.Fatal(err)
		}
	}
	// Tokens count what the server reported ("a b" -> "echo: a b": 2 + 3), not the cache hit.
	want := "llm: 0 in flight, 2 calls, 0 retries, 1 cache hits, 0 failures, 5 tokens"
	if got := c.Stats().String(); got != want {
		t.Errorf("Stats.String() = %q, want %q", got, want)
	}
}

func TestUsageAndTally(t *testing.T) {
	var u llm.Usage
	u.Add(llm.Usage{PromptTokens: 10, CompletionTokens: 2})
	u.Add(llm.Usage{PromptTokens: 5, CompletionTokens: 1})
	if u != (llm.Usage{PromptTokens: 15, CompletionTokens: 3}) || u.Total() != 18 {
		t.Errorf("usage = %+v", u)
	}
	var tally llm.Tally
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { tally.Add(fmt.Sprint("agent-", i%3), llm.Usage{PromptTokens: 2, CompletionTokens: 1}) })
	}
	wg.Wait()
	if got := strings.Join(tally.Names(), ","); got != "agent-0,agent-1,agent-2" {
		t.Errorf("names = %s", got)
	}
	if u, n := tally.Get("agent-0"); n != 34 || u.PromptTokens != 68 {
		t.Errorf("agent-0 = %+v over %d calls", u, n)
	}
	if u, n := tally.Total(); n != 100 || u.Total() != 300 {
		t.Errorf("total = %+v over %d calls", u, n)
	}
}

func TestTLSToPlainHTTPFailsFast(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.BaseURL = strings.Replace(srv.URL, "http://", "https://", 1) })
	_, err := c.Complete(context.Background(), user("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Attempts != 1 || e.Retryable {
		t.Fatalf("err = %v (%#v), want one non-retryable attempt", err, err)
	}
	t.Log(err)
}

// A 400 that says the prompt is too long is an ErrContextOverflow (the
// CLI adds the hint about the context budget); other 400s are not.
// Servers word it differently.
func TestContextOverflowHint(t *testing.T) {
	srv := startServer(t, nil)
	for _, tc := range []struct {
		msg     string
		context bool
	}{
		{"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", true},
		{"the request exceeds the available context size, try increasing it", true},
		{"prompt is too long: 210000 tokens > 200000 maximum", true},
		{"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096 (too many tokens)", true},
		{"Unsupported value: 'temperature' does not support 0.0", false},
	} {
		srv.SetHandler(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(400, tc.msg) })
		_, err := newClient(t, srv, nil).Complete(context.Background(), user("x"))
		var e *llm.Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: %v", tc.msg, err)
		}
		if got := errors.Is(err, llm.ErrContextOverflow); got != tc.context {
			t.Errorf("%q: hint %q", tc.msg, e.Hint)
		}
	}
}

// A reply with an empty "choices" list is unusable (the call fails), but
// the tokens its "usage" reports were paid: they count in Stats and in the
// call's Error.
func TestUsageOfEmptyChoicesIsCounted(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.NoChoices(7, 3)
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxAttempts = 2 })
	want := llm.Usage{PromptTokens: 7, CompletionTokens: 3}
	_, err := c.Complete(context.Background(), user("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Usage != want {
		t.Fatalf("failed call: %v, usage %+v", err, e)
	}
	_, err = c.Complete(context.Background(), user("again"))
	if !errors.As(err, &e) || e.Usage != want {
		t.Fatalf("second failed call: %v", err)
	}
	if got := c.Stats().Tokens(); got != (llm.Usage{PromptTokens: 14, CompletionTokens: 6}) {
		t.Errorf("stats after two unusable replies: %v", got)
	}
}
