package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, link} {
		got, err := Read(path, "instance file", 3)
		if err != nil || string(got) != "abc" {
			t.Errorf("%s: got %q, %v", path, got, err)
		}
	}
	if _, err := Read(p, "instance file", 2); err == nil || !strings.Contains(err.Error(), "larger than the limit of 2 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), "instance file", 2); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestControlChar(t *testing.T) {
	for _, tc := range []struct {
		s    string
		text bool
		bad  bool
	}{
		{"A5C12-1", false, false}, {"Zürich ✓", false, false}, {"a\x1b[2Jb", false, true}, {"a\x1b[2Jb", true, true},
		{"two\nlines\tok", true, false}, {"two\nlines", false, true}, {"a\u202eb", false, true}, {"\xff", true, true},
		{"a\u0085b", true, true}, {"👍🏽\u200d", true, false},
	} {
		if _, bad := ControlChar(tc.s, tc.text); bad != tc.bad {
			t.Errorf("ControlChar(%q, %v) = %v, want %v", tc.s, tc.text, bad, tc.bad)
		}
	}
}

func TestItemsBoundsValues(t *testing.T) {
	for doc, values := range map[string]int{
		"a: 1":                   2,
		"[1,2,3]":                4,
		"- 1\n- 2\n":             3,
		`{"a": [1, {"b": 2}]}`:   5,
		"k: {x: 1, y: [a, b]}\n": 7,
	} {
		if got := Items([]byte(doc)); got < values {
			t.Errorf("Items(%q) = %d, fewer than its %d values", doc, got, values)
		}
	}
}
