package pyvalue

// The text of one scalar: repr() of a float or a string, and json.dumps of
// a float or a string.

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FloatRepr is Python's repr(float): nan, inf, -inf, and for finite values
// the shortest round-tripping digits, positional for exponents
// -4 <= e < 16, otherwise scientific with a signed, at least two-digit
// exponent.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±xx
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	e := strings.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(s[e+1:])
	digits := strings.Replace(s[:e], ".", "", 1)
	if exp < -4 || exp >= 16 {
		mant := digits[:1]
		if len(digits) > 1 {
			mant += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, mant, es, exp)
	}
	decpt := exp + 1
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}

// jsonFloat is json.dumps of a float: repr, but NaN, Infinity and -Infinity
// for the values repr writes nan, inf and -inf.
func jsonFloat(f float64) string {
	switch s := FloatRepr(f); s {
	case "nan":
		return "NaN"
	case "inf":
		return "Infinity"
	case "-inf":
		return "-Infinity"
	default:
		return s
	}
}

// StrRepr is repr(str): single quotes unless the text has a single quote
// and no double quote; backslash escapes for the quote, backslash, \t \n \r
// and non-printable characters.
func StrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r) && r != 0xad:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// writeJSONString quotes s as json.dumps(ensure_ascii=False) does.
func writeJSONString(b *bytes.Buffer, s string) { quoteJSON(b, s, false) }

// quoteJSON quotes s as json.dumps and ujson do: ", \ and \n \r \t \b \f
// escaped, other characters below 0x20 as \u00XX; with ascii (ujson's
// ensure_ascii) every character beyond ASCII as \uXXXX in lower-case hex,
// a surrogate pair beyond U+FFFF (DEL stays as it is, as in ujson).
func quoteJSON(b *bytes.Buffer, s string, ascii bool) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			case !ascii || r < utf8.RuneSelf:
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+r>>10, 0xdc00+r&0x3ff)
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}
