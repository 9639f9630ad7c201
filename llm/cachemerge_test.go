package llm

import (
	"context"
	"path/filepath"
	"testing"
)

func TestCacheMerge(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, err := OpenCache(filepath.Join(dir, "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenCache(filepath.Join(dir, "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.put(ctx, "k1", "r1", cacheEntry{Content: "a1"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, err := b.put(ctx, k, "r", cacheEntry{Content: "b-" + k}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	n, err := a.Merge(ctx, filepath.Join(dir, "b.db"))
	if err != nil || n != 2 {
		t.Fatalf("Merge = %d, %v; want 2 added", n, err)
	}
	if e, ok, _ := a.get(ctx, "k1"); !ok || e.Content != "a1" {
		t.Errorf("k1 = %+v: the existing response must be kept", e)
	}
	if e, ok, _ := a.get(ctx, "k3"); !ok || e.Content != "b-k3" {
		t.Errorf("k3 = %+v, want b-k3", e)
	}
	if n, err := a.Merge(ctx, filepath.Join(dir, "b.db")); err != nil || n != 0 {
		t.Errorf("second Merge = %d, %v; want 0 (idempotent)", n, err)
	}
	if _, err := a.Merge(ctx, filepath.Join(dir, "missing.db")); err == nil {
		t.Error("merging a missing file must fail")
	}
}
