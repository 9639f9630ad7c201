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
