package untrusted

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	if c := Clip("short", 10); c != (Cut{Text: "short"}) {
		t.Errorf("short text: %+v", c)
	}
	s := strings.Repeat("é", 10) // 20 bytes
	c := Clip(s, 5)
	sum := sha256.Sum256([]byte(s))
	if c.Text != "éé" || !c.Truncated || c.Len != 20 || c.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("cut: %+v", c)
	}
	if c := Clip(s, 0); c.Text != "" || !c.Truncated {
		t.Errorf("limit 0: %+v", c)
	}
}

func TestHeadTail(t *testing.T) {
	for _, chunk := range []int{1, 3, 7, 100, 5000} {
		var out bytes.Buffer
		h := NewHeadTail(&out, 100)
		in := make([]byte, 1000)
		for i := range in {
			in[i] = byte('a' + i%26)
		}
		for p := in; len(p) > 0; {
			k := min(chunk, len(p))
			h.Write(p[:k])
			p = p[k:]
		}
		h.Close()
		h.Write([]byte("after close"))
		got := out.String()
		want := string(in[:50]) + "\n[coordbench: 900 bytes cut here (1000 in all); the first 50 and the last 50 bytes are kept]\n" + string(in[950:])
		if got != want {
			t.Errorf("chunk %d:\n got %q\nwant %q", chunk, got, want)
		}
	}
	// A stream within the limit passes unchanged.
	for _, n := range []int{0, 10, 50, 99, 100} {
		var out bytes.Buffer
		h := NewHeadTail(&out, 100)
		in := strings.Repeat("x", n)
		h.Write([]byte(in[:n/2]))
		h.Write([]byte(in[n/2:]))
		h.Close()
		if out.String() != in {
			t.Errorf("%d bytes: got %q", n, out.String())
		}
	}
}

func TestJSONDepth(t *testing.T) {
	for in, want := range map[string]int{
		`1`: 0, `"[[["`: 0, `[]`: 1, `{"a":[1,{"b":[]}]}`: 4, `["\"[", [[]]]`: 3, `[[],[],[[]]]`: 3,
		strings.Repeat("[", 5000) + strings.Repeat("]", 5000): 5000,
	} {
		if got := JSONDepth([]byte(in)); got != want {
			t.Errorf("%.40s: depth %d, want %d", in, got, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	in := "ok\ttab\nline \x1b[31mred\x1b[0m \x1b]0;title\x07 \rback\bspace \x7f \u009b2J \xff é ✓ \u202egnp.exe\u202c \u2066x\u2069"
	got := Printable(in)
	want := "ok\ttab\nline ␛[31mred␛[0m ␛]0;title␇ ␍back␈space ␡ \uFFFD2J \uFFFD é ✓ \uFFFDgnp.exe\uFFFD \uFFFDx\uFFFD"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for _, r := range got {
		if r == 0x1b || r == '\r' || r == 0x9b || r == 0x202e || r == 0x2066 {
			t.Errorf("control %U left in %q", r, got)
		}
	}
	if !utf8.ValidString(got) {
		t.Error("not UTF-8")
	}
	if s := "plain text ✓\n"; Printable(s) != s {
		t.Error("plain text changed")
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("a\x1b[2Jb\u009bc\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Printable(s) {
			if unsafeRune(r) && r != utf8.RuneError {
				t.Fatalf("%U left in %q", r, Printable(s))
			}
		}
	})
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"a\r\nb\nc\rd", 0, "a⏎b⏎c⏎d"},
		{"héllo wörld", 5, "héllo…"},
		{"héllo", 5, "héllo"},
		{"long text", -1, "long text"},
	} {
		if got := OneLine(c.in, c.width); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}
