package llm_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// withUsage answers "ok" reporting usage u.
func withUsage(u stubmodel.Usage) func(stubmodel.ChatRequest) stubmodel.Reply {
	return func(stubmodel.ChatRequest) stubmodel.Reply {
		r := stubmodel.Text("ok")
		r.Usage = &u
		return r
	}
}

// TestPromptCachedTokensFromServer: the provider's prompt-cache hits
// (usage.prompt_tokens_details.cached_tokens) of a loopback server reach
// Response.Usage, Stats and Tally; values no honest server sends are
// clamped to [0, prompt_tokens].
func TestPromptCachedTokensFromServer(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		prompt, cached, want int64
	}{
		{"a hit", 100, 64, 64},
		{"the whole prompt", 100, 100, 100},
		{"none reported", 100, 0, 0},
		{"negative", 100, -5, 0},
		{"above the prompt", 100, 150, 100},
		{"huge", 100, 1 << 62, 100},
		{"no prompt tokens", 0, 7, 0},
	} {
		srv := startServer(t, withUsage(stubmodel.Usage{PromptTokens: tc.prompt, CompletionTokens: 3, PromptCachedTokens: tc.cached}))
		c := newClient(t, srv, func(cfg *llm.Config) { cfg.Endpoints = llm.NewEndpoints() })
		resp, err := c.Complete(context.Background(), user("hi"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := llm.Usage{PromptTokens: tc.prompt, CompletionTokens: 3, PromptCachedTokens: tc.want}
		if resp.Usage != want {
			t.Errorf("%s: usage %+v, want %+v", tc.name, resp.Usage, want)
		}
		if got := c.Stats().Tokens(); got != want {
			t.Errorf("%s: stats %+v, want %+v", tc.name, got, want)
		}
	}

	// Tally sums them; String shows them only when there are some.
	var tl llm.Tally
	tl.Add("a", llm.Usage{PromptTokens: 10, CompletionTokens: 1, PromptCachedTokens: 4})
	tl.Add("a", llm.Usage{PromptTokens: 10, CompletionTokens: 1, PromptCachedTokens: 6})
	if u, n := tl.Get("a"); n != 2 || u != (llm.Usage{PromptTokens: 20, CompletionTokens: 2, PromptCachedTokens: 10}) {
		t.Errorf("tally: %d calls, %+v", n, u)
	}
	if s := (llm.Usage{PromptTokens: 20, CompletionTokens: 2, PromptCachedTokens: 10}).String(); s != "20 prompt (10 prompt-cached) + 2 completion tokens" {
		t.Errorf("String = %q", s)
	}
	if s := (llm.Usage{PromptTokens: 20, CompletionTokens: 2}).String(); s != "20 prompt + 2 completion tokens" {
		t.Errorf("String = %q", s)
	}
}

// TestPromptCachedTokensJSON: a Usage without prompt-cache hits marshals
// exactly as before the field existed (artifacts stay byte-identical).
func TestPromptCachedTokensJSON(t *testing.T) {
	b, _ := json.Marshal(llm.Usage{PromptTokens: 1, CompletionTokens: 2})
	if string(b) != `{"prompt_tokens":1,"completion_tokens":2}` {
		t.Errorf("without hits: %s", b)
	}
	b, _ = json.Marshal(llm.Usage{PromptTokens: 5, CompletionTokens: 2, PromptCachedTokens: 4})
	if string(b) != `{"prompt_tokens":5,"completion_tokens":2,"prompt_cached_tokens":4}` {
		t.Errorf("with hits: %s", b)
	}
}

// TestPromptCachedTokensOfUnusableReply: a reply without choices fails
// the call, and its usage, prompt-cache hits included (and clamped), is
// in the Error and in Stats.
func TestPromptCachedTokensOfUnusableReply(t *testing.T) {
	srv := startServer(t, func(stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.Raw(200, "application/json",
			`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[],`+
				`"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":9}}}`)
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxAttempts = 1; cfg.Endpoints = llm.NewEndpoints() })
	_, err := c.Complete(context.Background(), user("hi"))
	want := llm.Usage{PromptTokens: 7, CompletionTokens: 3, PromptCachedTokens: 7}
	var e *llm.Error
	if !errors.As(err, &e) || e.Usage != want {
		t.Fatalf("failed call: %v, usage %+v, want %+v", err, e, want)
	}
	if got := c.Stats().Tokens(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestCachePromptCachedTokensRoundTrip: the response cache stores the
// prompt-cache hits of a reply and replays them, from the file after it
// is reopened, so a replay's usage equals the live run's.
func TestCachePromptCachedTokensRoundTrip(t *testing.T) {
	srv := startServer(t, withUsage(stubmodel.Usage{PromptTokens: 50, CompletionTokens: 2, PromptCachedTokens: 32}))
	path := filepath.Join(t.TempDir(), "llm.db")
	cache, err := llm.OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	live, err := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache }).Complete(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	cache.Close()
	want := llm.Usage{PromptTokens: 50, CompletionTokens: 2, PromptCachedTokens: 32}
	if live.Cached || live.Usage != want {
		t.Fatalf("live: %+v", live)
	}
	cache = openCacheAt(t, path)
	replay, err := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache; cfg.CacheMode = llm.CacheReplay }).
		Complete(context.Background(), user("hi"))
	if err != nil || !replay.Cached || replay.Usage != want {
		t.Fatalf("replay: %+v, %v", replay, err)
	}
	if srv.Count() != 1 {
		t.Errorf("server saw %d requests", srv.Count())
	}
}

