package pyvalue

// json.loads.

import (
	"math"
	"strings"
)

// ParseJSON parses data like Python's json.loads: objects keep key order (a
// repeated key keeps its first place and its last value), integers are exact
// (int64 or *big.Int), numbers with a fraction or exponent are floats, and
// NaN, Infinity and -Infinity are accepted.
func ParseJSON(data []byte) (any, error) {
	p := &jsonParser{scanner{s: string(data)}}
	return p.whole(p.value)
}

type jsonParser struct{ scanner }

func (p *jsonParser) lit(word string) bool {
	if strings.HasPrefix(p.s[p.i:], word) {
		p.i += len(word)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (any, error) {
	if err := p.start(depth); err != nil {
		return nil, err
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
		d.put(k, k, v)
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
