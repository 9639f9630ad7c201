package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

func openCache(t testing.TB) *llm.Cache {
	t.Helper()
	return openCacheAt(t, filepath.Join(t.TempDir(), "cache", "llm.db"))
}

func openCacheAt(t testing.TB, path string) *llm.Cache {
	t.Helper()
	c, err := llm.OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCacheReadWrite(t *testing.T) {
	srv := startServer(t, stubmodel.Echo)
	cache := openCache(t)
	eps := llm.NewEndpoints() // the clients share one endpoint's Stats
	base := func(cfg *llm.Config) { cfg.Cache = cache; cfg.CacheMode = llm.CacheReadWrite; cfg.Endpoints = eps }
	c := newClient(t, srv, base)
	ctx := context.Background()

	first, err := c.Complete(ctx, user("hello"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Complete(ctx, user("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 1 {
		t.Fatalf("server saw %d requests for two identical calls, want 1", srv.Count())
	}
	if first.Cached || !second.Cached || second.Attempts != 0 || first.Attempts != 1 {
		t.Errorf("cached/attempts: first %+v, second %+v", first, second)
	}
	if second.Content != first.Content || second.Usage != first.Usage || second.FinishReason != first.FinishReason || second.Model != first.Model {
		t.Errorf("cache hit %+v differs from original %+v", second, first)
	}

	// Every part of the key: each variant is a miss once, then a hit.
	variants := []struct {
		name string
		mod  func(*llm.Config)
		msgs []llm.Message
	}{
		{"temperature", func(cfg *llm.Config) { cfg.Temperature = ptr(0.5) }, user("hello")},
		{"temperature 0", func(cfg *llm.Config) { cfg.Temperature = ptr(0.0) }, user("hello")},
		{"seed 1", func(cfg *llm.Config) { cfg.Seed = ptr(int64(1)) }, user("hello")},
		{"seed 2", func(cfg *llm.Config) { cfg.Seed = ptr(int64(2)) }, user("hello")},
		{"seed 0", func(cfg *llm.Config) { cfg.Seed = ptr(int64(0)) }, user("hello")},
		{"max tokens", func(cfg *llm.Config) { cfg.MaxTokens = 10 }, user("hello")},
		{"model", func(cfg *llm.Config) { cfg.Model = "m2" }, user("hello")},
		{"message", nil, user("hello!")},
		{"role", nil, []llm.Message{{Role: llm.RoleSystem, Content: "hello"}}},
		{"extra message", nil, []llm.Message{{Role: llm.RoleSystem, Content: "be brief"}, {Role: llm.RoleUser, Content: "hello"}}},
		{"split content", nil, []llm.Message{{Role: llm.RoleUser, Content: "hel"}, {Role: llm.RoleUser, Content: "lo"}}},
	}
	for i, v := range variants {
		vc := newClient(t, srv, func(cfg *llm.Config) {
			base(cfg)
			if v.mod != nil {
				v.mod(cfg)
			}
		})
		for rep := range 2 {
			resp, err := vc.Complete(ctx, v.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 + i; srv.Count() != want {
				t.Fatalf("%s (call %d): server count %d, want %d", v.name, rep, srv.Count(), want)
			}
			if resp.Cached != (rep == 1) {
				t.Errorf("%s (call %d): Cached = %v", v.name, rep, resp.Cached)
			}
		}
	}
	if n, err := cache.Len(); err != nil || n != 1+len(variants) {
		t.Errorf("cache holds %d entries (%v), want %d", n, err, 1+len(variants))
	}
	st := c.Stats().Snapshot()
	if st.CacheHits != int64(1+len(variants)) || st.CacheMisses != int64(1+len(variants)) {
		t.Errorf("stats = %+v", st)
	}
}

func TestCacheFailuresAreNotStored(t *testing.T) {
	srv := startServer(t, stubmodel.Sequence(stubmodel.Status(400, "bad"), stubmodel.Text("good")))
	cache := openCache(t)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache })
	if _, err := c.Complete(context.Background(), user("q")); err == nil {
		t.Fatal("no error from the 400")
	}
	resp, err := c.Complete(context.Background(), user("q"))
	if err != nil || resp.Content != "good" || resp.Cached {
		t.Fatalf("after a failure: %+v, %v", resp, err)
	}
}

func TestCacheReplayOffline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.db")
	srv := stubmodel.NewServer(func(r stubmodel.ChatRequest) stubmodel.Reply {
		rep := stubmodel.Echo(r)
		rep.Usage = &stubmodel.Usage{PromptTokens: int64(100 + r.Seq), CompletionTokens: int64(7 * (r.Seq + 1))}
		return rep
	})
	eps := llm.NewEndpoints() // the clients share one endpoint's Stats
	cfg := func(cache *llm.Cache, mode string) func(*llm.Config) {
		return func(c *llm.Config) {
			c.Cache, c.CacheMode, c.Seed, c.Temperature, c.Endpoints = cache, mode, ptr(int64(7)), ptr(0.3), eps
		}
	}
	cache, err := llm.OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	rw := newClient(t, srv, cfg(cache, llm.CacheReadWrite))
	var originals []*llm.Response
	var total llm.Usage
	for i := range 5 {
		resp, err := rw.Complete(context.Background(), user(fmt.Sprint("prompt ", i)))
		if err != nil {
			t.Fatal(err)
		}
		originals = append(originals, resp)
		total.Add(resp.Usage)
	}
	srv.Close()
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen from disk; the server is gone.
	cache = openCacheAt(t, path)
	replay := newClient(t, srv, cfg(cache, llm.CacheReplay))
	var replayed llm.Usage
	for i, orig := range originals {
		resp, err := replay.Complete(context.Background(), user(fmt.Sprint("prompt ", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Cached || resp.Content != orig.Content || resp.Usage != orig.Usage || resp.FinishReason != orig.FinishReason || resp.Model != orig.Model {
			t.Errorf("replay %d = %+v, original %+v", i, resp, orig)
		}
		replayed.Add(resp.Usage)
	}
	if replayed != total {
		t.Errorf("replayed token total %+v, original %+v", replayed, total)
	}

	// A replay miss: an error naming the key, and no request.
	live := startServer(t, stubmodel.Echo)
	for _, c := range []*llm.Client{replay, newClient(t, live, cfg(cache, llm.CacheReplay))} {
		_, err := c.Complete(context.Background(), user("never asked"))
		var miss *llm.CacheMissError
		if !errors.Is(err, llm.ErrCacheMiss) || !errors.As(err, &miss) || len(miss.Key) != 64 || !strings.Contains(err.Error(), miss.Key) {
			t.Fatalf("replay miss: err = %v", err)
		}
	}
	if live.Count() != 0 {
		t.Errorf("replay mode sent %d requests", live.Count())
	}
	if st := replay.Stats().Snapshot(); st.Requests != 5 || st.CacheMisses != 6 || st.CacheHits != 5 {
		// Shared with the read-write client on the same endpoint: its 5
		// requests and misses, then 5 replay hits and 1 replay miss.
		t.Errorf("stats after replay = %+v", st)
	}
}

func TestCacheFileHoldsNoKey(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	dir := t.TempDir()
	cache, err := llm.OpenCache(filepath.Join(dir, "llm.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, stubmodel.Sequence(stubmodel.Status(500, "oops "+testKey), stubmodel.Text("fine")))
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.APIKeyEnv = testKeyEnv; cfg.Cache = cache; cfg.Seed = ptr(int64(3)) })
	for i := range 20 {
		if _, err := c.Complete(context.Background(), user(fmt.Sprint("q", i%7))); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Requests()[1].BearerToken(); got != testKey {
		t.Fatalf("the key was not sent (%q)", got)
	}
	scan := func(when string) {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(files) == 0 {
			t.Fatal("no cache files")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, needle := range []string{testKey, "Bearer", "Authorization"} {
				if bytes.Contains(b, []byte(needle)) {
					t.Errorf("%s: %s contains %q", when, filepath.Base(f), needle)
				}
			}
		}
	}
	scan("open") // WAL and shm files included
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}
	scan("closed")
}

func TestCacheConcurrentGoroutines(t *testing.T) {
	srv := startServer(t, func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), 20*time.Millisecond)
	})
	cache := openCache(t)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache; cfg.Concurrency = 16 })
	const calls, distinct = 60, 10
	results := make([]*llm.Response, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			resp, err := c.Complete(context.Background(), user(fmt.Sprint("prompt ", i%distinct)))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = resp
		})
	}
	wg.Wait()
	// Identical requests in flight share one network call.
	if srv.Count() != distinct {
		t.Errorf("server saw %d requests for %d distinct prompts", srv.Count(), distinct)
	}
	for i, r := range results {
		if r == nil {
			continue
		}
		if want := fmt.Sprint("echo: prompt ", i%distinct); r.Content != want {
			t.Errorf("call %d: content %q, want %q", i, r.Content, want)
		}
	}
	st := c.Stats().Snapshot()
	if st.CacheMisses != distinct || st.CacheHits != calls-distinct {
		t.Errorf("stats = %+v", st)
	}
	if n, _ := cache.Len(); n != distinct {
		t.Errorf("cache holds %d entries", n)
	}
}

