//go:build unix

package task

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadFileRefusesNonRegular: a symlink to /dev/zero exhausted memory
// and a FIFO hung; an oversized file is refused before it is parsed.
func TestLoadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "I-01_n2.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"case_id": "`+strings.Repeat("x", MaxFileBytes)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "is not a regular file", zero: "is not a regular file", big: "larger than the limit"} {
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
	}
}
