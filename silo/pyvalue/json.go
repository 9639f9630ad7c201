package pyvalue

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ---------------------------------------------------------------- json.loads

// ParseJSON parses data like Python's json.loads: objects keep key order (a
// repeated key keeps its first place and its last value), integers are exact
// (int64 or *big.Int), numbers with a fraction or exponent are floats, and
// NaN, Infinity and -Infinity are accepted.
func ParseJSON(data []byte) (any, error) {
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
	d := &Dict{index: map[string]int{}}
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
			d.Vals[at] = v // a repeated key keeps its place, takes the last value
		} else {
			d.index[k] = len(d.Keys)
			d.Keys = append(d.Keys, k)
			d.Vals = append(d.Vals, v)
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
	l := &List{}
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
		l.Items = append(l.Items, v)
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
		f, err := ParseFloat(text)
		if err != nil {
			return nil, p.errf("invalid number %q", text)
		}
		return f, nil
	}
	return ParseInt(text), nil
}

// ParseFloat is float(text) for text already checked to be a decimal
// float: ±Inf on overflow and 0 on underflow, as Python gives, not errors.
func ParseFloat(text string) (float64, error) {
	f, err := strconv.ParseFloat(text, 64)
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return f, nil
	}
	return f, err
}

// ParseInt turns validated decimal digits (optional sign) into int64 or
// *big.Int.
func ParseInt(text string) any {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n
	}
	z, _ := new(big.Int).SetString(text, 10)
	return z
}
