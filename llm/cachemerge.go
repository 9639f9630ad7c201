package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Merge copies into c the responses of the cache file at path that c
// does not hold yet (a key present in both keeps c's response), and
// returns how many it added. It lets per-process caches (a distributed
// sweep's workers each write their own) become one cache that a replay
// reads offline. The file must be a cache of this schema; it is only
// read.
func (c *Cache) Merge(ctx context.Context, path string) (int, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return 0, fmt.Errorf("llm: cache merge: bad path %q", path)
	}
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("llm: cache merge: %w", err)
	}
	// Open it as a cache first: that checks its schema (and adds a missing
	// column), so the copy below reads the columns it names.
	src, err := OpenCache(path)
	if err != nil {
		return 0, err
	}
	if err := src.Close(); err != nil {
		return 0, err
	}
	conn, err := c.db.Conn(ctx) // ATTACH holds for one connection
	if err != nil {
		return 0, fmt.Errorf("llm: cache %s: %w", c.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`, path); err != nil {
		return 0, fmt.Errorf("llm: cache merge %s: %w", path, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE src`)
	var added int64
	err = retryBusy(func() error {
		res, err := conn.ExecContext(ctx,
			`INSERT INTO main.responses (key, request, content, model, finish_reason, prompt_tokens, completion_tokens, tool_calls, prompt_cached_tokens)
			 SELECT key, request, content, model, finish_reason, prompt_tokens, completion_tokens, tool_calls, prompt_cached_tokens FROM src.responses
			 WHERE true ON CONFLICT (key) DO NOTHING`)
		if err != nil {
			return err
		}
		added, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("llm: cache merge %s into %s: %w", path, c.path, err)
	}
	if added < 0 {
		return 0, errors.New("llm: cache merge: no row count")
	}
	return int(added), nil
}
