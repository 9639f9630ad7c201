// Package payloadschema compiles definitions of the published payload
// schema (docs/payload.schema.json) and validates JSON lines against them,
// for tests: it finds the schema through its own source file, so it works
// where the source tree is (go test), not in an installed binary.
package payloadschema

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Path is the schema file in the source tree ("" if unknown).
func Path() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "payload.schema.json")
}

// Def compiles the schema's $defs/<name> ("Audit", "Message", …).
func Def(name string) (*jsonschema.Schema, error) {
	f, err := os.Open(Path())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path(), err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		return nil, err
	}
	return c.Compile(id + "#/$defs/" + name)
}

// ValidateLines validates every line of r (JSON lines: decisions.jsonl,
// messages.jsonl) against sch and calls each, if not nil, with every
// decoded line; the error names the first failing line.
func ValidateLines(sch *jsonschema.Schema, r io.Reader, each func(v any)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err == nil {
			err = sch.Validate(v)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if each != nil {
			each(v)
		}
	}
	return sc.Err()
}
