package stubmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Bounds of an instance built from a schema (Instance).
const (
	maxSchemaDepth = 16   // nesting of objects, arrays and $refs
	maxInstanceLen = 64   // items of an array, properties of an object beyond the schema's
	maxNodes       = 4096 // values in one instance
)

// Instance returns a JSON value that satisfies the JSON Schema schema, its
// choices (enum members, numbers in a range, booleans, which tool) drawn
// from rng: type (the first that is not null, when several), const, enum,
// properties (every one, in name order) and required, additionalProperties
// and minProperties, items, prefixItems, minItems, maxItems and
// uniqueItems, minimum, maximum and their exclusive forms, multipleOf,
// minLength and maxLength, a few formats (date-time, date, time, email,
// uri, uuid), oneOf and anyOf (their first branch), allOf (merged), and
// local $refs (#/$defs/…, #/definitions/…). It ignores pattern and not.
// Depth and size are bounded; past a bound a value is its type's
// simplest. An empty or unparsable schema gives an empty object.
func Instance(schema json.RawMessage, rng *rand.Rand) json.RawMessage {
	var root any
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber()
	if len(bytes.TrimSpace(schema)) == 0 || d.Decode(&root) != nil {
		return json.RawMessage(`{}`)
	}
	g := &gen{rng: rng, root: root}
	b, err := json.Marshal(g.value(root, 0))
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

type gen struct {
	rng   *rand.Rand
	root  any
	nodes int
}

func (g *gen) value(s any, depth int) any {
	g.nodes++
	m, ok := s.(map[string]any)
	if !ok { // true, false or not a schema: any value will do
		return map[string]any{}
	}
	if depth > maxSchemaDepth {
		return zeroOf(typeOf(m))
	}
	if ref, ok := m["$ref"].(string); ok {
		if t, ok := g.resolve(ref); ok {
			return g.value(t, depth+1)
		}
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.IntN(len(e))]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if bs, ok := m[k].([]any); ok && len(bs) > 0 {
			return g.value(merge(without(m, k), branch(bs, depth)), depth+1)
		}
	}
	if bs, ok := m["allOf"].([]any); ok && len(bs) > 0 {
		merged := without(m, "allOf")
		for _, b := range bs {
			if r, ok := b.(map[string]any)["$ref"].(string); ok {
				if t, ok := g.resolve(r); ok {
					b = t
				}
			}
			merged = merge(merged, b)
		}
		return g.value(merged, depth+1)
	}
	switch typeOf(m) {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 1
	case "integer":
		return g.integer(m)
	case "number":
		return g.number(m)
	case "string":
		return g.text(m)
	case "array":
		return g.array(m, depth)
	}
	return g.object(m, depth)
}

// branch is the branch of a oneOf or anyOf to follow: the first, or deep
// in the schema the first that refers to nothing and holds no object or
// array (so that a recursive schema such as a linked list ends).
func branch(bs []any, depth int) any {
	if depth >= maxSchemaDepth/2 {
		for _, b := range bs {
			if m, ok := b.(map[string]any); ok && m["$ref"] == nil {
				if t := typeOf(m); t != "object" && t != "array" {
					return b
				}
			}
		}
	}
	return bs[0]
}

// typeOf is the schema's type: the first of its types that is not null,
// else one its keywords imply.
func typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case m["properties"] != nil || m["required"] != nil || m["additionalProperties"] != nil:
		return "object"
	case m["items"] != nil || m["prefixItems"] != nil:
		return "array"
	case m["minimum"] != nil || m["maximum"] != nil:
		return "number"
	}
	return "object"
}

func zeroOf(t string) any {
	switch t {
	case "null":
		return nil
	case "boolean":
		return false
	case "integer", "number":
		return 0
	case "string":
		return ""
	case "array":
		return []any{}
	}
	return map[string]any{}
}

// resolve follows a local JSON pointer ("#/$defs/Name").
func (g *gen) resolve(ref string) (any, bool) {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	cur := g.root
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// without is m without key k.
func without(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// merge is a shallow merge of schema b into a: properties joined, required
// joined, any other keyword b's.
func merge(a map[string]any, b any) map[string]any {
	bm, ok := b.(map[string]any)
	out := without(a, "")
	if !ok {
		return out
	}
	for k, v := range bm {
		switch k {
		case "properties":
			props, _ := out[k].(map[string]any)
			joined := without(props, "")
			if vm, ok := v.(map[string]any); ok {
				for pk, pv := range vm {
					joined[pk] = pv
				}
			}
			out[k] = joined
		case "required":
			req, _ := out[k].([]any)
			vs, _ := v.([]any)
			out[k] = append(append([]any(nil), req...), vs...)
		default:
			out[k] = v
		}
	}
	return out
}

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return n, true
	}
	return 0, false
}

// bounds are a numeric schema's inclusive range for integers (lo, hi) and
// whether each bound is exclusive (for numbers).
func bounds(m map[string]any) (lo, hi float64, hasLo, hasHi, exLo, exHi bool) {
	lo, hasLo = num(m["minimum"])
	hi, hasHi = num(m["maximum"])
	if v, ok := num(m["exclusiveMinimum"]); ok {
		lo, hasLo, exLo = v, true, true
	} else if b, _ := m["exclusiveMinimum"].(bool); b && hasLo { // draft 4
		exLo = true
	}
	if v, ok := num(m["exclusiveMaximum"]); ok {
		hi, hasHi, exHi = v, true, true
	} else if b, _ := m["exclusiveMaximum"].(bool); b && hasHi {
		exHi = true
	}
	return
}

