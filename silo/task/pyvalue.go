package task

// Python values: the shapes shards and answers take in the published code,
// with the two encodings that matter here, json.dumps (files, fingerprints)
// and str()/repr() (the shard text inside user prompts).
//
// A value is one of:
//
//	nil            None / JSON null
//	bool
//	int64          int
//	*big.Int       int outside int64 (only ever from parsed answers)
//	float64
//	string
//	*pyList        list, or tuple when tuple is set
//	*pyDict        dict with ordered keys (string keys from JSON; int keys for
//	               Python dicts keyed by ids)

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

type pyList struct {
	items []any
	tuple bool
}

type pyDict struct {
	keys []any
	vals []any
	// index maps string keys to positions; built by the JSON parser (nil
	// for dicts built in code, which are small), read-only afterwards.
	index map[string]int
}

func list(items ...any) *pyList  { return &pyList{items: items} }
func tuple(items ...any) *pyList { return &pyList{items: items, tuple: true} }

func (d *pyDict) set(k, v any) {
	for i, old := range d.keys {
		if keyEqual(old, k) {
			d.vals[i] = v
			return
		}
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// get returns the value under a string key.
func (d *pyDict) get(k string) (any, bool) {
	if d.index != nil {
		i, ok := d.index[k]
		if !ok {
			return nil, false
		}
		return d.vals[i], true
	}
	for i, old := range d.keys {
		if s, ok := old.(string); ok && s == k {
			return d.vals[i], true
		}
	}
	return nil, false
}

func keyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	}
	return false
}

func intList(xs []int) *pyList {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return &pyList{items: out}
}

func floatList(xs []float64) *pyList {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return &pyList{items: out}
}

func strList(xs []string) *pyList {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return &pyList{items: out}
}

// ---------------------------------------------------------------- json.dumps

// encodeJSON encodes v like Python's json.dumps(v, ensure_ascii=False) with
// separators (",", ":") when indent < 0, or json.dumps(v, indent=indent,
// ensure_ascii=False) otherwise. Floats use Python's repr; NaN and infinities
// are written as Python writes them (NaN, Infinity), which is not strict JSON.
func encodeJSON(v any, indent int) []byte {
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
			b.WriteString(pyFloatRepr(x))
		}
	case string:
		writeJSONString(b, x)
	case *pyList:
		if len(x.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, it := range x.items {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent, depth+1)
			writeJSON(b, it, indent, depth+1)
		}
		newline(b, indent, depth)
		b.WriteByte(']')
	case *pyDict:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, indent, depth+1)
			writeJSONString(b, jsonKey(k))
			b.WriteByte(':')
			if indent >= 0 {
				b.WriteByte(' ')
			}
			writeJSON(b, x.vals[i], indent, depth+1)
		}
		newline(b, indent, depth)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("task: encodeJSON: unexpected %T", v)) // internal values only
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
		return pyFloatRepr(x)
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

// pyFloatRepr is Python's repr(float) for finite values: the shortest
// round-tripping digits, positional for exponents -4 <= e < 16, otherwise
// scientific with a signed, at least two-digit exponent.
func pyFloatRepr(f float64) string {
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

// pyStr is Python's str(v): strings as they are, everything else as repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func pyRepr(v any) string {
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
		b.WriteString(pyFloatRepr(x))
	case string:
		b.WriteString(pyStrRepr(x))
	case *pyList:
		open, close := "[", "]"
		if x.tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range x.items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it)
		}
		if x.tuple && len(x.items) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case *pyDict:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, x.vals[i])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// pyStrRepr is repr(str): single quotes unless the text has a single quote
// and no double quote; backslash escapes for the quote, backslash, \t \n \r
// and non-printable characters.
func pyStrRepr(s string) string {
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

// ---------------------------------------------------------------- json.loads

// parseJSON parses data like Python's json.loads: objects keep key order (a
// repeated key keeps its first place and its last value), integers are exact
// (int64 or *big.Int), numbers with a fraction or exponent are floats, and
// NaN, Infinity and -Infinity are accepted.
func parseJSON(data []byte) (any, error) {
	p := &jsonParser{s: data}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("extra data")
	}
	return v, nil
}

type jsonParser struct {
	s []byte
	i int
}

const maxJSONDepth = 1000

func (p *jsonParser) errf(format string, a ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) lit(word string) bool {
	if bytes.HasPrefix(p.s[p.i:], []byte(word)) {
		p.i += len(word)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.errf("nested too deeply")
	}
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case p.lit("null"):
		return nil, nil
	case p.lit("true"):
		return true, nil
	case p.lit("false"):
		return false, nil
	case p.lit("NaN"):
		return math.NaN(), nil
	case p.lit("Infinity"):
		return math.Inf(1), nil
	case p.lit("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.errf("unexpected character %q", p.s[p.i])
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	d := &pyDict{index: map[string]int{}}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return d, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.errf("expecting property name in double quotes")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errf("expecting ':' delimiter")
		}
		p.i++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if at, dup := d.index[k]; dup {
			d.vals[at] = v // a repeated key keeps its place, takes the last value
		} else {
			d.index[k] = len(d.keys)
			d.keys = append(d.keys, k)
			d.vals = append(d.vals, v)
		}
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.errf("unexpected end in object")
		}
		if p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.errf("expecting ',' delimiter")
		}
		p.i++
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	l := &pyList{}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return l, nil
	}
	for {
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, v)
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.errf("unexpected end in array")
		}
		if p.s[p.i] == ']' {
			p.i++
			return l, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.errf("expecting ',' delimiter")
		}
		p.i++
	}
}

func (p *jsonParser) str() (string, error) {
	p.i++ // "
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errf("invalid control character in string")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.errf("unterminated string")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.errf("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) && r < 0xdc00 && bytes.HasPrefix(p.s[p.i:], []byte(`\u`)) {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						r = utf16.DecodeRune(r, r2)
					} else {
						p.i = save
					}
				}
				b.WriteRune(r) // a lone surrogate becomes U+FFFD
			default:
				return "", p.errf("invalid escape")
			}
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

func (p *jsonParser) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errf("invalid number")
	}
	isFloat := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		save := p.i
		p.i++
		if digits() == 0 { // "1." is not a JSON float: the number ends at "1"
			p.i = save
		} else {
			isFloat = true
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		save := p.i
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.i = save
		} else {
			isFloat = true
		}
	}
	text := string(p.s[start:p.i])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRangeErr(err) {
			return nil, p.errf("invalid number %q", text)
		}
		return f, nil
	}
	return parseIntText(text), nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseIntText turns validated decimal digits (optional sign) into int64 or
// *big.Int.
func parseIntText(text string) any {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n
	}
	z, _ := new(big.Int).SetString(text, 10)
	return z
}

// canon is the compact encoding used for shards and answers throughout the
// package (json.dumps with separators (",", ":"), ensure_ascii=False).
func canon(v any) []byte { return encodeJSON(v, -1) }