// oldSchema is the responses table as written before the provider's
// prompt-cache hits were recorded (with tool_calls, without
// prompt_cached_tokens), and oldInsert the statement that build stored a
// reply with.
const (
	oldSchema = `CREATE TABLE IF NOT EXISTS responses (
			key               TEXT PRIMARY KEY,
			request           TEXT NOT NULL,
			content           TEXT NOT NULL,
			model             TEXT NOT NULL,
			finish_reason     TEXT NOT NULL,
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL,
			tool_calls        TEXT NOT NULL DEFAULT ''
		) WITHOUT ROWID`
	oldInsert = `INSERT INTO responses (key, request, content, model, finish_reason, prompt_tokens, completion_tokens, tool_calls)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`
)

// writeOldCache creates a cache file at path as the build before
// prompt_cached_tokens did, holding the pinned request's reply.
func writeOldCache(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
		`INSERT INTO meta (k, v) VALUES ('schema', '1') ON CONFLICT (k) DO NOTHING`,
		oldSchema,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(oldInsert, pinnedKey, "{}", "J3", "m-served", "stop", 11, 2, ""); err != nil {
		t.Fatal(err)
	}
}

// TestCacheWithoutPromptCachedColumn: a cache file written before the
// prompt_cached_tokens column opens (twice: the second open finds the
// column added), replays its old entry with no prompt-cache hits, stores
// and replays a new entry with some, still takes a row from a build
// that does not know the column (its INSERT names its columns), and
// merges into a new cache.
func TestCacheWithoutPromptCachedColumn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.db")
	writeOldCache(t, path)
	old := llm.Usage{PromptTokens: 11, CompletionTokens: 2}
	for round := range 2 {
		cache, err := llm.OpenCache(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		resp, err := pinnedClient(t, cache, llm.CacheReplay).Complete(context.Background(), pinnedRequest)
		if err != nil || !resp.Cached || resp.Content != "J3" || resp.Usage != old {
			t.Fatalf("round %d: old entry replayed as %+v, %v", round, resp, err)
		}
		cache.Close()
	}

	srv := startServer(t, withUsage(stubmodel.Usage{PromptTokens: 40, CompletionTokens: 1, PromptCachedTokens: 24}))
	cache := openCacheAt(t, path)
	want := llm.Usage{PromptTokens: 40, CompletionTokens: 1, PromptCachedTokens: 24}
	if r, err := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache }).Complete(context.Background(), user("new")); err != nil || r.Usage != want {
		t.Fatalf("new entry: %+v, %v", r, err)
	}
	if r, err := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = cache; cfg.CacheMode = llm.CacheReplay }).
		Complete(context.Background(), user("new")); err != nil || !r.Cached || r.Usage != want {
		t.Fatalf("new entry replayed: %+v, %v", r, err)
	}

	// An older build writing into the migrated file.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(oldInsert, "k-old-build", "{}", "x", "m", "stop", 5, 1, ""); err != nil {
		t.Errorf("an old build's insert into the migrated file: %v", err)
	}
	var pc int64
	if err := db.QueryRow(`SELECT prompt_cached_tokens FROM responses WHERE key = 'k-old-build'`).Scan(&pc); err != nil || pc != 0 {
		t.Errorf("old build's row: prompt_cached_tokens %d, %v", pc, err)
	}
	db.Close()

	// Merging an old file into a new cache.
	other := filepath.Join(dir, "other.db")
	writeOldCache(t, other)
	merged := openCacheAt(t, filepath.Join(dir, "merged.db"))
	if n, err := merged.Merge(context.Background(), other); err != nil || n != 1 {
		t.Fatalf("merge of an old file: %d, %v", n, err)
	}
	if n, err := merged.Merge(context.Background(), path); err != nil || n != 2 {
		t.Fatalf("merge of the migrated file: %d, %v", n, err)
	}
	if r, err := pinnedClient(t, merged, llm.CacheReplay).Complete(context.Background(), pinnedRequest); err != nil || r.Usage != old {
		t.Errorf("merged old entry: %+v, %v", r, err)
	}
	if r, err := newClient(t, srv, func(cfg *llm.Config) { cfg.Cache = merged; cfg.CacheMode = llm.CacheReplay }).
		Complete(context.Background(), user("new")); err != nil || r.Usage != want {
		t.Errorf("merged new entry: %+v, %v", r, err)
	}
}

// TestCacheClampsStoredPromptCachedTokens: a cache row whose
// prompt_cached_tokens exceeds its prompt tokens (a file written by
// another program) replays clamped, as a server's figure would be.
func TestCacheClampsStoredPromptCachedTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	cache := openCacheAt(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct{ stored, want int64 }{{500, 11}, {-3, 0}} {
		if _, err := db.Exec(`DELETE FROM responses`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO responses (key, request, content, model, finish_reason, prompt_tokens, completion_tokens, prompt_cached_tokens)
			VALUES (?, '{}', 'J3', 'm', 'stop', 11, 2, ?)`, pinnedKey, tc.stored); err != nil {
			t.Fatal(err)
		}
		r, err := pinnedClient(t, cache, llm.CacheReplay).Complete(context.Background(), pinnedRequest)
		if err != nil || r.Usage.PromptCachedTokens != tc.want {
			t.Errorf("stored %d: replayed %+v, %v", tc.stored, r, err)
		}
	}
}
