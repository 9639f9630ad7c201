package llmagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// ToolCall is one parsed tool call. Args values are Python values in the
// model of package pyvalue, as json.loads would give them: bool, int64,
// *big.Int (an integer beyond int64), float64 (possibly NaN or ±Inf),
// string, *pyvalue.List or *pyvalue.Dict (key order kept; numbers with a
// fraction or exponent are floats, so 1.0 and 1e3 stay floats).
type ToolCall struct {
	Name string
	Args map[string]any
}

// ErrNoToolCall is returned by ParseToolCalls when a reply holds no valid
// tool call; the caller then sends NoCallFeedback.
var ErrNoToolCall = errors.New("llmagent: no valid tool call found")

// ParseToolCalls returns the reply's tool calls in order of appearance. It
// never panics; it fails only with ErrNoToolCall.
func ParseToolCalls(reply string) ([]ToolCall, error) {
	var calls []ToolCall
	for _, block := range between(reply, "<tool_call>", "</tool_call>", -1) {
		names := between(block, "<tool>", "</tool>", 1)
		if len(names) == 0 {
			continue
		}
		name := pyStrip(names[0])
		if name == "" {
			continue
		}
		args := map[string]any{}
		if ps := between(block, "<parameters>", "</parameters>", 1); len(ps) > 0 {
			scanParams(ps[0], args)
		}
		calls = append(calls, ToolCall{Name: name, Args: args})
	}
	if len(calls) == 0 {
		return nil, ErrNoToolCall
	}
	return calls, nil
}

// between returns the texts enclosed by open…close, non-greedily, scanning
// left to right without overlap; at most max of them (all if max < 0).
func between(s, open, close string, max int) []string {
	var out []string
	for max < 0 || len(out) < max {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			break
		}
		out = append(out, s[:j])
		s = s[j+len(close):]
	}
	return out
}

// scanParams finds the child elements <name>value</name> of a parameters
// body, as the regex <(\w+)>(.*?)</\1> would with findall. It runs in
// O(n log n) whatever the text: closing tags are indexed once, so a reply
// full of unclosed tags cannot make parsing quadratic.
func scanParams(s string, args map[string]any) {
	var closers map[string][]int
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			return
		}
		i += k
		n := wordEnd(s, i+1)
		if n == i+1 || n >= len(s) || s[n] != '>' {
			i++
			continue
		}
		if closers == nil {
			closers = closingTags(s)
		}
		name := s[i+1 : n]
		at := closers[name]
		j := sort.SearchInts(at, n+1) // the first </name> at or after the value's start
		if j == len(at) {
			i++
			continue
		}
		args[name] = convert(s[n+1 : at[j]])
		i = at[j] + len(name) + 3
	}
}

// wordEnd returns the end of the run of \w characters starting at i.
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWord(r) || (r == utf8.RuneError && w <= 1) {
			break
		}
		i += w
	}
	return i
}

// closingTags indexes every closing tag </name> of s (name matching \w+):
// name → start offsets, ascending.
func closingTags(s string) map[string][]int {
	m := map[string][]int{}
	for i := 0; ; {
		k := strings.Index(s[i:], "</")
		if k < 0 {
			return m
		}
		k += i
		if n := wordEnd(s, k+2); n > k+2 && n < len(s) && s[n] == '>' {
			m[s[k+2:n]] = append(m[s[k+2:n]], k)
		}
		i = k + 2
	}
}

// isWord reports whether r matches Python's Unicode \w.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// pyStrip trims what Python's str.strip() trims.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

// convert types a parameter value (see the package comment).
func convert(raw string) any {
	v := pyStrip(raw)
	if asciiLowerEq(v, "true") {
		return true
	}
	if asciiLowerEq(v, "false") {
		return false
	}
	if i, ok := pyInt(v); ok {
		return i
	}
	if f, ok := pyFloat(v); ok {
		return f
	}
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
		if x, err := pyvalue.ParseJSON([]byte(v)); err == nil {
			return x
		}
	}
	return v
}

func asciiLowerEq(s, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

// digitPart checks Python's digit part: digits, single underscores between
// them, and returns it without the underscores.
func digitPart(s string) (string, bool) {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_' && s[i-1] != '_':
		default:
			return "", false
		}
	}
	return b.String(), true
}

func cutSign(s string) (string, string) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		return s[:1], s[1:]
	}
	return "", s
}

