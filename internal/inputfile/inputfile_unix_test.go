//go:build unix

package inputfile

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/inputfile/inputfiletest"
)

// TestRefuseNonRegular reads a FIFO with no writer (whose open would
// block), a symlink to /dev/zero (which would never end), a file over the
// cap and a directory: each is refused at once, naming what it is.
func TestRefuseNonRegular(t *testing.T) {
	files := inputfiletest.Refused(t, ".yaml", 1<<20)
	files[t.TempDir()] = "directory"
	for path, want := range files {
		_, err := Read(path, "task file", 1<<20)
		if err == nil || !strings.Contains(err.Error(), "task file "+path+" is ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a refusal naming %q", path, err, want)
		}
		// Open (streamed logs) refuses the same, but for the size cap,
		// which is the reader's.
		if want == "larger than the limit" {
			continue
		}
		f, err := Open(path, "run log")
		if err == nil {
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open %s: got %v, want a refusal naming %q", path, err, want)
		}
	}
}
