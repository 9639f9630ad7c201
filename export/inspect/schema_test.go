package inspect

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaPath is testdata/log-schema.json, Inspect's log schema
// (testdata/README.md), found through this file so that other packages'
// tests can read it too.
func schemaPath(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no source path")
	}
	return filepath.Join(filepath.Dir(file), "testdata", "log-schema.json")
}

// compileSchema compiles Inspect's EvalLog schema.
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("log-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("log-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validate checks one encoded log against the schema.
func validate(t testing.TB, sch *jsonschema.Schema, name string, data []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not validate against Inspect's log schema: %v", name, err)
	}
}
