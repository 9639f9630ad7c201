package untrusted

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// A Terminal writes what Printable makes of a stream, whatever the
// writes' boundaries: a rune cut in two is joined, an escape sequence cut
// in two is neutralised on both sides.
func TestTerminal(t *testing.T) {
	in := "model é\x1b]0;pwned\x07 ✓\u202eevil\n"
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := NewTerminal(&b)
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
				t.Fatalf("cut %d: Write = %d, %v", cut, n, err)
			}
		}
		if want := Printable(in); b.String() != want {
			t.Errorf("cut %d: %q, want %q", cut, b.String(), want)
		}
	}
	var b bytes.Buffer
	w := NewTerminal(&b)
	w.Write([]byte("a\xe2\x9c")) // a rune that never completes
	w.Write([]byte("b"))
	if b.String() != "a\uFFFD\uFFFDb" {
		t.Errorf("an incomplete rune: %q", b.String())
	}
	if NewTerminal(w) != w {
		t.Error("a Terminal is wrapped twice")
	}
	if Raw(w) != &b || Raw(&b) != &b {
		t.Error("Raw does not give the writer under a Terminal")
	}
}

// Concurrent writers (a suite's workers and its progress display) do not
// race on the kept bytes (go test -race).
func TestTerminalConcurrent(t *testing.T) {
	var mu sync.Mutex
	var b bytes.Buffer
	w := NewTerminal(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	}))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte("line ✓\n"))
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line ✓\n"); got != 800 {
		t.Errorf("%d whole lines, want 800", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
