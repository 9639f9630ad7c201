package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyTree bounds the bytes it copies, not the sizes it saw: a file that
// grows past the bound while the tree is copied fails the copy, and no
// more than the bound (plus the one byte that shows the excess) is
// written.
func TestCopyTreeBoundsBytesCopied(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(filepath.Join(src, "a"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "b"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Within the bound as walked (20 of 25 bytes); b grows by 1,000
	// bytes just before it is copied.
	grow := func(path string) {
		if filepath.Base(path) != "b" {
			return
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	err := copyTree(src, dst, 25, grow)
	if err == nil || !strings.Contains(err.Error(), "more than 25 bytes") || !strings.Contains(err.Error(), filepath.Join(src, "b")) {
		t.Errorf("copying a tree whose file grew past the bound: %v (want an error naming %s and the bound)", err, filepath.Join(src, "b"))
	}
	if fi, err := os.Stat(filepath.Join(dst, "b")); err == nil && fi.Size() > 25-10+1 {
		t.Errorf("%d bytes of b copied (want at most the 15 left of the bound, and one more)", fi.Size())
	}

	// Without a bound the copy is whole; within the bound too.
	out := filepath.Join(t.TempDir(), "out")
	if err := CopyTree(src, out, 0); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "b")); len(b) != 1010 {
		t.Errorf("unbounded copy of b: %d bytes, want 1010", len(b))
	}
	if err := os.WriteFile(filepath.Join(src, "b"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "out")
	if err := CopyTree(src, out, 20); err != nil {
		t.Fatalf("a tree of exactly the bound: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "b")); string(b) != "0123456789" {
		t.Errorf("b copied as %q", b)
	}
}
