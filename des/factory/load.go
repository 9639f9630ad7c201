package factory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// InstanceError locates a fault in an instance file: the file, the line of
// the offending key (0 if unknown), the field path and what is wrong.
type InstanceError = inputfile.Error

// MaxFileBytes bounds an instance file (docs/instance-format.md).
const MaxFileBytes = 8 << 20

// LoadFile reads, validates and resolves an instance file within the
// default limits (see SizeLimits.LoadFile).
func LoadFile(path string) (*Instance, error) { return DefaultSizeLimits().LoadFile(path) }

// LoadFile reads, validates and resolves an instance file of at most
// MaxFileBytes; it must be a regular file (or a symlink to one) and its
// plant within l.
func (l SizeLimits) LoadFile(path string) (*Instance, error) {
	data, err := inputfile.Read(path, "instance file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return l.Parse(path, data)
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Parse decodes an instance from YAML within the default limits (see
// SizeLimits.Parse).
func Parse(name string, data []byte) (*Instance, error) { return DefaultSizeLimits().Parse(name, data) }

// Parse decodes an instance from YAML (JSON is valid YAML), rejects unknown
// keys, fills defaults and validates it, its plant within l. name is used
// in error messages.
func (l SizeLimits) Parse(name string, data []byte) (*Instance, error) {
	// The decoder holds the whole document as a node tree (about 200
	// bytes per item), so the number of items is bounded before decoding.
	if n, max := inputfile.Items(data), l.maxYAMLItems(); n > max {
		how := "this limit is fixed here"
		if l.Raise != "" {
			how = "it grows with the jobs limit: " + fmt.Sprintf(l.Raise, "jobs", (n-yamlItemsBase)/yamlItemsPerJob+1)
		}
		return nil, &InstanceError{File: name, Msg: fmt.Sprintf(
			"about %d YAML items (keys, values, list entries): over the limit of %d (%s; docs/instance-format.md)", n, max, how)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var inst Instance
	if err := dec.Decode(&inst); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InstanceError{File: name, Msg: "empty instance file"}
		}
		return nil, yamlError(name, err, parseTree(data))
	}
	if err := inst.resolve(l); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			line := 0
			if root := parseTree(data); root != nil && len(root.Content) > 0 {
				line = lineOf(root.Content[0], fe.path)
			}
			return nil, &InstanceError{File: name, Line: line, Field: fe.path, Msg: fe.msg}
		}
		return nil, &InstanceError{File: name, Msg: err.Error()}
	}
	return &inst, nil
}

// parseTree parses the document's node tree, for locating an error; nil
// if it does not parse. It is only built once decoding has failed, so that
// a valid file is held as one tree at a time.
func parseTree(data []byte) *yaml.Node {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return nil
	}
	return &root
}

// The item budget of an instance file (inputfile.Items). An order of the
// order book takes about ten, in YAML or in instance.json.
const (
	yamlItemsBase   = 500_000
	yamlItemsPerJob = 10
)

func (l SizeLimits) maxYAMLItems() int { return yamlItemsBase + yamlItemsPerJob*l.Jobs }

// yamlError turns a yaml.v3 error ("yaml: line 3: ...", or a TypeError
// listing several "line N: ..." entries) into an InstanceError on the first;
// with the document's root, an unknown key or a wrong type is reported at
// its field path (yamlFieldError).
func yamlError(name string, err error, root *yaml.Node) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if root != nil {
			if fe := yamlFieldError(name, line, m[2], root); fe != nil {
				return fe
			}
		}
		return &InstanceError{File: name, Line: line, Msg: m[2]}
	}
	return &InstanceError{File: name, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// fieldError is a validation fault at a dotted field path such as
// "areas[1].cells[0].buffer".
type fieldError struct {
	path string
	msg  string
}

func (e *fieldError) Error() string { return e.path + ": " + e.msg }

func bad(path, format string, args ...any) error {
	return &fieldError{path: path, msg: fmt.Sprintf(format, args...)}
}

var pathPart = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// lineOf finds the line of the deepest node along a field path.
func lineOf(n *yaml.Node, path string) int {
	line := n.Line
	for _, m := range pathPart.FindAllStringSubmatch(path, -1) {
		switch {
		case n.Kind == yaml.MappingNode && m[1] != "":
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == m[1] {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case n.Kind == yaml.SequenceNode && m[2] != "":
			i, _ := strconv.Atoi(m[2])
			if i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}
