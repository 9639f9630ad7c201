//go:build unix

package extctl_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
)

// The audits of external decisions, usable or not, stay within the
// published schema ($defs/Audit of docs/payload.schema.json).
func TestAuditsMatchSchema(t *testing.T) {
	f, err := os.Open("../../docs/payload.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id + "#/$defs/Audit")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"first", "garbage:3", "wrong:3", "illegal:3", "notint:3", "crash:6", "nohello", "hang:5"} {
		e := runExternal(t, helperCommand(t, spec), coord.Centralized, extctl.Config{Timeout: 300 * time.Millisecond})
		fd, err := os.Open(filepath.Join(e.dir, harness.FileDecisions))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fd)
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
			if err == nil {
				err = sch.Validate(inst)
			}
			if err != nil {
				t.Fatalf("%s: decisions.jsonl:%d: %v", spec, n, err)
			}
		}
		fd.Close()
	}
}
