package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory that a killed run left with some artifacts only is reported
// as incomplete and interrupted, with every missing file named, not as the
// first file that cannot be opened.
func TestDirIncomplete(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{fileTrace, fileDecisions} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Dir(dir)
	if err == nil {
		t.Fatal("Dir accepted a partial run directory")
	}
	for _, want := range []string{"incomplete run directory", "instance.json, manifest.json, metrics.json, messages.jsonl", "interrupted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := Dir(filepath.Join(dir, fileTrace)); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file given as the directory: %v", err)
	}
}

// A run directory whose JSON documents are not plain files (a directory,
// and on Unix a FIFO, which would block a plain read) is refused with the
// file named, never read.
func TestDirRefusesNonRegularJSON(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{fileManifest, fileMetrics, fileTrace, fileDecisions, fileMessages} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, fileInstance), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Dir(dir)
	if err == nil || !strings.Contains(err.Error(), "instance.json") || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Dir with a directory as instance.json: %v", err)
	}
}
