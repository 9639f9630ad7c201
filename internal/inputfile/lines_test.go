package inputfile

import (
	"errors"
	"strings"
	"testing"
)

// Lines passes every line, blank ones included, without its terminator,
// numbered from 1; a line over the bound stops it with an error naming the
// file, the line and the bound; fn's error is reported at its line.
func TestLines(t *testing.T) {
	var got []string
	err := Lines(strings.NewReader("a\r\n\nbb\nccc"), "x.jsonl", "run log", 8, func(no int, line []byte) error {
		got = append(got, string(line))
		return nil
	})
	if err != nil || strings.Join(got, "|") != "a||bb|ccc" {
		t.Errorf("lines %q, %v", got, err)
	}
	err = Lines(strings.NewReader("ok\n"+strings.Repeat("x", 9)+"\n"), "x.jsonl", "run log", 8, func(int, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "x.jsonl:2: a line longer than 8 bytes") || !strings.Contains(err.Error(), "run log") {
		t.Errorf("a long line: %v", err)
	}
	bad := errors.New("bad record")
	err = Lines(strings.NewReader("a\nb\n"), "x.jsonl", "run log", 8, func(no int, _ []byte) error {
		if no == 2 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || !strings.HasPrefix(err.Error(), "x.jsonl:2: ") {
		t.Errorf("fn's error: %v", err)
	}
}
