//go:build unix

package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/inputfile/inputfiletest"
)

// TestLoadFileRefusesNonRegular: a symlink to /dev/zero exhausted memory
// and a FIFO hung; an oversized file, or one of too many values (a 16 MB
// list of digits took 500 MB to parse), is refused before it is parsed.
func TestLoadFileRefusesNonRegular(t *testing.T) {
	files := inputfiletest.Refused(t, ".json", MaxFileBytes)
	dense := filepath.Join(t.TempDir(), "dense.json")
	if err := os.WriteFile(dense, []byte("["+strings.Repeat("1,", MaxFileItems)+"1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	files[dense] = "JSON values: over the limit of 8000000"
	for path, want := range files {
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
	}
}
