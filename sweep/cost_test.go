package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// A case log with negative calls or tokens is refused, naming the file
// and line, rather than lowering the money counted as spent.
func TestNegativeUsageRefused(t *testing.T) {
	des := t.TempDir()
	if err := os.WriteFile(filepath.Join(des, harness.FileDecisions), []byte(`{"step":0,"agent_id":"plant","prompt_tokens":10,"completion_tokens":2,"calls":1}
{"step":1,"agent_id":"plant","prompt_tokens":-1000000,"completion_tokens":2,"calls":1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readDesUsage(des); err == nil || !strings.Contains(err.Error(), ":2: negative") {
		t.Errorf("des log with negative tokens: %v", err)
	}
	silo := t.TempDir()
	if err := os.WriteFile(filepath.Join(silo, llmagent.FileTurns), []byte(`{"usage":{"prompt_tokens":5,"completion_tokens":-7}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSiloUsage(silo); err == nil || !strings.Contains(err.Error(), ":1: negative") {
		t.Errorf("silo log with negative tokens: %v", err)
	}
}
