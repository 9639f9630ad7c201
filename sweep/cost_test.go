package sweep

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
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
	if _, err := readDesUsage(des, false, nil); err == nil || !strings.Contains(err.Error(), ":2: negative") {
		t.Errorf("des log with negative tokens: %v", err)
	}
	silo := t.TempDir()
	if err := os.WriteFile(filepath.Join(silo, llmagent.FileTurns), []byte(`{"usage":{"prompt_tokens":5,"completion_tokens":-7}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSiloUsage(silo, false, nil); err == nil || !strings.Contains(err.Error(), ":1: negative") {
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
	u, err := readSiloUsage(dir, false, nil)
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
	u, err := readDesUsage(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 2 || u.InputTokens != 18 || u.OutputTokens != 5 {
		t.Errorf("usage %+v: want 2 billed calls, 18 input and 5 output tokens", u)
	}
}

// The logs of a killed run may end in a line cut short: ReadPartialUsage
// leaves it out (ReadUsage refuses it), and reads CRLF lines and a last
// line with its newline alike.
func TestPartialUsageLeavesTornLineOut(t *testing.T) {
	dir := t.TempDir()
	log := `{"step":0,"agent_id":"plant","prompt_tokens":10,"completion_tokens":2,"calls":1}` + "\r\n" +
		`{"step":1,"agent_id":"plant","prompt_tokens":8,"completion_tokens":3,"calls":1}` + "\n" +
		`{"step":2,"agent_id":"plant","prompt_tok`
	if err := os.WriteFile(filepath.Join(dir, harness.FileDecisions), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUsage(BenchmarkDes, dir); err == nil || !strings.Contains(err.Error(), ":3:") {
		t.Errorf("ReadUsage of a torn log: %v", err)
	}
	u, err := ReadPartialUsage(BenchmarkDes, dir)
	if err != nil || u.Calls != 2 || u.InputTokens != 18 || u.OutputTokens != 5 {
		t.Errorf("ReadPartialUsage: %+v, %v; want the two whole lines", u, err)
	}
	// Whole again: the last line counts.
	if err := os.WriteFile(filepath.Join(dir, harness.FileDecisions), []byte(log+`ens":1,"completion_tokens":1,"calls":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string, string) (Usage, error){ReadUsage, ReadPartialUsage} {
		if u, err := read(BenchmarkDes, dir); err != nil || u.Calls != 3 || u.InputTokens != 19 {
			t.Errorf("a whole log: %+v, %v", u, err)
		}
	}
}

// readLine bounds a line, with or without its newline, and tells whether
// a newline ended it.
func TestReadLineBounded(t *testing.T) {
	type got struct {
		line  string
		ended bool
		err   string
	}
	read := func(in string) (out []got) {
		r := bufio.NewReaderSize(strings.NewReader(in), 16) // lines over the buffer too
		for {
			line, ended, err := readLine(r, 20)
			g := got{string(line), ended, ""}
			if err != nil {
				g.err = err.Error()
			}
			out = append(out, g)
			if err != nil {
				return out
			}
		}
	}
	cases := map[string][]got{
		"a\r\nbb\n":                       {{"a", true, ""}, {"bb", true, ""}, {"", false, "EOF"}},
		"12345678901234567890\nx":         {{"12345678901234567890", true, ""}, {"x", false, "EOF"}},
		"123456789012345678901\n":         {{"", false, "line longer than 20 bytes"}},
		"1234567890123456789012345678901": {{"", false, "line longer than 20 bytes"}},
	}
	for in, want := range cases {
		if out := read(in); !slices.Equal(out, want) {
			t.Errorf("%q: %v, want %v", in, out, want)
		}
	}
}
