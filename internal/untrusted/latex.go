package untrusted

import "strings"

// LaTeX returns s as text for a LaTeX document (a table cell, a
// caption): the special characters \ { } $ & # _ % ~ ^ are escaped, a
// line end becomes a space, control characters (Printable's) are dropped, and the
// few non-ASCII symbols coordbench's tables use (↑ ↓ ± – × − ≠) are
// spelled so that pdfLaTeX needs no Unicode setup.
func LaTeX(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '&', '%', '$', '#', '_', '{', '}':
			b.WriteString(`\` + string(r))
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '↑':
			b.WriteString(`$\uparrow$`)
		case '↓':
			b.WriteString(`$\downarrow$`)
		case '±':
			b.WriteString(`$\pm$`)
		case '–':
			b.WriteString(`--`)
		case '×':
			b.WriteString(`$\times$`)
		case '−':
			b.WriteString(`$-$`)
		case '≠':
			b.WriteString(`$\neq$`)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			if !unsafeRune(r) {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
