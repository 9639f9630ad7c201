package inspect

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/coordbench/coordbench/export/inspect/inspectschema"
)

// compileSchema compiles Inspect's EvalLog schema.
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	sch, err := inspectschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validate checks one encoded log against the schema.
func validate(t testing.TB, sch *jsonschema.Schema, name string, data []byte) {
	t.Helper()
	if err := inspectschema.Validate(sch, data); err != nil {
		t.Errorf("%s does not validate against Inspect's log schema: %v", name, err)
	}
}
