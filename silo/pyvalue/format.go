package pyvalue

// Writing values. json.dumps, repr() and json.dumps's conversion of a dict
// key differ only in how each kind of value looks (a style); one walker
// (style.write) serves all three.

import (
	"bytes"
	"fmt"
	"math/big"
	"strconv"
)

// EncodeJSON encodes v like Python's json.dumps(v, ensure_ascii=False) with
// separators (",", ":") when indent < 0, or json.dumps(v, indent=indent,
// ensure_ascii=False) otherwise. Floats use Python's repr; NaN and infinities
// are written as Python writes them (NaN, Infinity), which is not strict JSON.
func EncodeJSON(v any, indent int) []byte {
	st := jsonCompact
	if indent >= 0 {
		st = jsonIndented(indent)
	}
	var b bytes.Buffer
	st.write(&b, v, 0)
	return b.Bytes()
}

// Canon is the compact encoding SILO-BENCH uses for shards and answers
// (json.dumps with separators (",", ":"), ensure_ascii=False).
func Canon(v any) []byte { return EncodeJSON(v, -1) }

// Str is Python's str(v): strings as they are, everything else as repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// Repr is Python's repr(v).
func Repr(v any) string { return reprStyle.text(v) }

// jsonKey converts a dict key the way json.dumps does.
func jsonKey(k any) string { return keyStyle.text(k) }

// A style is one text form of values.
type style struct {
	null, yes, no string                      // None, True, False
	float         func(float64) string        // a float
	str           func(*bytes.Buffer, string) // a string
	tuples        bool                        // tuples in parentheses, (x,) for one item
	sep, colon    string                      // between items; between a key and its value
	indent        int                         // < 0: one line; else json.dumps's indent
	key           func(any) any               // the value written for a dict key
	other         func(*bytes.Buffer, any)    // a value of no known type
}

var (
	jsonCompact = jsonIndented(-1)
	reprStyle   = &style{
		null: "None", yes: "True", no: "False",
		float:  FloatRepr,
		str:    func(b *bytes.Buffer, s string) { b.WriteString(StrRepr(s)) },
		tuples: true,
		sep:    ", ", colon: ": ", indent: -1,
		key:   func(k any) any { return k },
		other: func(b *bytes.Buffer, v any) { fmt.Fprint(b, v) },
	}
	// keyStyle is json.dumps's conversion of a dict key to a string
	// (containers, which json.dumps rejects, never occur as keys).
	keyStyle = &style{
		null: "null", yes: "true", no: "false",
		float:  FloatRepr,
		str:    func(b *bytes.Buffer, s string) { b.WriteString(s) },
		indent: -1,
		other:  func(b *bytes.Buffer, v any) { fmt.Fprint(b, v) },
	}
)

func jsonIndented(indent int) *style {
	colon := ":"
	if indent >= 0 {
		colon = ": "
	}
	return &style{
		null: "null", yes: "true", no: "false",
		float: jsonFloat,
		str:   writeJSONString,
		sep:   ",", colon: colon, indent: indent,
		key:   func(k any) any { return jsonKey(k) },
		other: func(_ *bytes.Buffer, v any) { panic(fmt.Sprintf("pyvalue: EncodeJSON: unexpected %T", v)) },
	}
}

func (st *style) text(v any) string {
	var b bytes.Buffer
	st.write(&b, v, 0)
	return b.String()
}

func (st *style) write(b *bytes.Buffer, v any, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString(st.null)
	case bool:
		if x {
			b.WriteString(st.yes)
		} else {
			b.WriteString(st.no)
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(st.float(x))
	case string:
		st.str(b, x)
	case *List:
		tuple := x.Tuple && st.tuples
		open, close := "[", "]"
		if tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range x.Items {
			st.item(b, i, depth)
			st.write(b, it, depth+1)
		}
		if tuple && len(x.Items) == 1 {
			b.WriteByte(',')
		}
		st.end(b, len(x.Items), depth)
		b.WriteString(close)
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.Keys {
			st.item(b, i, depth)
			st.write(b, st.key(k), depth+1)
			b.WriteString(st.colon)
			st.write(b, x.Vals[i], depth+1)
		}
		st.end(b, len(x.Keys), depth)
		b.WriteByte('}')
	default:
		st.other(b, v)
	}
}

// item starts the i-th item of a container at depth: the separator after
// the first, then (indented JSON) a new line.
func (st *style) item(b *bytes.Buffer, i, depth int) {
	if i > 0 {
		b.WriteString(st.sep)
	}
	st.newline(b, depth+1)
}

// end closes the n items of a container at depth (indented JSON puts the
// closing bracket of a non-empty container on its own line).
func (st *style) end(b *bytes.Buffer, n, depth int) {
	if n > 0 {
		st.newline(b, depth)
	}
}

func (st *style) newline(b *bytes.Buffer, depth int) {
	if st.indent < 0 {
		return
	}
	b.WriteByte('\n')
	for i := 0; i < st.indent*depth; i++ {
		b.WriteByte(' ')
	}
}
