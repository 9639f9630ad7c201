package untrusted

import "strings"

// markdownCell backs MarkdownCell.
var markdownCell = strings.NewReplacer(`\`, `\\`, "|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// MarkdownCell returns s as the text of one Markdown table cell, through
// Printable: a backslash and a pipe are escaped (a pipe would end the
// cell, and a backslash before it would undo its escape), a line end
// becomes a space (it would end the row). Other Markdown stays as it is:
// the tables are read on terminals too.
func MarkdownCell(s string) string { return markdownCell.Replace(Printable(s)) }

// MarkdownCells is the number of cells of a Markdown table row (one line
// that begins and ends with a pipe) as GitHub-flavoured Markdown splits
// it: a backslash takes the next character with it, an unescaped pipe
// ends a cell. MarkdownCell's text never adds one.
func MarkdownCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}
