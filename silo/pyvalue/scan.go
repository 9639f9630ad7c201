package pyvalue

// What the two parsers (json.loads and Python literals) share: the reading
// position, errors naming the offset, blanks, number text, and the one
// decoder of quoted strings, whose escapes are JSON's or Python's.

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of containers.
const maxDepth = 1000

type scanner struct {
	s  string
	i  int
	py bool // Python literal rules, not JSON's
}

func (p *scanner) errf(format string, a ...any) error {
	what := "invalid JSON"
	if p.py {
		what = "python literal"
	}
	return fmt.Errorf("%s at offset %d: %s", what, p.i, fmt.Sprintf(format, a...))
}

// whole reads the one value (value at depth 0) that, blanks aside, is the
// whole input.
func (p *scanner) whole(value func(depth int) (any, error)) (any, error) {
	p.ws()
	v, err := value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("extra data")
	}
	return v, nil
}

// start checks, where a value at depth begins, that nesting is within
// bounds and the input has not ended.
func (p *scanner) start(depth int) error {
	if depth > maxDepth {
		return p.errf("nested too deeply")
	}
	if p.i >= len(p.s) {
		return p.errf("unexpected end")
	}
	return nil
}

// ws skips blanks (Python's include form feed and vertical tab).
func (p *scanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		case '\f', '\v':
			if !p.py {
				return
			}
			p.i++
		default:
			return
		}
	}
}

// One-character escapes, from (the character after the backslash) to what
// they stand for.
var (
	jsonEscapes = [2]string{`"\/bfnrt`, "\"\\/\b\f\n\r\t"}
	pyEscapes   = [2]string{`\'"abfnrtv`, "\\'\"\a\b\f\n\r\t\v"}
)

// hexDigits is the number of digits after \x, \u and \U.
var hexDigits = map[byte]int{'x': 2, 'u': 4, 'U': 8}

// str reads the quoted string at p.i (JSON: "..."; Python: '...' or "...")
// and decodes its escapes. JSON's are \" \\ \/ \b \f \n \r \t and \uhhhh
// (a surrogate pair is one character; a lone surrogate becomes U+FFFD);
// anything else is an error, and so is a raw control character. Python's
// are \\ \' \" \a \b \f \n \r \t \v, octal, \xhh, \uhhhh, \Uhhhhhhhh and a
// backslash-newline continuation; an unknown escape keeps its backslash;
// a raw newline is an error.
func (p *scanner) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case p.py && c == '\n':
			return "", p.errf("newline in a string")
		case !p.py && c < 0x20:
			return "", p.errf("invalid control character in string")
		case c != '\\':
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		e := p.s[p.i+1]
		p.i += 2
		if err := p.escape(&b, e); err != nil {
			return "", err
		}
	}
}

// escape decodes the escape whose character e is just behind p.i.
func (p *scanner) escape(b *strings.Builder, e byte) error {
	simple := jsonEscapes
	if p.py {
		simple = pyEscapes
	}
	if k := strings.IndexByte(simple[0], e); k >= 0 {
		b.WriteByte(simple[1][k])
		return nil
	}
	switch {
	case e == 'u' || p.py && (e == 'x' || e == 'U'):
		n := hexDigits[e]
		if p.py && p.i+n > len(p.s) {
			return p.errf("truncated \\%c escape", e)
		}
		r, ok := p.hex(n)
		if !ok {
			return p.errf("invalid \\%c escape", e)
		}
		if !p.py && utf16.IsSurrogate(r) && r < 0xdc00 && strings.HasPrefix(p.s[p.i:], `\u`) {
			save := p.i
			p.i += 2
			if r2, ok := p.hex(4); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
				r = utf16.DecodeRune(r, r2)
			} else {
				p.i = save
			}
		}
		b.WriteRune(r) // a lone surrogate becomes U+FFFD
	case p.py && e >= '0' && e <= '7':
		r := rune(e - '0')
		for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
			r = r*8 + rune(p.s[p.i]-'0')
			p.i++
		}
		b.WriteRune(r)
	case p.py && e == '\n': // line continuation
	case p.py:
		b.WriteByte('\\')
		p.i-- // the character after the backslash is read as itself
	default:
		return p.errf("invalid escape")
	}
	return nil
}

// hex reads n hex digits as a code point.
func (p *scanner) hex(n int) (rune, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
	if err != nil || r > utf8.MaxRune {
		return 0, false
	}
	p.i += n
	return rune(r), true
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
