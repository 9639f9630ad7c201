//go:build unix

package extctl_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

const (
	proxyKeyEnv = "COORDBENCH_PROXY_TEST_KEY"
	proxyKey    = "sk-proxy-test-secret-5f3a9c"
)

// proxyEpisode plays one episode with the Python proxy runner, its model
// calls going through a proxy to upstream with the cache in mode.
func proxyEpisode(t *testing.T, upstream, cachePath, mode string) (*episode, extctl.ProxyTotals) {
	t.Helper()
	cache, err := llm.OpenCache(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	return proxyRun(t, extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: upstream, APIKeyEnv: proxyKeyEnv}}, Options: llm.Options{Cache: cache, CacheMode: mode, MaxAttempts: 2}})
}

// proxyRun plays one episode with the Python proxy runner, its model
// calls going through a proxy configured by cfg.
func proxyRun(t *testing.T, cfg extctl.ProxyConfig) (*episode, extctl.ProxyTotals) {
	t.Helper()
	p, err := extctl.NewProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e := runExternal(t, pythonRunner(t, "testdata/proxy_runner.py"), coord.Builtins()[0], extctl.Config{Proxy: p, Timeout: 30 * time.Second}) // a Python start on a loaded machine can take seconds
	return e, p.Totals()
}

func TestProxyAuditsModelCalls(t *testing.T) {
	t.Setenv(proxyKeyEnv, proxyKey)
	t.Setenv("OPENAI_API_KEY", proxyKey)                        // a key the runner would otherwise inherit
	t.Setenv("COORDBENCH_TEST_AUTH_HEADER", "Bearer "+proxyKey) // a variable that contains the key
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	stub.PromptCache = true // the runner's system message is a prompt-cache hit
	srv := httptest.NewServer(stub)
	upstream := srv.URL + "/v1"
	cachePath := filepath.Join(t.TempDir(), "cache.sqlite")

	e, tot := proxyEpisode(t, upstream, cachePath, llm.CacheReadWrite)
	e.intact(t)
	m := e.res.Metrics
	sec := m.Secondary
	if e.fallbacks() != 0 || e.c.Failed() != nil || len(e.c.Violations()) != 0 {
		t.Fatalf("fallbacks %d, failed %v, violations %v\n%s", e.fallbacks(), e.c.Failed(), e.c.Violations(), e.stderr)
	}
	if sec.LLMCalls != sec.Decisions || sec.LLMCalls != len(e.audits) || sec.PromptTokens <= 0 || sec.CompletionTokens <= 0 || e.res.CacheHits != 0 {
		t.Errorf("secondary: %d calls, %d decisions, %d audits, tokens %d+%d, %d cache hits",
			sec.LLMCalls, sec.Decisions, len(e.audits), sec.PromptTokens, sec.CompletionTokens, e.res.CacheHits)
	}
	if m.GLlm != len(e.audits) || sec.DecisionsBySource["llm"] != len(e.audits) {
		t.Errorf("G_llm %d, by source %v, want all %d decisions from llm", m.GLlm, sec.DecisionsBySource, len(e.audits))
	}
	if stub.Log()["valid"] != sec.LLMCalls {
		t.Errorf("stub log %v, %d calls", stub.Log(), sec.LLMCalls)
	}
	if tot.Calls != sec.LLMCalls || tot.Unattributed != 0 || tot.Failures != 0 || tot.PromptTokens != sec.PromptTokens {
		t.Errorf("proxy totals %+v", tot)
	}
	if s := e.c.Summary(); s.Proxy == nil || s.Proxy.Calls != tot.Calls {
		t.Errorf("summary proxy: %+v", s.Proxy)
	}
	// The provider's prompt-cache hits: the runner's system message on
	// every call, in the totals and in the audit lines.
	perCall := int64(despolicy.PromptCached(len(`Reply {"action": N}.`)))
	var audited int64
	for _, a := range e.audits {
		audited += a.PromptCachedTokens
		if a.PromptCachedTokens > a.PromptTokens {
			t.Errorf("audit %+v: more prompt-cached tokens than prompt tokens", a)
		}
	}
	if tot.PromptCachedTokens != int64(tot.Calls)*perCall || audited != tot.PromptCachedTokens || perCall == 0 {
		t.Errorf("prompt-cached tokens: totals %d, audits %d, want %d calls × %d", tot.PromptCachedTokens, audited, tot.Calls, perCall)
	}
	// The key never reaches the runner: not its variable, not its value.
	if !strings.Contains(e.stderr, "proxy_runner env: ") || !strings.Contains(e.stderr, extctl.EnvLLMBaseURL) ||
		!strings.Contains(e.stderr, "proxy_runner key: "+extctl.TokenPrefix) {
		t.Errorf("runner stderr:\n%s", e.stderr)
	}
	if strings.Contains(e.stderr, proxyKeyEnv) || strings.Contains(e.stderr, proxyKey) || strings.Contains(e.stderr, "COORDBENCH_TEST_AUTH_HEADER") {
		t.Errorf("the key or its variable reached the runner:\n%s", e.stderr)
	}
	os.WriteFile(filepath.Join(e.dir, extctl.StderrFile), []byte(e.stderr), 0o644)
	extctl.WriteSummary(filepath.Join(e.dir, extctl.SummaryFile), e.c.Summary())
	noKeyIn(t, e.dir, cachePath)
	trace := readFile(t, e.dir, harness.FileTrace)

	// Replay, upstream gone: the same episode from the cache.
	srv.Close()
	r, rtot := proxyEpisode(t, upstream, cachePath, llm.CacheReplay)
	r.intact(t)
	rs := r.res.Metrics.Secondary
	if r.fallbacks() != 0 || rs.LLMCalls != sec.LLMCalls || r.res.CacheHits != rs.LLMCalls || rtot.CacheHits != rtot.Calls ||
		rs.PromptTokens != sec.PromptTokens || r.res.Metrics.GLlm != m.GLlm || rtot.PromptCachedTokens != tot.PromptCachedTokens {
		t.Errorf("replay: fallbacks %d, secondary %+v, totals %+v", r.fallbacks(), rs, rtot)
	}
	if !bytes.Equal(readFile(t, r.dir, harness.FileTrace), trace) {
		t.Error("the replayed trace differs")
	}
	for _, f := range []string{harness.FileDecisions, harness.FileMetrics, harness.FileManifest} {
		if !bytes.Equal(readFile(t, r.dir, f), readFile(t, e.dir, f)) {
			t.Errorf("the replayed %s differs", f)
		}
	}
}

