package envserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

const testInstance = "A3C9-1"

type client struct {
	t     testing.TB
	base  string
	token string
}

func newServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The server as des serve runs it: its timeouts and connection cap.
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = s.HTTPServer()
	hs.Listener = s.Listener(hs.Listener)
	hs.Start()
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs
}

// do sends a request and returns the status and body.
func (c *client) do(method, path string, body []byte) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (c *client) create(paradigm string, seed uint64) string {
	c.t.Helper()
	code, b := c.do("POST", "/v1/episodes", fmt.Appendf(nil, `{"instance":%q,"paradigm":%q,"seed":%d}`, testInstance, paradigm, seed))
	if code != http.StatusCreated {
		c.t.Fatalf("create: %d %s", code, b)
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		c.t.Fatal(err)
	}
	return st.ID
}

// next long-polls the pending decision; nil when the episode is done.
func (c *client) next(id string) *coord.Decision {
	c.t.Helper()
	for {
		code, b := c.do("GET", "/v1/episodes/"+id+"/decision?wait=1", nil)
		switch code {
		case http.StatusNoContent:
			continue
		case http.StatusOK:
		default:
			c.t.Fatalf("decision: %d %s", code, b)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			c.t.Fatal(err)
		}
		if _, ok := top["done"]; ok {
			return nil
		}
		var d coord.Decision
		if err := json.Unmarshal(b, &d); err != nil {
			c.t.Fatal(err)
		}
		return &d
	}
}

func (c *client) post(id string, step int, actions map[string]int) (int, []byte) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"step": step, "actions": actions})
	return c.do("POST", "/v1/episodes/"+id+"/actions", b)
}

// play plays the rule policy to the end of the episode.
func (c *client) play(id string) {
	c.t.Helper()
	for d := c.next(id); d != nil; d = c.next(id) {
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		if code, b := c.post(id, d.Step, acts); code != http.StatusOK {
			c.t.Fatalf("actions: %d %s", code, b)
		}
	}
}

func inProcessTrace(t *testing.T, paradigm string, seed uint64) []byte {
	in, err := factory.Resolve(testInstance)
	if err != nil {
		t.Fatal(err)
	}
	mode, err := new(coord.Paradigms).Lookup(paradigm)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res := harness.Run(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: seed, Mode: mode, Controller: policy.Rule{}, Trace: &buf})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return buf.Bytes()
}

func TestConcurrentEpisodesMatchInProcess(t *testing.T) {
	_, hs := newServer(t, Config{})
	const seed = 3
	type out struct {
		paradigm string
		trace    []byte
		metrics  harness.Metrics
	}
	results := make([]out, len(coord.Builtins()))
	var wg sync.WaitGroup
	for i, m := range coord.Builtins() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{t: t, base: hs.URL}
			id := c.create(m.ID, seed)
			c.play(id)
			code, tr := c.do("GET", "/v1/episodes/"+id+"/artifacts/trace.jsonl", nil)
			if code != 200 {
				t.Errorf("trace: %d %s", code, tr)
			}
			code, b := c.do("GET", "/v1/episodes/"+id, nil)
			var st Status
			if code != 200 || json.Unmarshal(b, &st) != nil || st.Metrics == nil || st.State != StateDone {
				t.Errorf("status: %d %s", code, b)
			} else {
				results[i] = out{m.ID, tr, *st.Metrics}
			}
			if code, b := c.do("DELETE", "/v1/episodes/"+id, nil); code != 200 {
				t.Errorf("delete: %d %s", code, b)
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.paradigm == "" {
			continue
		}
		want := inProcessTrace(t, r.paradigm, seed)
		if !bytes.Equal(r.trace, want) {
			t.Errorf("%s: HTTP trace (%d bytes) differs from the in-process one (%d bytes)", r.paradigm, len(r.trace), len(want))
		}
		if r.metrics.GFb != 0 || r.metrics.Controller != ControllerName {
			t.Errorf("%s: G_fb %d, controller %q", r.paradigm, r.metrics.GFb, r.metrics.Controller)
		}
	}
}

