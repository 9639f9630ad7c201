package pyvalue

// Writing values: json.dumps and str()/repr().

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// EncodeJSON encodes v like Python's json.dumps(v, ensure_ascii=False) with
// separators (",", ":") when indent < 0, or json.dumps(v, indent=indent,
// ensure_ascii=False) otherwise. Floats use Python's repr; NaN and infinities
// are written as Python writes them (NaN, Infinity), which is not strict JSON.
func EncodeJSON(v any, indent int) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, indent, 0)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, indent, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(FloatRepr(x))
		}
	case string:
		writeJSONString(b, x)
	case *List:
		if len(x.Items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent, depth+1)
			writeJSON(b, it, indent, depth+1)
		}
		newline(b, indent, depth)
		b.WriteByte(']')
	case *Dict:
		if len(x.Keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent, depth+1)
			writeJSONString(b, jsonKey(k))
			b.WriteByte(':')
			if indent >= 0 {
				b.WriteByte(' ')
			}
			writeJSON(b, x.Vals[i], indent, depth+1)
		}
		newline(b, indent, depth)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("pyvalue: EncodeJSON: unexpected %T", v)) // internal values only
	}
}

// jsonKey converts a dict key the way json.dumps does.
func jsonKey(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	case float64:
		return FloatRepr(x)
	}
	return fmt.Sprint(k)
}

func newline(b *bytes.Buffer, indent, depth int) {
	if indent < 0 {
		return
	}
	b.WriteByte('\n')
	for i := 0; i < indent*depth; i++ {
		b.WriteByte(' ')
	}
}

// writeJSONString quotes s as json.dumps(ensure_ascii=False) does.
func writeJSONString(b *bytes.Buffer, s string) {
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
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// FloatRepr is Python's repr(float) for finite values: the shortest
// round-tripping digits, positional for exponents -4 <= e < 16, otherwise
// scientific with a signed, at least two-digit exponent.
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

// ---------------------------------------------------------------- str / repr

// Str is Python's str(v): strings as they are, everything else as repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(FloatRepr(x))
	case string:
		b.WriteString(StrRepr(x))
	case *List:
		open, close := "[", "]"
		if x.Tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it)
		}
		if x.Tuple && len(x.Items) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, x.Vals[i])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
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

// Canon is the compact encoding SILO-BENCH uses for shards and answers
// (json.dumps with separators (",", ":"), ensure_ascii=False).
func Canon(v any) []byte { return EncodeJSON(v, -1) }
