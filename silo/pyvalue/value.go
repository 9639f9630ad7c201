package pyvalue

// The container types and their constructors.

// List is a Python list, or a tuple when Tuple is set (JSON has only
// arrays; str() shows tuples in parentheses).
type List struct {
	Items []any
	Tuple bool
}

// Dict is a Python dict: keys in insertion order, Vals[i] under Keys[i].
type Dict struct {
	Keys []any
	Vals []any
	// index maps string keys to positions; built by the parsers (nil
	// for dicts built in code, which are small), read-only afterwards.
	index map[string]int
}

// ListOf is the list [items...].
func ListOf(items ...any) *List { return &List{Items: items} }

// TupleOf is the tuple (items...).
func TupleOf(items ...any) *List { return &List{Items: items, Tuple: true} }

// Set stores v under k (a string or int64 key), in place if k is there.
func (d *Dict) Set(k, v any) {
	for i, old := range d.Keys {
		if keyEqual(old, k) {
			d.Vals[i] = v
			return
		}
	}
	d.Keys = append(d.Keys, k)
	d.Vals = append(d.Vals, v)
}

// Get returns the value under a string key.
func (d *Dict) Get(k string) (any, bool) {
	i := d.Find(k)
	if i < 0 {
		return nil, false
	}
	return d.Vals[i], true
}

// Find returns the position of a string key, or -1.
func (d *Dict) Find(k string) int {
	if d.index != nil {
		i, ok := d.index[k]
		if !ok {
			return -1
		}
		return i
	}
	for i, old := range d.Keys {
		if s, ok := old.(string); ok && s == k {
			return i
		}
	}
	return -1
}

// put is how the parsers store v under key k, whose string form (the
// index key) is name: a repeated key keeps its first place and takes the
// last value.
func (d *Dict) put(name string, k, v any) {
	if at, dup := d.index[name]; dup {
		d.Vals[at] = v
		return
	}
	d.index[name] = len(d.Keys)
	d.Keys = append(d.Keys, k)
	d.Vals = append(d.Vals, v)
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

// Ints is a list of ints.
func Ints(xs []int) *List {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return &List{Items: out}
}

// Floats is a list of floats.
func Floats(xs []float64) *List {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return &List{Items: out}
}

// Strings is a list of strings.
func Strings(xs []string) *List {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return &List{Items: out}
}
