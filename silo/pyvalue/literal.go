package pyvalue

// Python literals as repr() writes them.

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
)

// ParseLiteral reads a Python literal as Python's repr()/str() prints the
// shards in task prompts (task.Instance.ShardText) and returns it as
// canonical compact JSON (Canon, the encoding of task.Instance.Shards):
//
//   - ints of any size keep their exact digits; an optional sign is allowed;
//   - floats as repr prints them (0.5, 1e-05, 1.5e+16, -0.0) are read as
//     float64 and written back in repr's shortest form, so a repr'd float
//     round-trips exactly; inf, -inf and nan are accepted and written as
//     Python's json.dumps writes them (Infinity, -Infinity, NaN), which, as
//     in SILO-BENCH's task files, is not strict JSON;
//   - 'single' and "double" quoted strings with Python's escapes (\\ \' \"
//     \n \r \t \a \b \f \v \0 and octal, \xhh, \uhhhh, \Uhhhhhhhh, and a
//     backslash-newline continuation); an unknown escape keeps its backslash,
//     as Python does; adjacent literals are not concatenated;
//   - True, False and None become true, false and null;
//   - lists and tuples both become JSON arrays ((x,) is a one-item tuple,
//     (x) is just x, () is empty); trailing commas are allowed;
//   - dicts become JSON objects in their order; keys are converted as
//     json.dumps converts them (ints to their decimal digits, True/False/None
//     to "true"/"false"/"null", floats to their repr), a repeated key keeps
//     its first place and takes its last value (keys are compared after
//     conversion, so 1 and '1' are the same key); a list, tuple or dict key is
//     an error.
//
// Anything else (sets, bytes, names, expressions) is an error naming the
// offset. A string shard, which the prompt shows without quotes (str()),
// is not a literal: quote it first or take the text as is.
func ParseLiteral(s string) (json.RawMessage, error) {
	p := &pyParser{scanner{s: s, py: true}}
	v, err := p.whole(p.value)
	if err != nil {
		return nil, err
	}
	return Canon(v), nil
}

type pyParser struct{ scanner }

// word reads an identifier-like token (letters, digits, underscore).
func (p *pyParser) word() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *pyParser) value(depth int) (any, error) {
	if err := p.start(depth); err != nil {
		return nil, err
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		items, _, err := p.items(']', depth)
		if err != nil {
			return nil, err
		}
		return &List{Items: items}, nil
	case c == '(':
		p.i++
		items, comma, err := p.items(')', depth)
		if err != nil {
			return nil, err
		}
		if len(items) == 1 && !comma {
			return items[0], nil // (x) is x
		}
		return &List{Items: items, Tuple: true}, nil
	case c == '{':
		return p.dict(depth)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	}
	start := p.i
	switch w := p.word(); w {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	case "inf":
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	case "":
		return nil, p.errf("unexpected character %q", p.s[p.i])
	default:
		p.i = start
		return nil, p.errf("unexpected name %q", w)
	}
}

// items reads comma-separated values up to close; comma reports whether a
// comma followed the last item (a one-item tuple).
func (p *pyParser) items(close byte, depth int) ([]any, bool, error) {
	var out []any
	comma := false
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, false, p.errf("unexpected end, want %q", close)
		}
		if p.s[p.i] == close {
			p.i++
			return out, comma, nil
		}
		if len(out) > 0 && !comma {
			return nil, false, p.errf("want ',' or %q", close)
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
		p.ws()
		comma = p.i < len(p.s) && p.s[p.i] == ','
		if comma {
			p.i++
		}
	}
}

func (p *pyParser) dict(depth int) (any, error) {
	p.i++ // {
	d := &Dict{index: map[string]int{}}
	first := true
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.errf("unexpected end in dict")
		}
		if p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		if !first {
			if p.s[p.i] != ',' {
				return nil, p.errf("want ',' or '}'")
			}
			p.i++
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
		}
		first = false
		at := p.i
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		var key any
		switch x := k.(type) {
		case string, int64:
			key = x
		case nil, bool, float64:
			key = jsonKey(x)
		case *big.Int:
			key = x.String()
		default: // lists, tuples, dicts
			p.i = at
			return nil, p.errf("unsupported dict key")
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errf("want ':'")
		}
		p.i++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.put(jsonKey(key), key, v)
	}
}

func (p *pyParser) number() (any, error) {
	start := p.i
	neg := false
	if c := p.s[p.i]; c == '-' || c == '+' {
		neg = c == '-'
		p.i++
		p.ws() // Python allows "- 1"
	}
	if p.i < len(p.s) && (p.s[p.i] == 'i' || p.s[p.i] == 'n') {
		switch p.word() {
		case "inf":
			if neg {
				return math.Inf(-1), nil
			}
			return math.Inf(1), nil
		case "nan":
			return math.NaN(), nil
		}
		p.i = start
		return nil, p.errf("invalid number")
	}
	numStart := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '_' && n > 0) {
			p.i++
			n++
		}
		return n
	}
	nInt := digits()
	isFloat := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		isFloat = true
		if digits() == 0 && nInt == 0 {
			p.i = start
			return nil, p.errf("invalid number")
		}
	} else if nInt == 0 {
		p.i = start
		return nil, p.errf("invalid number")
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		save := p.i
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.i = save
			return nil, p.errf("invalid exponent")
		}
		isFloat = true
	}
	text := strings.ReplaceAll(p.s[numStart:p.i], "_", "")
	if neg {
		text = "-" + text
	}
	if isFloat {
		f, err := ParseFloat(text)
		if err != nil {
			return nil, p.errf("invalid number %q", text)
		}
		return f, nil
	}
	if d := strings.TrimPrefix(text, "-"); len(d) > 1 && d[0] == '0' && strings.Trim(d, "0") != "" {
		p.i = start
		return nil, p.errf("leading zeros in an int")
	}
	return ParseInt(text), nil
}
