package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes a run directory holding metrics.json and decisions.jsonl.
func writeRun(t *testing.T, decisions string) string {
	t.Helper()
	dir := t.TempDir()
	metrics := `{"instance":"A3C9-1","paradigm":"centralized","controller":"llm","model":"m","framework":"graph","seed":1,"status":"done"}`
	for name, body := range map[string]string{"metrics.json": metrics, "decisions.jsonl": decisions} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const view = `"payload":{"agent_id":"plant","role":"plant","kind":"release","observation":{"power_headroom_kw":1},"context":{},"legal_actions":[0],"options":[{"index":0,"action":"hold"}],"decision_factors":[],"action_mask":[true]}`

// A model's reply reaches the terminal through the filter: an escape
// sequence shows as text; long replies are clipped unless --full.
func TestWriteFiltersAndClips(t *testing.T) {
	reply := "\x1b]0;pwned\x07{\"action\": 0} " + strings.Repeat("x", 200)
	quoted, err := json.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeRun(t, `{"step":0,"time":0,"agent_id":"plant","role":"plant","kind":"release","action":0,"source":"llm","messages":0,"raw_reply":`+
		string(quoted)+`,"parse":"json","model":"m",`+view+"}\n")
	var out bytes.Buffer
	if err := Write(&out, dir, Options{Step: AllSteps, Width: 30}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.ContainsAny(s, "\x1b\x07") || !strings.Contains(s, "␛]0;pwned␇") || !strings.Contains(s, "…\n") {
		t.Errorf("listing:\n%q", s)
	}
	out.Reset()
	if err := Write(&out, dir, Options{Step: AllSteps, Full: true}); err != nil || !strings.Contains(out.String(), strings.Repeat("x", 200)) {
		t.Errorf("--full: %v\n%s", err, out.String())
	}
}

// Requests are refused, with a reason, where there is none to rebuild; a
// decisions log with an oversized or malformed line is an error naming it.
func TestWriteRequestErrors(t *testing.T) {
	builtin := writeRun(t, `{"step":0,"time":0,"agent_id":"plant","role":"plant","kind":"release","action":0,"source":"builtin","messages":0,`+view+"}\n")
	var out bytes.Buffer
	for _, c := range []struct {
		step  int
		agent string
		want  string
	}{
		{0, "plant", "decided by builtin, not by a model call"},
		{1, "plant", `no decision of agent "plant" at step 1`},
		{-1, "plant", "give its step and agent"},
	} {
		if err := WriteRequest(&out, builtin, c.step, c.agent); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("step %d %q: %v, want %q", c.step, c.agent, err, c.want)
		}
	}
	// An LLM note without a hash (an older run) is printed unchecked.
	old := writeRun(t, `{"step":0,"time":0,"agent_id":"plant","role":"plant","kind":"release","action":0,"source":"llm","messages":0,"model":"m",`+view+"}\n")
	out.Reset()
	if err := WriteRequest(&out, old, 0, "plant"); err != nil || !strings.Contains(out.String(), "[1 user] {\"agent\":\"plant\"") || !strings.Contains(out.String(), "not checked") {
		t.Errorf("an audit without prompt_sha256: %v\n%s", err, out.String())
	}
	bad := writeRun(t, "\nnot json\n")
	if err := Write(&out, bad, Options{Step: AllSteps}); err == nil || !strings.Contains(err.Error(), "decisions.jsonl:2:") {
		t.Errorf("a malformed line: %v", err)
	}
	if err := Write(&out, t.TempDir(), Options{Step: AllSteps}); err == nil || !strings.Contains(err.Error(), "metrics.json") {
		t.Errorf("no run: %v", err)
	}
}
