package untrusted

import (
	"strings"
	"testing"
)

func TestLaTeX(t *testing.T) {
	in := `\input{/etc/passwd} $x$ & # _ % ~ ^ {}` + "\n\x1b[31m ± –"
	want := `\textbackslash{}input\{/etc/passwd\} \$x\$ \& \# \_ \% \textasciitilde{} \textasciicircum{} \{\}` + ` [31m $\pm$ --`
	if got := LaTeX(in); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// No special character of LaTeX's survives unescaped: every backslash
// the output holds begins one of the escapes LaTeX writes.
func FuzzLaTeX(f *testing.F) {
	f.Add(`\def\x{}^^M%&`)
	escapes := []string{`\textbackslash{}`, `\textasciitilde{}`, `\textasciicircum{}`, `\&`, `\%`, `\$`, `\#`, `\_`, `\{`, `\}`,
		`$\uparrow$`, `$\downarrow$`, `$\pm$`, `$\times$`, `$-$`, `$\neq$`}
	f.Fuzz(func(t *testing.T, s string) {
		out := LaTeX(s)
		rest := out
		for _, e := range escapes {
			rest = strings.ReplaceAll(rest, e, "")
		}
		if i := strings.IndexAny(rest, "\\{}$&#_%~^\n\r\x1b"); i >= 0 {
			t.Fatalf("LaTeX(%q) = %q: unescaped %q", s, out, rest[i])
		}
	})
}
