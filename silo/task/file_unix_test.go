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
// and a FIFO hung; an oversized file, or one of too many values (a 16 MB
// list of digits took 500 MB to parse), is refused before it is parsed.
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
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	dense := filepath.Join(dir, "dense.json")
	if err := os.WriteFile(dense, []byte("["+strings.Repeat("1,", MaxFileItems)+"1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "is not a regular file", zero: "is not a regular file", big: "larger than the limit",
		dense: "JSON values: over the limit of 8000000"} {
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
	}
}
