package task

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// A shape describes the Python value behind a JSON shard or gold: it checks a
// parsed JSON value and turns it back into the Python value the generator
// had (tuples for JSON arrays, int keys for JSON object keys), which is what
// str() shows in the prompt.
//
// Field paths in errors are built only on failure: a shape reports a path
// relative to the value it checks, and each enclosing shape prefixes its
// own step.
type shape interface {
	conv(v any) (any, error)
	String() string
}

// fieldErr is a shape failure at a JSON path ("[3].users.7[0]").
type fieldErr struct {
	path, msg string
}

func (e *fieldErr) Error() string { return fmt.Sprintf("field %q: %s", e.path, e.msg) }

func wantErr(want string, got any) error {
	return &fieldErr{msg: fmt.Sprintf("want %s, got %s", want, kindOf(got))}
}

// under prefixes a shape error's path with step ("[3]", ".users"), or with a
// base path such as "agent_configs[1].input_shard".
func under(err error, step string) error {
	if fe, ok := err.(*fieldErr); ok {
		return &fieldErr{path: step + fe.path, msg: fe.msg}
	}
	return err
}

func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case *big.Int: // only an int beyond int64 parses as one
		return fmt.Sprintf("an int of %d digits, beyond the 64-bit range", len(new(big.Int).Abs(x).Text(10)))
	case float64:
		return "float"
	case string:
		return "string"
	case *pyvalue.List:
		return fmt.Sprintf("list of %d", len(x.Items))
	case *pyvalue.Dict:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

type scalarShape string

var (
	shInt   shape = scalarShape("int")
	shFloat shape = scalarShape("float")
	shStr   shape = scalarShape("string")
	shBool  shape = scalarShape("bool")
)

func (s scalarShape) String() string { return string(s) }

func (s scalarShape) conv(v any) (any, error) {
	switch s {
	case "int":
		if x, ok := v.(int64); ok {
			return x, nil
		}
	case "float":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64: // tolerated; the published files always write floats with a point
			return float64(x), nil
		}
	case "string":
		if x, ok := v.(string); ok {
			return x, nil
		}
	case "bool":
		if x, ok := v.(bool); ok {
			return x, nil
		}
	}
	return nil, wantErr(string(s), v)
}

type listShape struct{ elem shape }

func shList(elem shape) shape { return listShape{elem} }

func (s listShape) String() string { return "list of " + s.elem.String() }

func (s listShape) conv(v any) (any, error) {
	l, ok := v.(*pyvalue.List)
	if !ok {
		return nil, wantErr(s.String(), v)
	}
	out := &pyvalue.List{Items: make([]any, len(l.Items))}
	for i, it := range l.Items {
		c, err := s.elem.conv(it)
		if err != nil {
			return nil, under(err, fmt.Sprintf("[%d]", i))
		}
		out.Items[i] = c
	}
	return out, nil
}

type tupleShape struct{ elems []shape }

func shTuple(elems ...shape) shape { return tupleShape{elems} }

func (s tupleShape) String() string {
	str := "["
	for i, e := range s.elems {
		if i > 0 {
			str += ", "
		}
		str += e.String()
	}
	return str + "]"
}

func (s tupleShape) conv(v any) (any, error) {
	l, ok := v.(*pyvalue.List)
	if !ok || len(l.Items) != len(s.elems) {
		return nil, wantErr(s.String(), v)
	}
	out := &pyvalue.List{Items: make([]any, len(l.Items)), Tuple: true}
	for i, it := range l.Items {
		c, err := s.elems[i].conv(it)
		if err != nil {
			return nil, under(err, fmt.Sprintf("[%d]", i))
		}
		out.Items[i] = c
	}
	return out, nil
}

// recordShape is a dict with fixed string keys, in this order.
type recordShape struct {
	names  []string
	shapes []shape
}

func shRecord(kv ...any) shape {
	var r recordShape
	for i := 0; i < len(kv); i += 2 {
		r.names = append(r.names, kv[i].(string))
		r.shapes = append(r.shapes, kv[i+1].(shape))
	}
	return r
}

func (s recordShape) String() string {
	str := "{"
	for i, n := range s.names {
		if i > 0 {
			str += ", "
		}
		str += strconv.Quote(n) + ": " + s.shapes[i].String()
	}
	return str + "}"
}

func (s recordShape) conv(v any) (any, error) {
	d, ok := v.(*pyvalue.Dict)
	if !ok || len(d.Keys) != len(s.names) {
		return nil, wantErr("object "+s.String(), v)
	}
	out := &pyvalue.Dict{}
	for i, n := range s.names {
		x, ok := d.Get(n)
		if !ok {
			return nil, &fieldErr{path: "." + n, msg: "missing"}
		}
		c, err := s.shapes[i].conv(x)
		if err != nil {
			return nil, under(err, "."+n)
		}
		out.Keys = append(out.Keys, n)
		out.Vals = append(out.Vals, c)
	}
	return out, nil
}

// dictShape is a JSON object with arbitrary keys; intKeys turns the keys
// into Python ints (they are ids), otherwise they stay strings.
type dictShape struct {
	intKeys bool
	elem    shape
}

func shIntDict(elem shape) shape { return dictShape{true, elem} }
func shStrDict(elem shape) shape { return dictShape{false, elem} }

func (s dictShape) String() string {
	if s.intKeys {
		return "object of id → " + s.elem.String()
	}
	return "object of string → " + s.elem.String()
}

func (s dictShape) conv(v any) (any, error) {
	d, ok := v.(*pyvalue.Dict)
	if !ok {
		return nil, wantErr(s.String(), v)
	}
	out := &pyvalue.Dict{}
	for i, k := range d.Keys {
		ks := k.(string)
		var key any = ks
		if s.intKeys {
			n, err := strconv.ParseInt(ks, 10, 64)
			if err != nil || strconv.FormatInt(n, 10) != ks {
				return nil, &fieldErr{msg: fmt.Sprintf("key %q is not an integer id", ks)}
			}
			key = n
		}
		c, err := s.elem.conv(d.Vals[i])
		if err != nil {
			return nil, under(err, "."+ks)
		}
		out.Keys = append(out.Keys, key)
		out.Vals = append(out.Vals, c)
	}
	return out, nil
}

// ---------------------------------------------------------------- accessors
// For values that passed a shape check.

func asInts(v any) []int {
	l := v.(*pyvalue.List)
	out := make([]int, len(l.Items))
	for i, it := range l.Items {
		out[i] = int(it.(int64))
	}
	return out
}

func asFloats(v any) []float64 {
	l := v.(*pyvalue.List)
	out := make([]float64, len(l.Items))
	for i, it := range l.Items {
		out[i] = it.(float64)
	}
	return out
}

func asStrings(v any) []string {
	l := v.(*pyvalue.List)
	out := make([]string, len(l.Items))
	for i, it := range l.Items {
		out[i] = it.(string)
	}
	return out
}

func asItems(v any) []any { return v.(*pyvalue.List).Items }

func field(v any, name string) any {
	x, _ := v.(*pyvalue.Dict).Get(name)
	return x
}
