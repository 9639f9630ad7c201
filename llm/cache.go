package llm

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
	sqlite3 "modernc.org/sqlite/lib"
)

// cacheSchema is bumped when the table layout or the key derivation changes
// incompatibly; a cache file with another version is refused rather than
// misread. The key holds the base URL only with Config.CacheKeyURL (the
// omitempty base_url: such a key is the key of before, when it always
// did); without it, a lookup that misses tries that older form too, so a
// cache written before still replays. Compatible additions (the tool_calls and prompt_cached_tokens
// columns, the omitempty tool fields of the key) keep it: init adds a
// missing column in place, and keys of requests without tools are
// unchanged.
const cacheSchema = "1"

// Cache is a persistent response cache in one SQLite file (WAL mode). It is
// safe for concurrent use by many goroutines and by several processes sharing
// the file (writers wait up to busy_timeout = 10 s for each other). One Cache
// may serve many Clients: the key includes the model (and the base URL
// with Config.CacheKeyURL).
//
// Each row holds the key, the canonical request it was derived from (base
// URL if keyed, model, messages, generation parameters: never headers or the API key),
// and the response content, tool calls, model, finish reason and usage
// (prompt, completion and prompt-cached tokens).
type Cache struct {
	db   *sql.DB
	path string

	mu      sync.Mutex
	flights map[string]*flight // in-process deduplication of identical misses
}

type flight struct {
	done chan struct{}
	resp *Response // nil if the leader failed
}

type cacheEntry struct {
	Content      string
	ToolCalls    []ToolCall // stored as JSON; '' for none
	Model        string
	FinishReason string
	Usage        Usage
}

// OpenCache opens (creating if needed) the cache file at path.
func OpenCache(path string) (*Cache, error) {
	if path == "" {
		return nil, errors.New("llm: cache: empty path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("llm: cache %s: path must not contain '?' or '#'", path)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("llm: cache %s: %w", path, err)
		}
	}
	// busy_timeout first, so that the journal_mode change waits too; immediate
	// transactions take the write lock up front (a deferred one that upgrades
	// from read to write gets SQLITE_BUSY without waiting).
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("llm: cache %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	c := &Cache{db: db, path: path, flights: make(map[string]*flight)}
	if err := retryBusy(c.init); err != nil {
		db.Close()
		return nil, fmt.Errorf("llm: cache %s: %w", path, err)
	}
	return c, nil
}

// busyWait bounds how long opening a cache waits for other processes that
// hold the file's lock (beyond SQLite's own busy_timeout, which does not
// cover every lock a fresh file's first connections take: switching a new
// file to WAL while another process does the same fails at once).
const busyWait = 30 * time.Second

// retryBusy runs f again while it fails because the database is busy or
// locked by another connection, with a growing pause, for up to busyWait.
func retryBusy(f func() error) error {
	deadline := time.Now().Add(busyWait)
	pause := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED
// (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

func (c *Cache) init() error {
	ctx := context.Background()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
		`INSERT INTO meta (k, v) VALUES ('schema', '` + cacheSchema + `') ON CONFLICT (k) DO NOTHING`,
		`CREATE TABLE IF NOT EXISTS responses (
			key               TEXT PRIMARY KEY,
			request           TEXT NOT NULL,
			content           TEXT NOT NULL,
			model             TEXT NOT NULL,
			finish_reason     TEXT NOT NULL,
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL,
			tool_calls        TEXT NOT NULL DEFAULT '',
			prompt_cached_tokens INTEGER NOT NULL DEFAULT 0
		) WITHOUT ROWID`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	// Files written before tool calling lack the tool_calls column, and
	// files written before the provider's prompt-cache hits were recorded
	// lack prompt_cached_tokens: add them (old rows read as '' and 0, a
	// reply without tool calls or prompt-cache hits). Builds that predate
	// a column name their columns and so still read and write such a file
	// (their rows get the default). In this order, a migrated file has a
	// new file's columns in the same order.
	for _, col := range []struct{ name, decl string }{
		{"tool_calls", `tool_calls TEXT NOT NULL DEFAULT ''`},
		{"prompt_cached_tokens", `prompt_cached_tokens INTEGER NOT NULL DEFAULT 0`},
	} {
		var has int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM pragma_table_info('responses') WHERE name = ?`, col.name).Scan(&has); err != nil {
			return err
		}
		if has == 0 {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE responses ADD COLUMN `+col.decl); err != nil {
				return fmt.Errorf("adding the %s column: %w", col.name, err)
			}
		}
	}
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = 'schema'`).Scan(&v); err != nil {
		return err
	}
	if v != cacheSchema {
		return fmt.Errorf("cache schema version %s, this build reads %s: use a new cache file", v, cacheSchema)
	}
	return tx.Commit()
}

// Path returns the file path the cache was opened with.
func (c *Cache) Path() string { return c.path }

// Len returns the number of cached responses.
func (c *Cache) Len() (int, error) {
	var n int
	err := c.db.QueryRow(`SELECT count(*) FROM responses`).Scan(&n)
	return n, err
}

// Close closes the database. Clients using the cache must not be used after.
func (c *Cache) Close() error { return c.db.Close() }

func (c *Cache) get(ctx context.Context, key string) (cacheEntry, bool, error) {
	var e cacheEntry
	var calls string
	err := c.db.QueryRowContext(ctx,
		`SELECT content, model, finish_reason, prompt_tokens, completion_tokens, tool_calls, prompt_cached_tokens FROM responses WHERE key = ?`, key).
		Scan(&e.Content, &e.Model, &e.FinishReason, &e.Usage.PromptTokens, &e.Usage.CompletionTokens, &calls, &e.Usage.PromptCachedTokens)
	if errors.Is(err, sql.ErrNoRows) {
		return cacheEntry{}, false, nil
	}
	if err != nil {
		return cacheEntry{}, false, fmt.Errorf("llm: cache %s: read: %w", c.path, err)
	}
	// The file may have been written by another program: keep the
	// prompt-cache hits within the prompt, as from a server.
	e.Usage.PromptCachedTokens = clampPromptCached(e.Usage.PromptCachedTokens, e.Usage.PromptTokens)
	if calls != "" {
		if err := json.Unmarshal([]byte(calls), &e.ToolCalls); err != nil {
			return cacheEntry{}, false, fmt.Errorf("llm: cache %s: read: tool_calls of an entry is not valid JSON: %w", c.path, err)
		}
		if len(e.ToolCalls) == 0 {
			e.ToolCalls = nil
		}
	}
	return e, true, nil
}

// put stores e under key unless the key is already present (another
// goroutine or process got there first), and returns what the cache now
// holds, so that every caller sees the same response for one key.
func (c *Cache) put(ctx context.Context, key, request string, e cacheEntry) (cacheEntry, error) {
	calls := ""
	if len(e.ToolCalls) > 0 {
		b, err := json.Marshal(e.ToolCalls) // strings only: cannot fail
		if err != nil {
			return cacheEntry{}, fmt.Errorf("llm: cache %s: write: %w", c.path, err)
		}
		calls = string(b)
	}
	res, err := c.db.ExecContext(ctx,
		`INSERT INTO responses (key, request, content, model, finish_reason, prompt_tokens, completion_tokens, tool_calls, prompt_cached_tokens)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, request, e.Content, e.Model, e.FinishReason, e.Usage.PromptTokens, e.Usage.CompletionTokens, calls, e.Usage.PromptCachedTokens)
	if err != nil {
		return cacheEntry{}, fmt.Errorf("llm: cache %s: write: %w", c.path, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return e, nil
	}
	stored, ok, err := c.get(ctx, key)
	if err != nil || !ok {
		return e, err
	}
	return stored, nil
}