func TestToken(t *testing.T) {
	_, hs := newServer(t, Config{Token: "s3cret"})
	for _, tok := range []string{"", "wrong", "s3cret2"} {
		c := &client{t: t, base: hs.URL, token: tok}
		if code, b := c.do("GET", "/v1/health", nil); code != http.StatusUnauthorized || !strings.Contains(string(b), "token") {
			t.Errorf("token %q: %d %s", tok, code, b)
		}
		if code, _ := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"centralized"}`)); code != http.StatusUnauthorized {
			t.Errorf("token %q: create got %d", tok, code)
		}
	}
	c := &client{t: t, base: hs.URL, token: "s3cret"}
	if code, b := c.do("GET", "/v1/health", nil); code != 200 {
		t.Errorf("good token: %d %s", code, b)
	}
}

// A server's episodes name paradigms from its own set: a custom one
// there, the built-ins elsewhere.
func TestServerParadigms(t *testing.T) {
	custom := coord.Hierarchical()
	custom.ID = "area_chain"
	var set coord.Paradigms
	if err := set.Add(custom); err != nil {
		t.Fatal(err)
	}
	_, withCustom := newServer(t, Config{Paradigms: &set})
	c := &client{t: t, base: withCustom.URL}
	id := c.create(custom.ID, 3)
	c.play(id)
	_, plain := newServer(t, Config{})
	c = &client{t: t, base: plain.URL}
	code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"area_chain"}`))
	if code != http.StatusBadRequest || !strings.Contains(errMsg(t, b), `unknown paradigm "area_chain"`) {
		t.Errorf("a server without the custom paradigm: %d %s", code, b)
	}
}

func errMsg(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		t.Errorf("no error message in %s", b)
	}
	return e.Error
}

func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true, MaxBody: 4096})
	c := &client{t: t, base: hs.URL}
	for _, body := range []string{`{`, `[]`, `{"instance":"A3C9-1"}`, `{"instance":"/etc/passwd","paradigm":"centralized"}`,
		`{"instance":"A3C9-1","paradigm":"nope"}`, `{"instance":"A3C9-1","paradigm":"centralized","seed":-1}`} {
		if code, b := c.do("POST", "/v1/episodes", []byte(body)); code != 400 {
			t.Errorf("create %s: %d %s", body, code, b)
		} else {
			errMsg(t, b)
		}
	}
	if code, b := c.do("GET", "/v1/episodes/nope/decision", nil); code != 404 {
		t.Errorf("unknown episode: %d %s", code, b)
	}
	id := c.create("centralized", 3)
	d := c.next(id)
	checks := []struct {
		body string
		code int
	}{
		{`{"step":0,`, 400},
		{`not json`, 400},
		{`{"step":0}`, 400},
		{`{"actions":{}}`, 400},
		{fmt.Sprintf(`{"step":%d,"actions":{"plant":0}}`, d.Step+1), 409},
		{`{"step":0,"actions":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413},
	}
	for _, ck := range checks {
		code, b := c.do("POST", "/v1/episodes/"+id+"/actions", []byte(ck.body))
		if code != ck.code {
			t.Errorf("%.40s: got %d %s, want %d", ck.body, code, b, ck.code)
		}
		errMsg(t, b)
	}
	// The decision is still pending: an unknown agent consumes it, and its
	// agents fall back.
	if d2 := c.next(id); d2 == nil || d2.Step != d.Step {
		t.Fatalf("decision no longer pending after malformed bodies")
	}
	code, b := c.do("POST", "/v1/episodes/"+id+"/actions", fmt.Appendf(nil, `{"step":%d,"actions":{"cell:NOPE":0}}`, d.Step))
	if code != 422 || !strings.Contains(errMsg(t, b), "cell:NOPE") {
		t.Errorf("unknown agent: %d %s", code, b)
	}
	if code, b := c.post(id, d.Step, map[string]int{}); code != 409 {
		t.Errorf("second body for a consumed step: %d %s", code, b)
	}
	// Traversal and unknown artifacts are refused.
	for _, name := range []string{"..%2F..%2Fetc%2Fpasswd", "..%2Fmetrics.json", "controller.json", "%2e%2e"} {
		if code, b := c.do("GET", "/v1/episodes/"+id+"/artifacts/"+name, nil); code != 404 && code != 400 {
			t.Errorf("artifact %s: %d %s", name, code, b)
		}
	}
	c.play(id)
	audits := readAudits(t, filepath.Join(dir, id, harness.FileDecisions))
	var fb int
	for _, a := range audits {
		if a.Step == d.Step {
			if a.Source != coord.SourceFallback || a.AgentNote == nil || !strings.Contains(a.AgentNote.Error, "unknown agents") {
				t.Errorf("step %d: %+v", d.Step, a)
			}
		}
		if a.Source == coord.SourceFallback {
			fb++
		}
	}
	if fb != len(d.ActiveAgents) {
		t.Errorf("%d fallbacks, want %d", fb, len(d.ActiveAgents))
	}
}

func readAudits(t *testing.T, path string) []coord.Audit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []coord.Audit
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var a coord.Audit
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func TestDeleteMidEpisode(t *testing.T) {
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true})
	c := &client{t: t, base: hs.URL}
	id := c.create("hierarchical", 3)
	for range 5 {
		d := c.next(id)
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		if code, b := c.post(id, d.Step, acts); code != 200 {
			t.Fatalf("%d %s", code, b)
		}
	}
	// The sixth decision is pending when the client leaves (without
	// waiting for it, the run may stop before raising it: no fallback).
	if d := c.next(id); d == nil {
		t.Fatal("no sixth decision")
	}
	code, b := c.do("DELETE", "/v1/episodes/"+id, nil)
	var st Status
	if code != 200 || json.Unmarshal(b, &st) != nil || st.State != StateDone || st.Metrics == nil {
		t.Fatalf("delete: %d %s", code, b)
	}
	if st.Metrics.GFb == 0 || st.Answered != 5 {
		t.Errorf("G_fb %d, answered %d", st.Metrics.GFb, st.Answered)
	}
	audits := readAudits(t, filepath.Join(dir, id, harness.FileDecisions))
	last := audits[len(audits)-1]
	if last.Source != coord.SourceFallback || !strings.Contains(last.Reason, "closed by the client") {
		t.Errorf("last audit: %+v", last)
	}
	if code, _ := c.do("GET", "/v1/episodes/"+id, nil); code != 404 {
		t.Errorf("deleted episode still there: %d", code)
	}
}

func TestDecisionTimeoutAndLimits(t *testing.T) {
	_, hs := newServer(t, Config{DecisionTimeout: 50 * time.Millisecond, MaxEpisodes: 1})
	c := &client{t: t, base: hs.URL}
	id := c.create("centralized", 3)
	if code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"centralized"}`)); code != 429 {
		t.Errorf("over the limit: %d %s", code, b)
	}
	if d := c.next(id); d != nil { // the first decision times out; all fall back
		for d != nil {
			d = c.next(id)
		}
	}
	_, b := c.do("GET", "/v1/episodes/"+id, nil)
	var st Status
	json.Unmarshal(b, &st)
	if st.State != StateDone || !strings.Contains(st.Reason, "within") || st.Metrics == nil || st.Metrics.GFb == 0 {
		t.Errorf("status after timeout: %s", b)
	}
}

