//go:build unix

package factory

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/inputfile/inputfiletest"
)

// TestLoadFileRefusesNonRegular: a symlink to /dev/zero exhausted memory
// and a FIFO hung; an oversized file is refused before it is parsed.
func TestLoadFileRefusesNonRegular(t *testing.T) {
	for path, want := range inputfiletest.Refused(t, ".yaml", MaxFileBytes) {
		if _, err := Resolve(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
	}
}
