package llmctl_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

func plant(t *testing.T, ref string) *factory.Plant {
	t.Helper()
	in, err := factory.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	return factory.Compile(in)
}

// stubServer serves a stub model on loopback.
func stubServer(t *testing.T, pol string) (*despolicy.Stub, *httptest.Server) {
	t.Helper()
	s, err := despolicy.New(pol)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func controller(t *testing.T, cfg llm.Config, fw string) *llmctl.Controller {
	t.Helper()
	cl, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := llmctl.New(fw, map[string]llmctl.Model{"": {Name: cfg.Model, Client: cl}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Through the whole LLM path (prompt, HTTP, parsing, audit), the stub's
// builtin policy decides exactly as the rule controller in-process: the
// payload survives the round trip and the traces are byte-identical.
func TestBuiltinStubEqualsRule(t *testing.T) {
	_, srv := stubServer(t, "builtin")
	p := plant(t, "A3C9-1")
	for _, mode := range coord.Builtins() {
		for _, fw := range llmctl.Frameworks() {
			var want, got, dec bytes.Buffer
			harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: policy.Rule{}, Trace: &want})
			c := controller(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", Concurrency: 8}, fw)
			r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: c, Trace: &got, Decisions: &dec})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Errorf("%s/%s: the stub-through-LLM trace differs from the rule's", mode.ID, fw)
			}
			m := r.Metrics
			if m.GLlm != m.Secondary.Decisions || m.GFb != 0 || m.Secondary.PromptTokens == 0 || m.Secondary.LLMCalls != m.GLlm {
				t.Errorf("%s/%s: G_llm %d of %d decisions, G_fb %d, tokens %d, calls %d", mode.ID, fw, m.GLlm, m.Secondary.Decisions, m.GFb, m.Secondary.PromptTokens, m.Secondary.LLMCalls)
			}
			if !strings.Contains(dec.String(), `"raw_reply":"{\"action\":`) {
				t.Errorf("%s/%s: raw replies not audited", mode.ID, fw)
			}
		}
	}
}

// With a server that misbehaves, every episode completes, every decision
// is audited with the right source, and the counts match what the server
// says it returned: under strict parsing its code fences are fallbacks,
// under the published rule they are read ("fenced_json").
func TestFaultyModelIsAudited(t *testing.T) {
	for _, rule := range llmctl.ReplyParsings() {
		stub, srv := stubServer(t, "faults")
		p := plant(t, "A5C12-1")
		c := controller(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", RetryBaseDelay: time.Millisecond, RetryMaxDelay: 2 * time.Millisecond}, "relay")
		if err := c.SetReplyParsing(rule); err != nil {
			t.Fatal(err)
		}
		var dec bytes.Buffer
		r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 1, Mode: coord.HeterarchicalCNP(), Controller: c, Decisions: &dec})
		if r.Err != nil || r.Metrics.Status == "" {
			t.Fatalf("%s: episode failed: %v", rule, r.Err)
		}
		m := r.Metrics
		log := stub.Log()
		good, bad := log["valid"], log["prose"]+log["illegal"]+log["empty"]
		reasons := []string{"unusable reply: illegal action index 9999", "unusable reply: empty reply"}
		if rule == llmctl.ParsingStrict {
			bad += log["fence"]
			reasons = append(reasons, "unusable reply: code fence", "unusable reply: not a single JSON object")
		} else {
			good += log["fence"]
			reasons = append(reasons, "unusable reply: no action index in the reply", `"parse":"fenced_json"`)
		}
		if m.GLlm != good || m.GFb != bad || m.GLlm+m.GFb != m.Secondary.Decisions {
			t.Errorf("%s: G_llm %d G_fb %d decisions %d; server log %v", rule, m.GLlm, m.GFb, m.Secondary.Decisions, log)
		}
		if log["http_429"] == 0 || log["http_500"] == 0 || log["fence"] == 0 || bad == 0 {
			t.Errorf("%s: the fault mix was not exercised: %v", rule, log)
		}
		// By role: the parts add up to the totals, and every retry the
		// transient errors caused is in the roles' timing.
		var sum harness.RoleUsage
		for _, u := range m.Secondary.ByRole {
			sum.Decisions += u.Decisions
			sum.Fallbacks += u.Fallbacks
			sum.LLMCalls += u.LLMCalls
			sum.PromptTokens += u.PromptTokens
			sum.CompletionTokens += u.CompletionTokens
			if u.Models != "stub" {
				t.Errorf("%s: role models %q", rule, u.Models)
			}
		}
		if len(m.Secondary.ByRole) < 2 || sum.Decisions != m.Secondary.Decisions || sum.Fallbacks != m.GFb || sum.LLMCalls != m.Secondary.LLMCalls ||
			sum.PromptTokens != m.Secondary.PromptTokens || sum.CompletionTokens != m.Secondary.CompletionTokens {
			t.Errorf("%s: by role %+v do not add up to %+v", rule, m.Secondary.ByRole, m.Secondary)
		}
		retries := 0
		for _, tm := range r.RoleTiming {
			retries += tm.Retries
		}
		if transient := log["http_429"] + log["http_500"]; retries == 0 || retries > transient {
			t.Errorf("%s: %d retries by role for %d transient errors", rule, retries, transient)
		}
		for _, reason := range reasons {
			if !strings.Contains(dec.String(), reason) {
				t.Errorf("%s: no decision audited with %q", rule, reason)
			}
		}
	}
}

