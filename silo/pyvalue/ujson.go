package pyvalue

// srsly.json_dumps: the encoder of the published tool results.

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// EncodeUJSON encodes v as srsly.json_dumps(v) does, the call that
// writes the published SILO-BENCH tool results: ujson.dumps(v, indent=0,
// escape_forward_slashes=False) with ujson's other defaults. That is
// compact JSON (separators "," and ":"), every non-ASCII character
// escaped (ensure_ascii, \uXXXX in lower-case hex, a surrogate pair
// beyond U+FFFF), '/', '<', '>', '&' and DEL left as they are, and floats
// in ujson's form (UJSONFloat).
func EncodeUJSON(v any) []byte {
	var b bytes.Buffer
	ujsonStyle.write(&b, v, 0)
	return b.Bytes()
}

var ujsonStyle = &style{
	null: "null", yes: "true", no: "false",
	float: UJSONFloat,
	str:   writeASCIIJSONString,
	sep:   ",", colon: ":", indent: -1,
	key:   func(k any) any { return jsonKey(k) },
	other: func(_ *bytes.Buffer, v any) { panic(fmt.Sprintf("pyvalue: EncodeUJSON: unexpected %T", v)) },
}

// UJSONFloat is a float as ujson writes it (double-conversion's shortest
// form, positional for exponents -4 <= e < 16, as repr): repr's digits,
// but an exponent is not padded to two digits (1e-05 is 1e-5; 1e+16 stays
// 1e+16), and NaN, Infinity, -Infinity for the non-finite values.
func UJSONFloat(f float64) string {
	s := jsonFloat(f)
	e := strings.IndexByte(s, 'e')
	if e < 0 {
		return s
	}
	exp := strings.TrimLeft(s[e+2:], "0") // s[e+1] is the sign
	if exp == "" {
		exp = "0"
	}
	return s[:e+2] + exp
}

// writeASCIIJSONString quotes s as ujson does with ensure_ascii: ", \ and
// the control characters \b \f \n \r \t escaped, other characters below
// 0x20 as \u00XX, printable ASCII (DEL too) as is, the rest as \uXXXX
// (a surrogate pair beyond U+FFFF; invalid UTF-8 as U+FFFD).
func writeASCIIJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	u := func(r rune) {
		b.WriteString(`\u`)
		for sh := 12; sh >= 0; sh -= 4 {
			b.WriteByte(hex[(r>>sh)&0xf])
		}
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			u(r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			u(0xd800 + r>>10)
			u(0xdc00 + r&0x3ff)
		default:
			u(r)
		}
	}
	b.WriteByte('"')
}
