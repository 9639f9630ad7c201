package untrusted

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// csvTriggers are the first characters that make a spreadsheet read a
// cell as a formula (OWASP "CSV injection"): =, +, -, @, tab and
// carriage return.
const csvTriggers = "=+-@\t\r"

// CSVCell returns the text of one CSV cell as coordbench writes it: a
// number (strconv.ParseFloat reads it, and it is written in digits, a
// sign, a point and an exponent, or is NaN or ±Inf) as it is; any other
// text through Printable and, when it begins with a formula trigger
// (=, +, -, @, tab, carriage return) or with a single quote, with a
// single quote in front, which a spreadsheet shows as text and
// CSVValue takes off again. A negative number stays a number, and a lone
// "-" (the tables' placeholder for "none") stays as it is: a sign alone is
// text to a spreadsheet, nothing it could run.
func CSVCell(s string) string {
	if s == "" || s == "-" || isNumber(s) {
		return s
	}
	s = Printable(s)
	if strings.ContainsRune(csvTriggers+"'", rune(s[0])) {
		return "'" + s
	}
	return s
}

// CSVValue is the text CSVCell was given: a cell read from a file
// coordbench wrote loses the quote CSVCell put in front.
func CSVValue(cell string) string {
	if len(cell) > 1 && cell[0] == '\'' {
		return cell[1:]
	}
	return cell
}

// CSVValues applies CSVValue to every field of rec, in place, and
// returns rec.
func CSVValues(rec []string) []string {
	for i, f := range rec {
		rec[i] = CSVValue(f)
	}
	return rec
}

// isNumber: s is a number a spreadsheet reads as one, with nothing it
// could execute.
func isNumber(s string) bool {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return len(s)-len(strings.TrimLeft(s, "+-")) <= 1
	}
	if strings.Trim(s, "0123456789.eE+-") != "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// CSVWriter is an encoding/csv writer that writes every cell through
// CSVCell: every CSV file coordbench writes goes through one.
type CSVWriter struct{ w *csv.Writer }

// NewCSVWriter returns a CSVWriter on w (RFC 4180, "\n" line ends).
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one record.
func (c *CSVWriter) Write(rec []string) error {
	cells := make([]string, len(rec))
	for i, s := range rec {
		cells[i] = CSVCell(s)
	}
	return c.w.Write(cells)
}

// WriteAll writes the records and flushes.
func (c *CSVWriter) WriteAll(recs [][]string) error {
	for _, r := range recs {
		if err := c.Write(r); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

// Flush writes what is buffered to the underlying writer.
func (c *CSVWriter) Flush() { c.w.Flush() }

// Error is the error of a previous Write or Flush.
func (c *CSVWriter) Error() error { return c.w.Error() }
