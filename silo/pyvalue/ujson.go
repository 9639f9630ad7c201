package pyvalue

// srsly.json_dumps: the encoder of the published tool results.

import (
	"bytes"
	"fmt"
	"strings"
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
	str:   func(b *bytes.Buffer, s string) { quoteJSON(b, s, true) },
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
