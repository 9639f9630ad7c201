package pyvalue

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// maxGrowth bounds the canonical text of a parsed value against its
// input: the worst case is an escape-free string of control characters
// or astral characters, each written as one or two \uXXXX escapes, or a
// short number read as Infinity.
func maxGrowth(n int) int { return 12*n + 16 }

// jsonDepth is the deepest nesting of arrays and objects in JSON text
// (brackets inside strings skipped).
func jsonDepth(data []byte) int {
	depth, most, inStr, esc := 0, 0, false, false
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '[' || c == '{'):
			depth++
			most = max(most, depth)
		case !inStr && (c == ']' || c == '}'):
			depth--
		}
	}
	return most
}

// FuzzParseJSON: ParseJSON never panics; an error comes with no value and
// names the offset; every valid JSON text within the nesting bound is
// accepted, as json.loads accepts it; and the canonical text of what it
// reads is bounded and reads back to itself. Seeds:
// testdata/fuzz/FuzzParseJSON.
func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseJSON(data)
		if err != nil {
			if v != nil || !strings.Contains(err.Error(), "at offset") {
				t.Fatalf("ParseJSON(%q) = %v, %v: an error must come alone and name the offset", data, v, err)
			}
			if json.Valid(data) && jsonDepth(data) <= maxDepth {
				t.Fatalf("ParseJSON(%q) refused valid JSON: %v", data, err)
			}
			return
		}
		c := Canon(v)
		if len(c) > maxGrowth(len(data)) {
			t.Fatalf("ParseJSON(%q): canonical text of %d bytes from %d", data, len(c), len(data))
		}
		w, err := ParseJSON(c)
		if err != nil {
			t.Fatalf("the canonical text %q of %q does not read back: %v", c, data, err)
		}
		if c2 := Canon(w); !bytes.Equal(c, c2) {
			t.Fatalf("%q: canonical text %q reads back as %q", data, c, c2)
		}
		// The published tool-result encoding (srsly/ujson) is ASCII and
		// reads back as the same value.
		u := EncodeUJSON(v)
		for _, ch := range u {
			if ch >= 0x80 {
				t.Fatalf("%q: EncodeUJSON wrote a non-ASCII byte: %q", data, u)
			}
		}
		if x, err := ParseJSON(u); err != nil || !bytes.Equal(Canon(x), c) {
			t.Fatalf("%q: EncodeUJSON %q reads back as %v, %v (want %q)", data, u, x, err, c)
		}
	})
}

// FuzzParseLiteral: ParseLiteral never panics; an error comes with no
// value and names the offset; what it returns is canonical JSON (its own
// Canon); and the repr of that value reads back to the same JSON, so a
// shard an agent copies out of a prompt means what the prompt meant.
// Seeds: testdata/fuzz/FuzzParseLiteral.
func FuzzParseLiteral(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseLiteral(s)
		if err != nil {
			if out != nil || !strings.Contains(err.Error(), "at offset") {
				t.Fatalf("ParseLiteral(%q) = %s, %v: an error must come alone and name the offset", s, out, err)
			}
			return
		}
		if len(out) > maxGrowth(len(s)) {
			t.Fatalf("ParseLiteral(%q): %d bytes of JSON from %d", s, len(out), len(s))
		}
		v, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("ParseLiteral(%q) = %s, which ParseJSON refuses: %v", s, out, err)
		}
		if c := Canon(v); !bytes.Equal(c, out) {
			t.Fatalf("ParseLiteral(%q) = %s, not canonical (%s)", s, out, c)
		}
		r := Repr(v)
		back, err := ParseLiteral(r)
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("ParseLiteral(%q) = %s; its repr %q reads back as %s, %v", s, out, r, back, err)
		}
	})
}
