package factory

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/internal/suggest"
)

// yamlFieldError turns a decoder message of yaml.v3 into one a user can act
// on: an unknown key gets the key's field path and the nearest known key
// ("did you mean"), a type mismatch the field path and the type wanted.
// It returns nil for other messages.
func yamlFieldError(file string, line int, msg string, root *yaml.Node) *InstanceError {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		key, typ := m[1], m[2]
		path := findNode(root, "", line, func(k, v *yaml.Node) bool { return k != nil && k.Line == line && k.Value == key })
		return &InstanceError{File: file, Line: line, Field: path, Msg: unknownFieldMsg(key, knownKeys()[typ])}
	}
	if m := typeErrorRE.FindStringSubmatch(msg); m != nil {
		tag, val, goType := m[1], m[2], m[3]
		kind := yaml.ScalarNode
		switch tag {
		case "seq":
			kind = yaml.SequenceNode
		case "map":
			kind = yaml.MappingNode
		}
		var got *yaml.Node
		path := findNode(root, "", line, func(_, v *yaml.Node) bool {
			ok := v.Line == line && v.Kind == kind && (kind != yaml.ScalarNode || strings.HasPrefix(v.Value, strings.TrimSuffix(val, "...")))
			if ok {
				got = v
			}
			return ok
		})
		gotText := map[string]string{"seq": "a list", "map": "a mapping"}[tag]
		if got != nil && kind == yaml.ScalarNode {
			gotText = strconv.Quote(got.Value)
		}
		return &InstanceError{File: file, Line: line, Field: path, Msg: fmt.Sprintf("want %s, got %s", describeGoType(goType), gotText)}
	}
	return nil
}

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
	typeErrorRE    = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
)

// findNode returns the field path (as in validation errors) of the first
// mapping entry or list item on line for which match(key, value) holds;
// key is nil for a list item. It returns "" if none does.
func findNode(n *yaml.Node, path string, line int, match func(k, v *yaml.Node) bool) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := findNode(c, path, line, match); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if match(k, v) {
				return p
			}
			if q := findNode(v, p, line, match); q != "" {
				return q
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if match(nil, v) {
				return p
			}
			if q := findNode(v, p, line, match); q != "" {
				return q
			}
		}
	}
	return ""
}

func unknownFieldMsg(key string, known []string) string {
	if best := suggest.Closest(key, known); best != nil { // a suggestion must be closer than half the key
		return fmt.Sprintf("unknown field %q (did you mean %q?)", key, best[0])
	}
	if len(known) == 0 {
		return fmt.Sprintf("unknown field %q", key)
	}
	return fmt.Sprintf("unknown field %q (the fields here are %s)", key, strings.Join(known, ", "))
}

// knownKeys maps each struct type of the instance file, as yaml.v3 names
// it ("factory.Instance"), to its keys.
func knownKeys() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		keys := []string{}
		out[t.String()] = keys
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			keys = append(keys, name)
			walk(f.Type)
		}
		slices.Sort(keys)
		out[t.String()] = keys
	}
	walk(reflect.TypeFor[Instance]())
	return out
}

// describeGoType says what a value of a Go type looks like in the file.
func describeGoType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "a mapping"
	case strings.HasPrefix(t, "uint"):
		return "a non-negative integer"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	}
	return t
}
