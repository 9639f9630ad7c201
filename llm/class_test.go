package llm_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// Every failure of Complete has a class, and every retry is announced
// through OnRetry with the failure's class.
func TestErrorClassAndOnRetry(t *testing.T) {
	status := func(code int) func(stubmodel.ChatRequest) stubmodel.Reply {
		return func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(code, "no") }
	}
	cases := []struct {
		name    string
		handler func(stubmodel.ChatRequest) stubmodel.Reply // nil: no server
		mod     func(t *testing.T, cfg *llm.Config)
		ctx     func() context.Context
		class   string
		retries int // OnRetry calls, with MaxAttempts 3
	}{
		{name: "401", handler: status(401), class: llm.ClassAuth},
		{name: "404", handler: status(404), class: llm.ClassRequest},
		{name: "429", handler: func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.RateLimited("0") }, class: llm.ClassRateLimit, retries: 2},
		{name: "500", handler: status(500), class: llm.ClassServer, retries: 2},
		{name: "no choices", handler: func(stubmodel.ChatRequest) stubmodel.Reply {
			return stubmodel.Raw(200, "application/json", `{"id":"x","object":"chat.completion","choices":[]}`)
		}, class: llm.ClassBadResponse},
		{name: "closed port", class: llm.ClassTransport, retries: 2},
		{name: "replay miss", handler: stubmodel.Echo, class: llm.ClassCacheMiss, mod: func(t *testing.T, cfg *llm.Config) {
			c, err := llm.OpenCache(filepath.Join(t.TempDir(), "cache.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			cfg.Cache, cfg.CacheMode = c, llm.CacheReplay
		}},
		{name: "canceled", handler: stubmodel.Echo, class: llm.ClassCanceled, ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			var mu sync.Mutex
			var retries []llm.Retry
			cfg := llm.Config{Model: "m", MaxAttempts: 3, RetryBaseDelay: 1, RetryMaxDelay: 2,
				OnRetry: func(r llm.Retry) { mu.Lock(); retries = append(retries, r); mu.Unlock() }}
			if tc.handler != nil {
				cfg.BaseURL = startServer(t, tc.handler).URL
			} else if cfg.BaseURL, err = stubmodel.UnreachableURL(); err != nil {
				t.Fatal(err)
			}
			if tc.mod != nil {
				tc.mod(t, &cfg)
			}
			c, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			_, err = c.Complete(ctx, user("hi"))
			if got := llm.ErrorClass(err); got != tc.class {
				t.Errorf("ErrorClass(%v) = %q, want %q", err, got, tc.class)
			}
			if len(retries) != tc.retries {
				t.Fatalf("OnRetry called %d times, want %d", len(retries), tc.retries)
			}
			for i, r := range retries {
				if r.Attempt != i+1 || r.MaxAttempts != 3 || r.Err == nil || r.Err.Class != tc.class {
					t.Errorf("retry %d = %+v", i, r)
				}
			}
		})
	}
	if got := llm.ErrorClass(nil); got != "" {
		t.Errorf("ErrorClass(nil) = %q", got)
	}
}
