package llmctl_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// fastRetries is a client config for baseURL that retries at once.
func fastRetries(baseURL string) llm.Config {
	return llm.Config{BaseURL: baseURL, Model: "stub", MaxAttempts: 2, RetryBaseDelay: time.Millisecond, RetryMaxDelay: 2 * time.Millisecond}
}

// oneAttempt is a relay controller whose calls to baseURL are made one at
// a time, without retries.
func oneAttempt(t *testing.T, baseURL string) *llmctl.Controller {
	t.Helper()
	cfg := fastRetries(baseURL)
	cfg.MaxAttempts, cfg.Concurrency = 1, 1
	cl, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := llmctl.New("relay", map[string]llmctl.Model{"": {Name: "stub", Client: cl}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func stubURL(t *testing.T, h func(stubmodel.ChatRequest) stubmodel.Reply) string {
	srv := stubmodel.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// A model that gives no answer (nothing listening, key rejected, replay
// miss) ends the episode: Run stops with status aborted and an error
// wrapping coord.ErrAbort and the client's error, after MaxModelFailures
// failed calls in a row (a replay miss at once).
func TestModelFailureAbortsTheEpisode(t *testing.T) {
	closed, err := stubmodel.UnreachableURL()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := llm.OpenCache(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	replay := fastRetries(stubURL(t, stubmodel.Echo))
	replay.Cache, replay.CacheMode = cache, llm.CacheReplay
	p := plant(t, "A5C12-1")
	for _, tc := range []struct {
		name  string
		cfg   llm.Config
		class string
		calls int64 // failed calls before the abort
	}{
		{"unreachable", fastRetries(closed), llm.ClassTransport, 3},
		{"401", fastRetries(stubURL(t, func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(401, "bad key") })), llm.ClassAuth, 3},
		{"replay miss", replay, llm.ClassCacheMiss, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Concurrency = 1 // one call at a time: the count of calls made is exact
			cl, err := llm.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := llmctl.New("graph", map[string]llmctl.Model{"": {Name: "stub", Client: cl}})
			if err != nil {
				t.Fatal(err)
			}
			r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 1, Mode: coord.Centralized(), Controller: c})
			if !errors.Is(r.Err, coord.ErrAbort) || llm.ErrorClass(r.Err) != tc.class {
				t.Fatalf("Result.Err = %v; want an abort of class %s", r.Err, tc.class)
			}
			if r.Metrics.Status != string(factory.Aborted) || r.Metrics.GLlm != 0 {
				t.Errorf("status %s, G_llm %d", r.Metrics.Status, r.Metrics.GLlm)
			}
			// The calls of the aborting step all ran; at least the threshold failed.
			if f := cl.Stats().Failures(); f < tc.calls || int(f) > r.Metrics.GFb {
				t.Errorf("%d failed calls, %d fallbacks; want at least %d failures", f, r.Metrics.GFb, tc.calls)
			}
		})
	}
}

// Unusable replies, a failure followed by replies, and a cancelled
// episode do not abort; AbortOnModelError makes the first failure abort.
func TestWhatDoesNotAbort(t *testing.T) {
	p := plant(t, "A3C9-1")
	run := func(t *testing.T, ctx context.Context, h func(stubmodel.ChatRequest) stubmodel.Reply, abortOnError bool) harness.Result {
		c := oneAttempt(t, stubURL(t, h))
		c.AbortOnModelError = abortOnError
		return harness.Run(ctx, harness.Episode{Plant: p, Seed: 1, Mode: coord.Centralized(), Controller: c})
	}
	prose := func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Text("I would rather not decide this one.")
	}
	t.Run("unusable replies", func(t *testing.T) {
		r := run(t, context.Background(), prose, true)
		if r.Err != nil || r.Metrics.Status == string(factory.Aborted) || r.Metrics.GFb != r.Metrics.Secondary.Decisions {
			t.Errorf("err %v, status %s, G_fb %d of %d", r.Err, r.Metrics.Status, r.Metrics.GFb, r.Metrics.Secondary.Decisions)
		}
	})
	oneFailure := func() func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Sequence(stubmodel.Status(500, "once"), stubmodel.Text("prose"))
	}
	t.Run("one failure", func(t *testing.T) {
		if r := run(t, context.Background(), oneFailure(), false); r.Err != nil || r.Metrics.Status == string(factory.Aborted) {
			t.Errorf("err %v, status %s", r.Err, r.Metrics.Status)
		}
	})
	t.Run("one failure, AbortOnModelError", func(t *testing.T) {
		r := run(t, context.Background(), oneFailure(), true)
		if !errors.Is(r.Err, coord.ErrAbort) || !strings.Contains(r.Err.Error(), "500") || r.Metrics.Status != string(factory.Aborted) {
			t.Errorf("err %v, status %s", r.Err, r.Metrics.Status)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := run(t, ctx, prose, true)
		if r.Err != nil || r.Metrics.Status == string(factory.Aborted) || r.Metrics.GLlm != 0 {
			t.Errorf("err %v, status %s, G_llm %d", r.Err, r.Metrics.Status, r.Metrics.GLlm)
		}
	})
}