// BenchmarkRoundTrip measures one decision round trip over HTTP on
// loopback (GET decision + POST actions), the rule policy included.
func BenchmarkRoundTrip(b *testing.B) {
	_, hs := newServer(b, Config{})
	c := &client{t: b, base: hs.URL}
	id := c.create("holonic_hybrid", 3)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		d := c.next(id)
		if d == nil {
			b.StopTimer()
			c.do("DELETE", "/v1/episodes/"+id, nil)
			id = c.create("holonic_hybrid", 3)
			b.StartTimer()
			continue
		}
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		c.post(id, d.Step, acts)
		n++
	}
	b.ReportMetric(float64(n), "decisions")
}

// TestNegativeNotesIgnored: a client's note counts are untrusted; negative
// ones are ignored (named in the problems), never recorded.
func TestNegativeNotesIgnored(t *testing.T) {
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true})
	c := &client{t: t, base: hs.URL}
	id := c.create("centralized", 3)
	d := c.next(id)
	acts, _ := policy.Rule{}.Act(context.Background(), d)
	notes := map[string]any{}
	for a := range acts {
		notes[a] = map[string]any{"calls": -329, "prompt_tokens": -5}
	}
	b, _ := json.Marshal(map[string]any{"step": d.Step, "actions": acts, "notes": notes})
	code, body := c.do("POST", "/v1/episodes/"+id+"/actions", b)
	var resp ActionsResponse
	if code != 200 || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("%d %s", code, body)
	}
	for a := range acts {
		if !strings.Contains(resp.Warnings[a], "notes ignored: calls -329") || resp.Problems[a] != "" {
			t.Errorf("%s: warning %q, problem %q", a, resp.Warnings[a], resp.Problems[a])
		}
	}
	c.play(id)
	for _, au := range readAudits(t, filepath.Join(dir, id, harness.FileDecisions)) {
		if n := au.AgentNote; n != nil && (n.Calls < 0 || n.PromptTokens < 0) {
			t.Fatalf("negative counts recorded: %+v", au)
		}
	}
}
