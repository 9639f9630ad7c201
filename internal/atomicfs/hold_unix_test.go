//go:build unix

package atomicfs

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveDead removes the directories of the prefix that no one holds,
// and leaves one held (a live run's), files and other names alone.
func TestRemoveDead(t *testing.T) {
	parent := t.TempDir()
	for _, d := range []string{".tmp-a-1", ".tmp-a-2", "keep"} {
		os.MkdirAll(filepath.Join(parent, d, "x"), 0o755)
	}
	os.WriteFile(filepath.Join(parent, ".tmp-a-file"), nil, 0o644)
	release, err := HoldDir(filepath.Join(parent, ".tmp-a-2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HoldDir(filepath.Join(parent, ".tmp-a-2")); err == nil {
		t.Fatal("a held directory held twice")
	}
	if err := RemoveDead(parent, ".tmp-a-"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(parent)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 3 || names[0] != ".tmp-a-2" || names[1] != ".tmp-a-file" || names[2] != "keep" {
		t.Errorf("left %v, want the held directory, the file and keep", names)
	}
	release()
	if err := RemoveDead(parent, ".tmp-a-"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(parent, ".tmp-a-2")); err == nil {
		t.Error("a directory released is not removed")
	}
}
