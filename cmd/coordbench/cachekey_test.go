package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A silo run against coordbench llm stub (a free port) replays the next
// day from its cache with the stub gone and another port given: the key
// is the model and the request. --llm-cache-key-url keeps the URL in the
// key, and the same replay then misses.
func TestReplaySurvivesANewPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, _, done := startStub(t, ctx, "--policy", "silo-gather")
	cache := filepath.Join(t.TempDir(), "cache.db")
	args := func(base, out string, extra ...string) []string {
		return append([]string{"silo", "run", "--agent", "llm", "--llm-model", "stub", "--llm-base-url", base,
			"--task", "I-01", "--agents", "3", "--llm-cache", cache, "--out", filepath.Join(t.TempDir(), out)}, extra...)
	}
	if out, err := run(t, args(url, "live")...); err != nil || !strings.Contains(out, "S 1.000") {
		t.Fatalf("live run: %v\n%s", err, out)
	}
	if out, err := run(t, args(url, "keyed", "--llm-cache-key-url")...); err != nil || !strings.Contains(out, "S 1.000") {
		t.Fatalf("live run keyed by URL: %v\n%s", err, out)
	}
	cancel()
	<-done
	moved, err := stubmodel.UnreachableURL()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, args(moved, "replay", "--llm-cache-mode", "replay")...); err != nil || !strings.Contains(out, "S 1.000") {
		t.Errorf("replay on a new port: %v\n%s", err, out)
	}
	if out, err := run(t, args(moved, "replay-keyed", "--llm-cache-mode", "replay", "--llm-cache-key-url")...); err == nil || !strings.Contains(err.Error(), "cache miss") {
		t.Errorf("replay keyed by URL on a new port: %v\n%s", err, out)
	}
}
