package proto

// The message format: how the value a tool call carries becomes what the
// other agents read (Options.MessageFormat, docs/silo-protocols.md).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// MessageFormat chooses how non-string message contents, sfs paths and sfs
// contents are converted before other agents read them.
type MessageFormat string

const (
	// FormatStr is the published conversion (the default): message and
	// broadcast contents and sfs paths are Python's str() of the value the
	// call carried ([1, 2, 3] → "[1, 2, 3]", {"a": 1} → "{'a': 1}", true →
	// "True", 1e3 → "1000.0"); sfs contents are stored typed and read back
	// as Python's json.dumps writes them (1e3 → 1000.0, key order kept).
	FormatStr MessageFormat = "str"
	// FormatJSON delivers non-string contents as the compact JSON text that
	// was sent ({"a":1} stays {"a":1}, true stays true), sfs contents as
	// sent, and takes a number or bool sfs path as its JSON text (the
	// behaviour before the published conversion was the default).
	FormatJSON MessageFormat = "json"
)

// ParseMessageFormat checks a format name ("" means the default, str).
func ParseMessageFormat(s string) (MessageFormat, error) {
	switch MessageFormat(s) {
	case "", FormatStr:
		return FormatStr, nil
	case FormatJSON:
		return FormatJSON, nil
	}
	return "", fmt.Errorf("message format %q: want str (published) or json", s)
}

// MessageFormat returns the run's message format (the default filled in).
func (s *Store) MessageFormat() MessageFormat { return s.opts.MessageFormat }

// messageText is the text a message or broadcast delivers for the content
// value v: a JSON string is its text in both formats; any other value is
// str() of it (FormatStr) or its compact JSON (FormatJSON).
func messageText(v json.RawMessage, f MessageFormat) (string, error) {
	if s, ok := jsonString(v); ok {
		return s, nil
	}
	if f == FormatStr {
		x, err := pyvalue.ParseJSON(v)
		if err != nil {
			return "", err
		}
		return pyvalue.Str(x), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// fileContent is what write_file stores for the content value v: the typed
// value, written as Python's json.dumps writes it (FormatStr: floats in
// Python's form, 1e3 → 1000.0) or compacted as sent (FormatJSON).
func fileContent(v json.RawMessage, f MessageFormat) (json.RawMessage, error) {
	if f == FormatStr {
		x, err := pyvalue.ParseJSON(v)
		if err != nil {
			return nil, err
		}
		return pyvalue.Canon(x), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pathText converts a non-string sfs path value: str() of any value
// (FormatStr: 1 → "1", true → "True", 1.5 → "1.5", [1, 2] → "[1, 2]"), or
// (FormatJSON) the JSON text of a number or bool, other values rejected.
func pathText(v json.RawMessage, f MessageFormat) (string, callErr) {
	x, err := pyvalue.ParseJSON(v)
	if err != nil {
		return "", "malformed path"
	}
	if f == FormatStr {
		return pyvalue.Str(x), ""
	}
	switch x.(type) {
	case int64, *big.Int, float64, bool:
		return string(bytes.TrimSpace(v)), ""
	}
	return "", "invalid path: must be a string"
}

// jsonString decodes v if it is a JSON string (null is not one: Unmarshal
// would leave a string empty for it).
func jsonString(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}