// TestCacheHelperProcess is the body of the subprocesses started by
// TestCacheSeveralProcesses; run directly it skips.
func TestCacheHelperProcess(t *testing.T) {
	if os.Getenv("COORDBENCH_LLM_HELPER") != "1" {
		t.Skip("helper for TestCacheSeveralProcesses")
	}
	cache := openCacheAt(t, os.Getenv("COORDBENCH_LLM_CACHE"))
	c, err := llm.New(llm.Config{BaseURL: os.Getenv("COORDBENCH_LLM_URL"), Model: "m", Cache: cache,
		RetryBaseDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 15 {
				if _, err := c.Complete(context.Background(), user(fmt.Sprint("shared ", (i+g*4)%15))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

func TestCacheSeveralProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	srv := startServer(t, func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), 5*time.Millisecond)
	})
	path := filepath.Join(t.TempDir(), "shared.db")
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCacheHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "COORDBENCH_LLM_HELPER=1", "COORDBENCH_LLM_CACHE="+path, "COORDBENCH_LLM_URL="+srv.URL)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("process %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	cache := openCacheAt(t, path)
	if n, err := cache.Len(); err != nil || n != 15 {
		t.Fatalf("cache holds %d entries (%v), want 15", n, err)
	}
	// Each process asks each prompt 4 times: 180 calls; the cache answers most.
	t.Logf("3 processes × 60 calls: server saw %d requests", srv.Count())
	if srv.Count() < 15 || srv.Count() > 45 {
		t.Errorf("server saw %d requests, want between 15 and 45", srv.Count())
	}
	replay := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache; cfg.CacheMode = llm.CacheReplay })
	for i := range 15 {
		resp, err := replay.Complete(context.Background(), user(fmt.Sprint("shared ", i)))
		if err != nil || resp.Content != fmt.Sprint("echo: shared ", i) {
			t.Errorf("replay %d: %+v, %v", i, resp, err)
		}
	}
}

func TestOpenCacheErrors(t *testing.T) {
	if _, err := llm.OpenCache(""); err == nil {
		t.Error("empty path: no error")
	}
	if _, err := llm.OpenCache(filepath.Join(t.TempDir(), "a?b.db")); err == nil {
		t.Error("path with '?': no error")
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("not a database "), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := llm.OpenCache(notDB); err == nil || !strings.Contains(err.Error(), notDB) {
		t.Errorf("not a database: err = %v", err)
	}
}
