package coord

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// maxParadigmFile bounds the size of a paradigm file, in bytes: a paradigm
// is a few switches and a description.
const maxParadigmFile = 64 << 10

// AddFile reads a paradigm from a YAML (or JSON) file with the keys of
// AuthorityMode (mode_id, routing_authority_mode, ...), validates it and
// adds it to the set. A definition the set already holds unchanged (a
// built-in's, or one added before, as when a suite is resumed with the
// same paradigm file) is not an error; a different definition under a
// taken id is.
func (p *Paradigms) AddFile(path string) (AuthorityMode, error) {
	data, err := inputfile.Read(path, "paradigm file", maxParadigmFile)
	if err != nil {
		return AuthorityMode{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m AuthorityMode
	if err := dec.Decode(&m); err != nil {
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	if prev, err := p.Lookup(m.ID); err == nil {
		if prev.Equal(m) {
			return m, nil
		}
		return AuthorityMode{}, fmt.Errorf("%s: paradigm %q is already registered with other settings", path, m.ID)
	}
	if err := p.Add(m); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			var root yaml.Node
			if yaml.Unmarshal(data, &root) == nil {
				if line := nodeLine(&root, fe.Path); line > 0 {
					return AuthorityMode{}, fmt.Errorf("%s:%d: %v", path, line, err)
				}
			}
		}
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// nodeLine finds the line of the value at path ("adaptive.rules[0].when")
// in a decoded YAML document: the deepest part of the path it holds
// (0 if none).
func nodeLine(root *yaml.Node, path string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(path, ".") {
		key, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			k, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil {
				return line
			}
			key, idx = part[:i], k
		}
		next := (*yaml.Node)(nil)
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					next = n.Content[i+1]
					line = n.Content[i].Line
				}
			}
		}
		if next == nil {
			return line
		}
		n = next
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		}
	}
	return line
}
