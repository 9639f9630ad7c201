package llm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A reply cached from one endpoint replays from another base URL (a stub
// on a new port, a server moved): the key is the model and the request.
// With CacheKeyURL the URL is in the key, and a new port misses. A cache
// written when keys always held the URL (the CacheKeyURL form) still
// replays for a default client at that URL.
func TestCacheKeySurvivesANewPort(t *testing.T) {
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "which job next?"}}
	srv := stubmodel.NewServer(stubmodel.Echo)
	defer srv.Close()
	moved, err := stubmodel.UnreachableURL() // another port, nothing listening
	if err != nil {
		t.Fatal(err)
	}
	for _, keyURL := range []bool{false, true} {
		cache := openCache(t)
		first := newClient(t, srv, func(c *llm.Config) { c.Cache, c.CacheKeyURL = cache, keyURL })
		want, err := first.Complete(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		replay := newClient(t, srv, func(c *llm.Config) {
			c.BaseURL, c.Cache, c.CacheMode, c.CacheKeyURL = moved, cache, llm.CacheReplay, keyURL
		})
		got, err := replay.Complete(ctx, msgs)
		switch {
		case !keyURL && (err != nil || !got.Cached || got.Content != want.Content):
			t.Errorf("default key: a new port does not replay: %v", err)
		case keyURL && !errors.Is(err, llm.ErrCacheMiss):
			t.Errorf("CacheKeyURL: a new port replayed (%v)", err)
		}
		if keyURL { // the old form, read by a default client at the same URL
			old := newClient(t, srv, func(c *llm.Config) { c.Cache, c.CacheMode = cache, llm.CacheReplay })
			if got, err := old.Complete(ctx, msgs); err != nil || got.Content != want.Content {
				t.Errorf("a key with the URL is not found by a default client: %v", err)
			}
		}
	}
}
