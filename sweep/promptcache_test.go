package sweep

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// Cost prices the provider's prompt-cache hits at price.cached_input when
// it is set, at price.input when it is not (no discount given, none
// applied), and is CostOf to the bit without hits.
func TestCostOfPromptCachedInput(t *testing.T) {
	u := Usage{Calls: 2, InputTokens: 1_000_000, PromptCachedInputTokens: 600_000, OutputTokens: 100_000,
		CachedCalls: 5, CachedInputTokens: 9_000_000, CachedOutputTokens: 9_000_000}
	for _, tc := range []struct {
		p    Price
		want float64
	}{
		{Price{Input: 2, Output: 10, CachedInput: 0.5}, 0.4*2 + 0.6*0.5 + 0.1*10},
		{Price{Input: 2, Output: 10}, 1*2 + 0.1*10},
		{Price{Input: 2, Output: 10, CachedInput: 2}, 1*2 + 0.1*10},
	} {
		if got := u.Cost(tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("price %+v: cost %v, want %v", tc.p, got, tc.want)
		}
	}
	// Without hits, bit for bit what it was, whatever cached_input says.
	for _, in := range []int64{0, 1, 7, 123_457, 98_765_431} {
		for _, p := range []Price{{Input: 0.15, Output: 0.6}, {Input: 2.5, Output: 10, CachedInput: 1.25}, {Input: 0.1, Output: 0.3, CachedInput: 0.025}} {
			u := Usage{Calls: 1, InputTokens: in, OutputTokens: in/3 + 1}
			if a, b := u.Cost(p), CostOf(p, u.InputTokens, u.OutputTokens); math.Float64bits(a) != math.Float64bits(b) {
				t.Errorf("%d tokens at %+v: %v, CostOf %v", in, p, a, b)
			}
		}
	}
	if p := (Price{Input: 3}); p.PromptCachedInput() != 3 {
		t.Errorf("no cached_input: %v", p.PromptCachedInput())
	}
}

// The logs' prompt_cached_tokens count for billed calls only (a reply
// the response cache replayed is free whatever the provider cached),
// at most the line's prompt tokens; a negative count is refused.
func TestReadUsagePromptCached(t *testing.T) {
	des := t.TempDir()
	write := func(dir, name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(des, harness.FileDecisions, `{"step":0,"agent_id":"plant","prompt_tokens":100,"completion_tokens":2,"prompt_cached_tokens":64,"calls":1}
{"step":1,"agent_id":"plant","prompt_tokens":100,"completion_tokens":2,"prompt_cached_tokens":64,"calls":1}
{"step":2,"agent_id":"plant","prompt_tokens":50,"completion_tokens":2,"prompt_cached_tokens":70,"calls":1}
{"step":3,"agent_id":"plant","prompt_tokens":30,"completion_tokens":2,"calls":1}
`)
	write(des, harness.FileTiming, `{"step":1,"agent_id":"plant","cached":true}
`)
	u, err := readDesUsage(des, false, nil)
	want := Usage{Calls: 3, InputTokens: 180, PromptCachedInputTokens: 114, OutputTokens: 6, CachedCalls: 1, CachedInputTokens: 100, CachedOutputTokens: 2}
	if err != nil || u != want {
		t.Errorf("des: %+v, %v; want %+v", u, err, want)
	}

	silo := t.TempDir()
	write(silo, llmagent.FileTurns, `{"round":1,"agent":0,"outcome":"ok","usage":{"prompt_tokens":100,"completion_tokens":10,"prompt_cached_tokens":40}}
{"round":1,"agent":1,"outcome":"ok","usage":{"prompt_tokens":200,"completion_tokens":20,"prompt_cached_tokens":80}}
{"round":2,"agent":0,"outcome":"model_error","usage":{"prompt_tokens":20,"completion_tokens":1,"prompt_cached_tokens":25}}
`)
	// The timings in another order (the end order of a run cut short
	// between its two rewrites): paired by round and agent all the same.
	write(silo, llmagent.FileTiming, `{"round":1,"agent":1,"cached":true}
{"round":1,"agent":0,"cached":false}
{"round":2,"agent":0}
`)
	u, err = readSiloUsage(silo, false, nil)
	want = Usage{Calls: 2, InputTokens: 120, PromptCachedInputTokens: 60, OutputTokens: 11, CachedCalls: 1, CachedInputTokens: 200, CachedOutputTokens: 20}
	if err != nil || u != want {
		t.Errorf("silo: %+v, %v; want %+v", u, err, want)
	}

	write(des, harness.FileDecisions, `{"step":0,"agent_id":"plant","prompt_tokens":100,"completion_tokens":2,"prompt_cached_tokens":-64,"calls":1}
`)
	if _, err := readDesUsage(des, false, nil); err == nil || !strings.Contains(err.Error(), ":1: negative") {
		t.Errorf("des log with negative prompt-cached tokens: %v", err)
	}
	write(silo, llmagent.FileTurns, `{"usage":{"prompt_tokens":5,"completion_tokens":7,"prompt_cached_tokens":-1}}
`)
	if _, err := readSiloUsage(silo, false, nil); err == nil || !strings.Contains(err.Error(), ":1: negative") {
		t.Errorf("silo log with negative prompt-cached tokens: %v", err)
	}
}

// The ledger reads lines written before prompt_cached_input_tokens
// existed and lines with it (its reader refuses unknown fields); a line
// without hits is written as before; a line with more prompt-cached than
// input tokens, or a negative or huge count, is refused.
func TestAttemptsPromptCached(t *testing.T) {
	dir := t.TempDir()
	old := `{"attempt":"a1","case_id":"c","outcome":"failed","calls":1,"input_tokens":10,"output_tokens":2,"cached_calls":0,"cached_input_tokens":0,"cached_output_tokens":0}`
	if err := os.WriteFile(filepath.Join(dir, FileAttempts), []byte(old+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	appendAll(t, dir,
		Attempt{ID: "a2", CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: 1, InputTokens: 10, OutputTokens: 2}},
		Attempt{ID: "a3", CaseID: "c", Outcome: AttemptReturned, Usage: Usage{Calls: 1, InputTokens: 10, PromptCachedInputTokens: 8, OutputTokens: 2}})
	data, err := os.ReadFile(filepath.Join(dir, FileAttempts))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 3 || string(lines[1]) != strings.Replace(old, "a1", "a2", 1) ||
		!bytes.Contains(lines[2], []byte(`"input_tokens":10,"prompt_cached_input_tokens":8,`)) {
		t.Errorf("ledger:\n%s", data)
	}
	att, err := ReadAttempts(dir)
	if err != nil || len(att) != 3 || att[0].PromptCachedInputTokens != 0 || att[2].PromptCachedInputTokens != 8 {
		t.Fatalf("read back: %+v, %v", att, err)
	}
	for _, u := range []Usage{
		{Calls: 1, InputTokens: 10, PromptCachedInputTokens: 11},
		{Calls: 1, InputTokens: 10, PromptCachedInputTokens: -1},
		{Calls: 1, InputTokens: 1 << 41, PromptCachedInputTokens: 1 << 41},
	} {
		log, err := OpenAttemptLog(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := log.Append(Attempt{ID: "x", CaseID: "c", Outcome: AttemptFailed, Usage: u}); err == nil {
			t.Errorf("usage %+v appended", u)
		}
		b, _ := json.Marshal(Attempt{ID: "x", CaseID: "c", Outcome: AttemptFailed, Usage: u})
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, FileAttempts), append(b, '\n'), 0o644)
		if _, err := ReadAttempts(d); err == nil {
			t.Errorf("usage %+v read", u)
		}
	}
}