// span is a range [lo, hi] of the given width where the schema leaves one
// bound or both open: [0, width], or width from the bound given.
func span(lo, hi float64, hasLo, hasHi bool, width float64) (float64, float64) {
	switch {
	case !hasLo && !hasHi:
		return 0, width
	case !hasHi:
		return lo, lo + width
	case !hasLo:
		return hi - width, hi
	}
	return lo, hi
}

func (g *gen) integer(m map[string]any) any {
	flo, fhi, hasLo, hasHi, exLo, exHi := bounds(m)
	lo, hi := math.Ceil(flo), math.Floor(fhi)
	if exLo && lo == flo {
		lo++
	}
	if exHi && hi == fhi {
		hi--
	}
	lo, hi = span(lo, hi, hasLo, hasHi, 9)
	lo, hi = max(lo, -1e15), min(hi, 1e15)
	if lo > hi {
		return int64(lo)
	}
	step := 1.0
	if mo, ok := num(m["multipleOf"]); ok && mo >= 1 && mo == math.Trunc(mo) {
		step = mo
		lo = math.Ceil(lo/step) * step
		if lo > hi {
			return int64(lo)
		}
	}
	n := int64(math.Floor((hi-lo)/step)) + 1
	return int64(lo + step*float64(g.rng.Int64N(min(n, 1<<40))))
}

func (g *gen) number(m map[string]any) any {
	if mo, ok := num(m["multipleOf"]); ok && mo > 0 {
		if mo == math.Trunc(mo) {
			return g.integer(m)
		}
		lo, hi, hasLo, hasHi, _, _ := bounds(m)
		k := 0.0
		if hasLo {
			k = math.Ceil(lo / mo)
		} else if hasHi {
			k = math.Floor(hi / mo)
		}
		return json.Number(strconv.FormatFloat(k*mo, 'g', 12, 64))
	}
	lo, hi, hasLo, hasHi, _, _ := bounds(m)
	lo, hi = span(lo, hi, hasLo, hasHi, 1)
	if lo >= hi {
		return json.Number(strconv.FormatFloat(lo, 'g', -1, 64))
	}
	k := float64(1 + g.rng.IntN(7)) // strictly inside, so exclusive bounds hold
	v := lo + (hi-lo)*k/8
	return json.Number(strconv.FormatFloat(v, 'g', 12, 64))
}

func (g *gen) text(m map[string]any) any {
	s := "stub"
	switch m["format"] {
	case "date-time":
		s = "2000-01-01T00:00:00Z"
	case "date":
		s = "2000-01-01"
	case "time":
		s = "00:00:00Z"
	case "email":
		s = "stub@example.com"
	case "uri", "url":
		s = "urn:stub"
	case "uuid":
		s = "00000000-0000-4000-8000-000000000000"
	default:
		s += strconv.Itoa(g.rng.IntN(100))
	}
	if n, ok := num(m["minLength"]); ok && float64(len(s)) < n {
		s += strings.Repeat("x", int(min(n, 1<<12))-len(s))
	}
	if n, ok := num(m["maxLength"]); ok && float64(len(s)) > n && n >= 0 {
		s = s[:int(n)]
	}
	return s
}

func (g *gen) array(m map[string]any, depth int) any {
	n := 1
	if v, ok := num(m["minItems"]); ok {
		n = int(min(max(v, 0), maxInstanceLen))
	}
	if v, ok := num(m["maxItems"]); ok && float64(n) > v {
		n = int(max(v, 0))
	}
	prefix, _ := m["prefixItems"].([]any)
	if tuple, ok := m["items"].([]any); ok { // draft 4 tuple
		prefix = tuple
	}
	n = max(n, min(len(prefix), maxInstanceLen))
	if v, ok := num(m["maxItems"]); ok && float64(n) > v {
		n = int(max(v, 0))
	}
	item, _ := m["items"].(map[string]any)
	unique, _ := m["uniqueItems"].(bool)
	out := []any{}
	seen := map[string]bool{}
	for i := 0; i < n && g.nodes < maxNodes; i++ {
		var s any = item
		if i < len(prefix) {
			s = prefix[i]
		}
		var v any
		for try := 0; try < 8; try++ {
			v = g.value(s, depth+1)
			if !unique {
				break
			}
			if k := key(v); !seen[k] {
				seen[k] = true
				break
			}
			v = nil
		}
		if v == nil && unique {
			continue
		}
		out = append(out, v)
	}
	return out
}

func key(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (g *gen) object(m map[string]any, depth int) any {
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if g.nodes >= maxNodes {
			break
		}
		out[k] = g.value(props[k], depth+1)
	}
	req, _ := m["required"].([]any)
	extra := m["additionalProperties"]
	for _, r := range req { // required but not described
		if k, ok := r.(string); ok {
			if _, done := out[k]; !done {
				out[k] = g.value(extraSchema(extra), depth+1)
			}
		}
	}
	if v, ok := num(m["minProperties"]); ok && extra != false {
		for i := 0; len(out) < int(min(v, maxInstanceLen)); i++ {
			out[fmt.Sprintf("extra_%d", i)] = g.value(extraSchema(extra), depth+1)
		}
	}
	return out
}

// extraSchema is the schema of properties the schema does not name.
func extraSchema(extra any) any {
	if m, ok := extra.(map[string]any); ok {
		return m
	}
	return map[string]any{"type": "string"}
}
