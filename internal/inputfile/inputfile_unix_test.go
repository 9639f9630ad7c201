//go:build unix

package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRefuseNonRegular reads a symlink to /dev/zero (which would never
// end), a FIFO with no writer (whose open would block) and a directory:
// each is refused at once, naming what it is.
func TestRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for path, want := range map[string]string{zero: "character device", fifo: "named pipe", dir: "directory"} {
		_, err := Read(path, "task file", 1<<20)
		if err == nil || !strings.Contains(err.Error(), "task file "+path+" is not a regular file") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a refusal naming a %s", path, err, want)
		}
	}
}