// pyInt parses like Python's int(s) in base 10: int64 when it fits, else
// the exact value as a *big.Int.
func pyInt(s string) (any, bool) {
	sign, rest := cutSign(s)
	d, ok := digitPart(rest)
	if !ok {
		return nil, false
	}
	if sign == "+" {
		sign = ""
	}
	if i, err := strconv.ParseInt(sign+d, 10, 64); err == nil {
		return i, true
	}
	b, ok := new(big.Int).SetString(sign+d, 10)
	if !ok {
		return nil, false
	}
	return b, true
}

// pyFloat parses like Python's float(s): decimal literals with optional
// underscores and exponent, plus inf, infinity and nan in any case.
func pyFloat(s string) (float64, bool) {
	sign, rest := cutSign(s)
	neg := sign == "-"
	switch strings.ToLower(rest) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if !isASCII(rest) {
		return 0, false
	}
	mant, exp := rest, ""
	if k := strings.IndexAny(rest, "eE"); k >= 0 {
		mant, exp = rest[:k], rest[k+1:]
		es, ed := cutSign(exp)
		d, ok := digitPart(ed)
		if !ok {
			return 0, false
		}
		exp = "e" + es + d
	}
	ip, fp, dot := strings.Cut(mant, ".")
	var num string
	switch {
	case ip == "" && fp == "":
		return 0, false
	case ip == "":
		d, ok := digitPart(fp)
		if !ok {
			return 0, false
		}
		num = "0." + d
	case !dot || fp == "":
		d, ok := digitPart(ip)
		if !ok {
			return 0, false
		}
		num = d
	default:
		a, ok1 := digitPart(ip)
		b, ok2 := digitPart(fp)
		if !ok1 || !ok2 {
			return 0, false
		}
		num = a + "." + b
	}
	f, err := strconv.ParseFloat(sign+num+exp, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, true // overflow to ±Inf or underflow to 0, as Python
		}
		return 0, false
	}
	return f, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ArgsJSON marshals the arguments as a compact JSON object (never null),
// keys sorted, values as Python's json.dumps writes them (floats keep their
// Python form: 1e3 is written 1000.0, so the store still sees a float, and
// dict keys keep their order). A non-finite float, which JSON cannot hold,
// becomes the string Python's str() gives it: "nan", "inf" or "-inf".
func (c ToolCall) ArgsJSON() (json.RawMessage, error) {
	keys := make([]string, 0, len(c.Args))
	for k := range c.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := &pyvalue.Dict{}
	for _, k := range keys {
		v, err := finite(c.Args[k])
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", k, err)
		}
		d.Set(k, v)
	}
	return pyvalue.Canon(d), nil
}

// finite returns v with every non-finite float replaced by its str() text,
// and fails on a value outside the pyvalue model (never produced by
// ParseToolCalls).
func finite(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, *big.Int, string:
		return v, nil
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan", nil
		case math.IsInf(x, 1):
			return "inf", nil
		case math.IsInf(x, -1):
			return "-inf", nil
		}
		return v, nil
	case *pyvalue.List:
		items, err := finiteAll(x.Items)
		return &pyvalue.List{Items: items, Tuple: x.Tuple}, err
	case *pyvalue.Dict:
		vals, err := finiteAll(x.Vals)
		return &pyvalue.Dict{Keys: x.Keys, Vals: vals}, err
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// finiteAll applies finite to each element, into a new slice.
func finiteAll(xs []any) ([]any, error) {
	out := make([]any, len(xs))
	for i, x := range xs {
		f, err := finite(x)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// JoinToolResults joins the blocks of one turn, separated by blank lines,
// into the text of the single user message that carries them.
func JoinToolResults(blocks []string) string {
	return strings.Join(blocks, "\n\n")
}

// NoCallFeedback is the user message sent when a reply holds no valid tool
// call. The turn is spent; the message restates the expected format.
func NoCallFeedback() string {
	return `No valid tool call was found in your reply, so no action was taken this turn.
Write each tool call in exactly this form, with one tag per parameter inside <parameters>:

<tool_call>
<tool>TOOL_NAME</tool>
<parameters>
<PARAM_NAME>VALUE</PARAM_NAME>
</parameters>
</tool_call>

You may make several calls in one reply; wait and submit_result end your turn.`
}
