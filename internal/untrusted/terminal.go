package untrusted

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Printable returns s with every control character but newline and tab
// made visible and harmless on a terminal: C0 controls (ESC, carriage
// return, backspace, ...) become their Unicode control pictures (␛, ␍,
// ␈), DEL becomes ␡, C1 controls (CSI U+009B, ...), the bidirectional
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, which
// reorder the text after them) and invalid UTF-8 bytes become U+FFFD. An
// escape sequence (CSI, OSC, ...) so loses its ESC and is shown as text.
// Text without them is returned as it is.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}

// unsafeRune: a control character a terminal may act on (not newline or
// tab), a bidirectional control that reorders what follows it, or a byte
// that is not UTF-8 (ranging over a string yields RuneError for it; a
// real U+FFFD is harmless and kept as U+FFFD).
func unsafeRune(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || (r >= 0x7f && r < 0xa0) || r == utf8.RuneError || bidiControl(r))
}

// bidiControl: the embeddings and overrides U+202A-U+202E and the
// isolates U+2066-U+2069 ("Trojan Source", CVE-2021-42574).
func bidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Terminal is a writer for a terminal stream (a command's stdout or
// stderr): what is written to it reaches w through Printable. A rune
// split across two writes is joined first; bytes that never complete a
// rune are written as U+FFFD by the next write. It is safe for
// concurrent use.
type Terminal struct {
	mu   sync.Mutex
	w    io.Writer
	part []byte // the first bytes of a rune the last write cut
}

// NewTerminal returns a Terminal writing to w; a w that is already a
// Terminal is returned as it is.
func NewTerminal(w io.Writer) io.Writer {
	if t, ok := w.(*Terminal); ok {
		return t
	}
	return &Terminal{w: w}
}

// Write reports len(p) written when w took all of what p became.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := p
	if len(t.part) > 0 {
		b = append(t.part, p...)
		t.part = nil
	}
	// Keep an incomplete rune at the end for the next write (at most
	// UTFMax-1 bytes; anything longer is not the start of one rune).
	if cut := incompleteTail(b); cut > 0 {
		t.part = append([]byte(nil), b[len(b)-cut:]...)
		b = b[:len(b)-cut]
	}
	if _, err := io.WriteString(t.w, Printable(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is the number of bytes at the end of b that begin a
// multi-byte rune but do not complete it (0 if none).
func incompleteTail(b []byte) int {
	for n := 1; n < utf8.UTFMax && n <= len(b); n++ {
		c := b[len(b)-n]
		if !utf8.RuneStart(c) {
			continue
		}
		if c >= 0xc0 && !utf8.FullRune(b[len(b)-n:]) {
			return n
		}
		return 0
	}
	return 0
}

// Raw is the writer under w if w is a Terminal, else w: for a caller that
// writes controls of its own (a progress bar redrawing its line) and has
// passed every text it shows through Printable itself.
func Raw(w io.Writer) io.Writer {
	if t, ok := w.(*Terminal); ok {
		return t.w
	}
	return w
}

// OneLine shows s on one line of at most width characters (runes): line
// breaks (CR LF, LF, CR) as ⏎, and the rest cut with … when longer; a
// width of 0 or less does not cut. It does not make s Printable.
func OneLine(s string, width int) string {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "⏎")
		s = strings.ReplaceAll(s, "\n", "⏎")
		s = strings.ReplaceAll(s, "\r", "⏎")
	}
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
