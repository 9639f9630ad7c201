//go:build unix

package extctl_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/payloadschema"
)

// The audits of external decisions, usable or not, stay within the
// published schema ($defs/Audit of docs/payload.schema.json).
func TestAuditsMatchSchema(t *testing.T) {
	sch, err := payloadschema.Def("Audit")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"first", "garbage:3", "wrong:3", "illegal:3", "notint:3", "crash:6", "nohello", "hang:5"} {
		e := runExternal(t, helperCommand(t, spec), coord.Centralized(), extctl.Config{Timeout: 300 * time.Millisecond})
		fd, err := os.Open(filepath.Join(e.dir, harness.FileDecisions))
		if err != nil {
			t.Fatal(err)
		}
		err = payloadschema.ValidateLines(sch, fd, nil)
		fd.Close()
		if err != nil {
			t.Fatalf("%s: decisions.jsonl: %v", spec, err)
		}
	}
}
