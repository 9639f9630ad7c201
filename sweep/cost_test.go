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

// A silo turn whose model call failed without a reply is not a billed
// call; one that failed on an unusable reply is, with that reply's tokens.
func TestSiloFailedCallsNotBilled(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, llmagent.FileTurns), []byte(`{"outcome":"ok","usage":{"prompt_tokens":100,"completion_tokens":10}}
{"outcome":"model_error","error":"connection refused","usage":{"prompt_tokens":0,"completion_tokens":0}}
{"outcome":"model_error","error":"no JSON in the reply","usage":{"prompt_tokens":50,"completion_tokens":5}}
{"outcome":"no_tool_call","usage":{"prompt_tokens":20,"completion_tokens":2}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := readSiloUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 3 || u.InputTokens != 170 || u.OutputTokens != 17 {
		t.Errorf("usage %+v: want 3 billed calls, 170 input and 17 output tokens", u)
	}
}

// The same rule for a scheduling case: an audit line of a failed call
// carries the tokens of its unusable reply and no "calls"; it is one
// billed call.
func TestDesFailedCallWithReplyBilled(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, harness.FileDecisions), []byte(`{"step":0,"agent_id":"plant","prompt_tokens":10,"completion_tokens":2,"calls":1}
{"step":1,"agent_id":"plant","prompt_tokens":8,"completion_tokens":3}
{"step":2,"agent_id":"plant"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := readDesUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 2 || u.InputTokens != 18 || u.OutputTokens != 5 {
		t.Errorf("usage %+v: want 2 billed calls, 18 input and 5 output tokens", u)
	}
}
