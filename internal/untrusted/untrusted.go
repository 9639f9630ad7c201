// Package untrusted bounds and neutralizes text that coordbench did not
// write itself (model replies, runner output, submitted answers) before it
// is stored in an artifact or shown on a terminal. It is the one place
// where the artifact limits live (docs/trace-format.md, "Size limits"):
//
//   - Clip keeps the first bytes of a text and, when it cut, the full
//     text's length and SHA-256, so that an audit says what it dropped and
//     a reader can check a text from elsewhere (the response cache) against
//     it;
//   - HeadTail is a writer that keeps the head and the tail of a stream
//     (a runner's stderr) with a marker where it cut;
//   - JSONDepth measures the nesting of a JSON value before anything
//     indents it (indentation grows with the square of the depth);
//   - Printable and Terminal make text safe for a terminal (terminal.go);
//     CSVWriter, MarkdownCell and LaTeX for a spreadsheet, a Markdown
//     table and a LaTeX document (csv.go, markdown.go, latex.go).
//
// The rules, and where each applies, are in docs/report.md ("Untrusted
// text"); the HTML report leaves its escaping to html/template and adds a
// Content-Security-Policy (report/page.html.tmpl).
package untrusted

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"unicode/utf8"
)

// Limits. MaxReply is what an audit keeps of one reply (a model's, or an
// external runner's line); MaxStderr what a run keeps of a runner's
// stderr (half head, half tail); MaxValueDepth how deeply a submitted
// answer (or any JSON content an agent hands the harness) may nest.
const (
	MaxReply      = 4096
	MaxStderr     = 2 << 20
	MaxValueDepth = 64
)

// Cut is a text as an artifact keeps it: Text is all of it, or its first
// bytes when Truncated; then Len and SHA256 describe the full text.
type Cut struct {
	Text      string
	Truncated bool
	Len       int    // bytes of the full text (set only when Truncated)
	SHA256    string // hex SHA-256 of the full text (set only when Truncated)
}

// Clip keeps s whole if it has at most limit bytes, else its longest prefix
// of at most limit bytes that ends on a UTF-8 boundary, with the length and
// the SHA-256 of s.
func Clip(s string, limit int) Cut {
	if len(s) <= limit {
		return Cut{Text: s}
	}
	n := max(0, limit)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	sum := sha256.Sum256([]byte(s))
	return Cut{Text: s[:n], Truncated: true, Len: len(s), SHA256: hex.EncodeToString(sum[:])}
}

// HeadTail writes the first head bytes written to it through to w as they
// come, keeps the last tail bytes in memory, and on Close writes a marker
// line saying how many bytes it dropped (if any) and then the tail. A
// stream of at most head+tail bytes reaches w unchanged. Writes after
// Close are dropped. It is not safe for concurrent use.
type HeadTail struct {
	w          io.Writer
	head, tail int
	n          int64  // bytes written so far
	ring       []byte // the last bytes beyond the head, a ring of cap tail
	pos        int    // next write position in ring once it is full
	closed     bool
}

// NewHeadTail returns a HeadTail that keeps limit bytes of the stream: the
// first and the last limit/2.
func NewHeadTail(w io.Writer, limit int) *HeadTail {
	limit = max(limit, 2)
	return &HeadTail{w: w, head: limit - limit/2, tail: limit / 2}
}

// Write never fails: a failing w must not stop the writer's source.
func (h *HeadTail) Write(p []byte) (int, error) {
	if h.closed {
		return len(p), nil
	}
	n := len(p)
	if k := int64(h.head) - h.n; k > 0 {
		k = min(k, int64(len(p)))
		h.w.Write(p[:k]) //nolint:errcheck // see above
		p = p[k:]
		h.n += k
	}
	h.n += int64(len(p))
	if len(p) >= h.tail {
		h.ring = append(h.ring[:0], p[len(p)-h.tail:]...)
		h.pos = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(h.ring) < h.tail {
			k := min(h.tail-len(h.ring), len(p))
			h.ring = append(h.ring, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.ring[h.pos:], p)
		h.pos = (h.pos + k) % h.tail
		p = p[k:]
	}
	return n, nil
}

// Close writes the marker (if bytes were dropped) and the tail to w.
func (h *HeadTail) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	if cut := h.n - int64(h.head) - int64(len(h.ring)); cut > 0 {
		fmt.Fprintf(h.w, "\n[coordbench: %d bytes cut here (%d in all); the first %d and the last %d bytes are kept]\n",
			cut, h.n, h.head, len(h.ring))
	}
	h.w.Write(h.ring[h.pos:]) //nolint:errcheck // see Write
	_, err := h.w.Write(h.ring[:h.pos])
	h.ring = nil
	return err
}

// JSONDepth is the deepest nesting of arrays and objects in the JSON
// text b (0 for a scalar). It does not validate b; it only skips strings.
func JSONDepth(b []byte) int {
	depth, deepest, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
