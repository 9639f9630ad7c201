// Package inspectschema compiles Inspect's EvalLog schema, the
// log-schema.json kept in export/inspect/testdata (its README gives the
// source, version and licence), and validates logs against it, for tests:
// it finds the schema through its own source file, so it works where the
// source tree is (go test), not in an installed binary.
package inspectschema

import (
	"bytes"
	"fmt"
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
	return filepath.Join(filepath.Dir(file), "..", "testdata", "log-schema.json")
}

// Compile compiles the schema (JSON Schema 2020-12, as pydantic writes it).
func Compile() (*jsonschema.Schema, error) {
	f, err := os.Open(Path())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path(), err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("log-schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("log-schema.json")
}

// Validate checks one encoded eval log against sch.
func Validate(sch *jsonschema.Schema, log []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}