// A run recorded through the cache replays offline (server stopped) with
// identical trace and metrics; the API key is nowhere in the output.
func TestCacheReplayAndKeyHygiene(t *testing.T) {
	const key = "sk-coordbench-test-SECRET-4242"
	t.Setenv("COORDBENCH_TEST_KEY", key)
	_, srv := stubServer(t, "random")
	dir := t.TempDir()
	cache, err := llm.OpenCache(filepath.Join(dir, "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	p := plant(t, "A3C9-1")
	cfg := llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", APIKeyEnv: "COORDBENCH_TEST_KEY", Cache: cache, CacheMode: llm.CacheReadWrite}
	first, err := harness.RunToDir(context.Background(), harness.Episode{Plant: p, Seed: 12, Mode: coord.HolonicHybrid(), Controller: controller(t, cfg, "graph")}, filepath.Join(dir, "live"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	cfg.CacheMode = llm.CacheReplay
	second, err := harness.RunToDir(context.Background(), harness.Episode{Plant: p, Seed: 12, Mode: coord.HolonicHybrid(), Controller: controller(t, cfg, "graph")}, filepath.Join(dir, "replay"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "live", harness.FileTrace))
	b, _ := os.ReadFile(filepath.Join(dir, "replay", harness.FileTrace))
	if !bytes.Equal(a, b) || first.Metrics.GLlm != second.Metrics.GLlm || first.Metrics.Secondary.PromptTokens != second.Metrics.Secondary.PromptTokens {
		t.Errorf("replay differs: G_llm %d vs %d", first.Metrics.GLlm, second.Metrics.GLlm)
	}
	// Every answer the model gave is a cache hit on replay: the LLM's
	// decisions, and its declines of a plant-level fallback (audited as
	// fallbacks, with the reply).
	answered := 0
	dec, _ := os.ReadFile(filepath.Join(dir, "replay", harness.FileDecisions))
	for line := range bytes.Lines(dec) {
		if bytes.Contains(line, []byte(`"calls":`)) {
			answered++
		}
	}
	if second.CacheHits != answered || answered < second.Metrics.GLlm || first.CacheHits != 0 {
		t.Errorf("cache hits: live %d, replay %d, answers %d, decisions by llm %d", first.CacheHits, second.CacheHits, answered, second.Metrics.GLlm)
	}
	// Every artifact but timing.jsonl is byte-identical: decisions and
	// metrics hold nothing that depends on the cache or the clock.
	for _, f := range []string{harness.FileDecisions, harness.FileMessages, harness.FileMetrics, harness.FileManifest, harness.FileInstance} {
		a, _ := os.ReadFile(filepath.Join(dir, "live", f))
		b, _ := os.ReadFile(filepath.Join(dir, "replay", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the live run and its replay", f)
		}
	}
	var cached int
	tl, _ := os.ReadFile(filepath.Join(dir, "replay", harness.FileTiming))
	for _, line := range bytes.Split(bytes.TrimSpace(tl), []byte("\n")) {
		var l harness.TimingLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("timing line %q: %v", line, err)
		}
		if l.Cached {
			cached++
		}
	}
	if cached != second.CacheHits {
		t.Errorf("timing.jsonl: %d cached lines, %d cache hits", cached, second.CacheHits)
	}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
				t.Errorf("the API key is written in %s", path)
			}
		}
		return nil
	})
}