// noKeyIn fails if the key appears in any file of dir, or in the files.
func noKeyIn(t *testing.T, dir string, files ...string) {
	t.Helper()
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(proxyKey)) {
			t.Errorf("the key is in %s", f)
		}
	}
}

func TestProxyRejects(t *testing.T) {
	if _, err := extctl.NewProxy(extctl.ProxyConfig{}); err == nil {
		t.Error("empty upstream accepted")
	}
	if _, err := extctl.NewProxy(extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "COORDBENCH_PROXY_UNSET_KEY"}}}); err == nil {
		t.Error("unset key variable accepted")
	}
	p, err := extctl.NewProxy(extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: "http://127.0.0.1:1/v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	tok := p.Issue()
	defer p.Revoke(tok)
	for _, tc := range []struct {
		method, path, body string
		code               int
	}{
		{"GET", "/v1/chat/completions", "", 404},
		{"POST", "/v1/chat/completions", "{", 400},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`, 400},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+tok)
		p.ServeHTTP(w, r)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), `"error"`) {
			t.Errorf("%s %s %q: %d %s", tc.method, tc.path, tc.body, w.Code, w.Body)
		}
	}
}

// The proxy serves only the runners it issued a token to: over real HTTP
// on loopback, a request without a token, with a wrong one or with a
// revoked one is refused (401) and never reaches the upstream; a runner's
// own token works, and the upstream sees the real key.
func TestProxyNeedsToken(t *testing.T) {
	t.Setenv(proxyKeyEnv, proxyKey)
	up := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Text("ok") })
	defer up.Close()
	p, err := extctl.NewProxy(extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: up.URL + "/v1", APIKeyEnv: proxyKeyEnv}}, Options: llm.Options{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tok, other := p.Issue(), p.Issue()
	if tok == other || !strings.HasPrefix(tok, extctl.TokenPrefix) || len(tok) < len(extctl.TokenPrefix)+20 {
		t.Fatalf("tokens %q, %q", tok, other)
	}
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", base+"/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	for _, auth := range []string{"", "Bearer ", "Bearer wrong", "Bearer " + proxyKey, tok, "Basic " + tok} {
		if code := post(auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", auth, code)
		}
	}
	if up.Count() != 0 {
		t.Fatalf("%d refused requests reached the upstream", up.Count())
	}
	if code := post("Bearer " + tok); code != http.StatusOK {
		t.Fatalf("the runner's own token: %d", code)
	}
	if reqs := up.Requests(); len(reqs) != 1 || reqs[0].BearerToken() != proxyKey {
		t.Fatalf("upstream requests %d, key %q", len(reqs), reqs[len(reqs)-1].BearerToken())
	}
	p.Revoke(tok)
	if code := post("Bearer " + tok); code != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d", code)
	}
	if code := post("Bearer " + other); code != http.StatusOK {
		t.Errorf("another runner's token after the first was revoked: %d", code)
	}
}

// An upstream that fails some calls (issue 32: a dead upstream's 323
// failed calls were all credited to the model, G_llm 323): a step whose
// proxied calls all failed is the runner's own (source external), one
// with a model reply is the model's (llm), and the failures are counted.
func TestProxyFailedStepsAreNotTheModels(t *testing.T) {
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 { // every other call fails: never two in a row
			http.Error(w, `{"error":{"message":"upstream down"}}`, http.StatusInternalServerError)
			return
		}
		stub.ServeHTTP(w, r)
	}))
	defer up.Close()
	e, tot := proxyRun(t, extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: up.URL + "/v1"}}, Options: llm.Options{MaxAttempts: 1}})
	e.intact(t)
	m := e.res.Metrics
	by := m.Secondary.DecisionsBySource
	if tot.Failures == 0 || tot.Failures == tot.Calls || tot.Calls != len(e.audits) {
		t.Fatalf("proxy totals %+v for %d audits: want one call per decision, some failed", tot, len(e.audits))
	}
	if by["llm"] != tot.Calls-tot.Failures || by["external"] != tot.Failures || m.GLlm != by["llm"] || e.fallbacks() != 0 {
		t.Errorf("by source %v, G_llm %d, %d fallbacks; want llm %d (the calls answered), external %d (the calls failed)",
			by, m.GLlm, e.fallbacks(), tot.Calls-tot.Failures, tot.Failures)
	}
}

// A dead upstream is an outage: after MaxFailures failed calls in a row
// through the proxy the episode aborts with an error naming it, and no
// decision is credited to the model.
func TestProxyOutageAborts(t *testing.T) {
	down := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(500, "upstream down") })
	defer down.Close()
	e, tot := proxyRun(t, extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: down.URL}}, Options: llm.Options{MaxAttempts: 1}})
	e.aborted(t, "model calls through the proxy failed 3 times in a row (server)")
	if tot.Calls != extctl.DefaultMaxProxyFailures || tot.Failures != tot.Calls {
		t.Errorf("proxy totals %+v: want the episode to end at the third failed call", tot)
	}
	if m := e.res.Metrics; m.GLlm != 0 || m.Secondary.DecisionsBySource["llm"] != 0 {
		t.Errorf("G_llm %d, by source %v: failed calls were credited to the model", m.GLlm, m.Secondary.DecisionsBySource)
	}
}