// Replies with an empty "choices" list fail their calls, but the tokens
// the server reported with them count in the audit and the metrics.
func TestEmptyChoicesTokensCount(t *testing.T) {
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.NoChoices(7, 3)
	})
	t.Cleanup(srv.Close)
	c := oneAttempt(t, srv.URL)
	// Three failures in a row abort the episode; its metrics count them.
	r := harness.Run(context.Background(), harness.Episode{Plant: plant(t, "A3C9-1"), Seed: 1, Mode: coord.Centralized(), Controller: c})
	if !errors.Is(r.Err, coord.ErrAbort) {
		t.Fatalf("err %v", r.Err)
	}
	n := int64(srv.Count())
	if sec := r.Metrics.Secondary; n == 0 || sec.PromptTokens != 7*n || sec.CompletionTokens != 3*n {
		t.Errorf("%d calls; metrics count %d + %d tokens, want %d + %d", n, sec.PromptTokens, sec.CompletionTokens, 7*n, 3*n)
	}
}

// One role's model down while the others answer (issue 32: the cell
// model answering 500 on every call) is an outage: the failures are
// counted per role, so the other roles' replies do not hide it, and the
// episode aborts once the cell role has failed MaxModelFailures calls in
// a row.
func TestOneRoleOutageAborts(t *testing.T) {
	_, good := stubServer(t, "builtin")
	down := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(500, "cell model down") })
	t.Cleanup(down.Close)
	client := func(base string) *llm.Client {
		cfg := fastRetries(base)
		cfg.MaxAttempts, cfg.Concurrency = 1, 1
		cl, err := llm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	cell := client(down.URL)
	c, err := llmctl.New("graph", map[string]llmctl.Model{"": {Name: "good", Client: client(good.URL + "/v1")}, "cell": {Name: "down", Client: cell}})
	if err != nil {
		t.Fatal(err)
	}
	r := harness.Run(context.Background(), harness.Episode{Plant: plant(t, "A3C9-1"), Seed: 1, Mode: coord.HolonicHybrid(), Controller: c})
	if !errors.Is(r.Err, coord.ErrAbort) || !strings.Contains(r.Err.Error(), "role cell") || r.Metrics.Status != string(factory.Aborted) {
		t.Fatalf("err %v, status %s (G_fb %d, G_llm %d); want an abort naming role cell", r.Err, r.Metrics.Status, r.Metrics.GFb, r.Metrics.GLlm)
	}
	if n := down.Count(); n != llmctl.DefaultMaxModelFailures {
		t.Errorf("the cell model was called %d times before the abort, want %d", n, llmctl.DefaultMaxModelFailures)
	}
	if r.Metrics.GLlm == 0 {
		t.Error("the other roles' answers were not counted (G_llm 0): the outage test needs them to interleave")
	}
}