func TestParseReply(t *testing.T) {
	legal := []int{0, 2, 3}
	for raw, want := range map[string]int{`{"action": 2}`: 2, " {\"action\":3}\n": 3, `{"action": 0}`: 0} {
		if got, err := llmctl.ParseReply(raw, legal); err != nil || got != want {
			t.Errorf("%q: %d %v", raw, got, err)
		}
	}
	for raw, why := range map[string]string{
		"":                              "empty",
		"2":                             "not a single JSON object",
		"```json\n{\"action\": 2}\n```": "code fence",
		`{"action": 1}`:                 "illegal action index 1",
		`{"action": 2.5}`:               "not an integer",
		`{"action": "2"}`:               "not the contract object",
		`{"action": 2, "why": "fast"}`:  "not the contract object",
		`{"choice": 2}`:                 "not the contract object",
		`{"action": 2} {"action": 3}`:   "more than one",
		`{}`:                            "missing",
		`Sure! {"action": 2}`:           "not a single JSON object",
	} {
		if _, err := llmctl.ParseReply(raw, legal); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: error %v, want %q", raw, err, why)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{`{"action": 2}`, "```", `{"action": -1}`, `{"action": 1e99}`, "{", "",
		"```json\n{\"action\": 7}\n```", "I choose action 2.", `{"action": "1", "why": "x"}`, "0 or 1", `{"a": {"action": 1}}`, "{\"action\": 2}}"} {
		f.Add(s)
	}
	f.Fuzz(checkReplyParsing)
}

// A model that answers with a huge reply on every call costs the audit a
// bounded line per decision: the reply's first untrusted.MaxReply bytes,
// its length and hash, and raw_truncated.
func TestHugeReplyIsCutInTheAudit(t *testing.T) {
	reply := `{"action": 0}` + strings.Repeat(" pad", 5_000) // 20 kB
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Text(reply) })
	t.Cleanup(srv.Close)
	c := controller(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "stub"}, "relay")
	var dec bytes.Buffer
	r := harness.Run(context.Background(), harness.Episode{Plant: plant(t, "A3C9-1"), Seed: 1, Mode: coord.Centralized(), Controller: c, Decisions: &dec})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	sum := sha256.Sum256([]byte(reply))
	lines := strings.Split(strings.TrimSpace(dec.String()), "\n")
	for _, line := range lines {
		if len(line) > untrusted.MaxReply+64<<10 {
			t.Fatalf("an audit line of %d bytes", len(line))
		}
		var a struct {
			Raw       string `json:"raw_reply"`
			Len       int    `json:"raw_len"`
			SHA       string `json:"raw_sha256"`
			Truncated bool   `json:"raw_truncated"`
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if !a.Truncated || a.Len != len(reply) || a.SHA != hex.EncodeToString(sum[:]) ||
			a.Raw != reply[:untrusted.MaxReply] {
			t.Fatalf("audit: truncated %v, len %d, sha %s, raw %d bytes", a.Truncated, a.Len, a.SHA, len(a.Raw))
		}
	}
	if len(lines) < 2 {
		t.Errorf("%d audits", len(lines))
	}
}
