package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPythonUnittest: a passing test passes; a skipped one, a failing one
// and a discovery that finds none fail the Go test.
func TestPythonUnittest(t *testing.T) {
	py := LookPath(t, "python3")
	for _, tc := range []struct {
		name, src string
		fail      bool
	}{
		{"passes", "def test_ok(self): pass", false},
		{"skipped", "@unittest.skip('no tool')\n    def test_skip(self): pass", true},
		{"fails", "def test_bad(self): self.fail('no')", true},
		{"none", "", true},
	} {
		dir := t.TempDir()
		if tc.src != "" {
			body := "import unittest\n\nclass T(unittest.TestCase):\n    " + tc.src + "\n"
			if err := os.WriteFile(filepath.Join(dir, "test_x.py"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := &recorder{TB: t}
		PythonUnittest(r, py, dir, "")
		if r.failed != tc.fail {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fail)
		}
	}
}