// join registers a call for key. The first caller is the leader (leader =
// true) and must call land; later callers wait on f.done and use f.resp.
func (c *Cache) join(key string) (f *flight, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil {
		return f, false
	}
	f = &flight{done: make(chan struct{})}
	c.flights[key] = f
	return f, true
}

func (c *Cache) land(key string, f *flight, resp *Response) {
	c.mu.Lock()
	delete(c.flights, key)
	c.mu.Unlock()
	f.resp = resp
	close(f.done)
}

// keyRequest is everything that determines a response: it is hashed into the
// cache key and stored beside the response. Every field sent to the server
// that can change the reply belongs here; bump cacheSchema when it changes
// incompatibly. New fields must be omitempty (as Tools and the tool fields
// of Message are), so that the keys of requests not using them stay as they
// were.
type keyRequest struct {
	BaseURL  string    `json:"base_url,omitempty"` // only with Config.CacheKeyURL
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"` // as sent (see normalizeTools)
	// Temperature is omitted when not sent; a request that sends 0 has
	// the key every request had when 0 was always sent.
	Temperature         *float64 `json:"temperature,omitempty"`
	MaxCompletionTokens int      `json:"max_completion_tokens,omitempty"`
	Seed                *int64   `json:"seed,omitempty"`
	// ToolChoice and ResponseFormat are Request's, compacted.
	ToolChoice     json.RawMessage `json:"tool_choice,omitempty"`
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
}

// cacheKey returns the hex SHA-256 of the canonical JSON of r, and that JSON.
func cacheKey(r keyRequest) (key, canonical string) {
	b, err := json.Marshal(r)
	if err != nil {
		panic("llm: marshal cache key: " + err.Error()) // strings, numbers and checked JSON: cannot fail
	}
	sum := sha256.Sum256(append([]byte("coordbench/llm cache v"+cacheSchema+"\n"), b...))
	return hex.EncodeToString(sum[:]), string(b)
}
