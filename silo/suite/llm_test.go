package suite

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
)

// scripted is a small deterministic model: every agent broadcasts (or
// sends, or writes) once, waits, and submits 42 in its third turn.
func scripted(req stubmodel.ChatRequest) stubmodel.Reply {
	turn := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	sys := req.Messages[0].Content
	switch {
	case turn >= 2:
		return stubmodel.Text("<tool_call><tool>submit_result</tool><parameters><answer>42</answer></parameters></tool_call>")
	case turn == 1:
		return stubmodel.Text("Reading.<tool_call><tool>receive_messages</tool></tool_call><tool_call><tool>wait</tool></tool_call>")
	case strings.Contains(sys, "send_message"):
		return stubmodel.Text("<tool_call><tool>send_message</tool><parameters><target_id>0</target_id><content>hello</content></parameters></tool_call><tool_call><tool>wait</tool></tool_call>")
	case strings.Contains(sys, "broadcast_message"):
		return stubmodel.Text("<tool_call><tool>broadcast_message</tool><parameters><content>hello</content></parameters></tool_call><tool_call><tool>wait</tool></tool_call>")
	}
	return stubmodel.Text("<tool_call><tool>write_file</tool><parameters><path>x</path><content>[1, 2]</content></parameters></tool_call><tool_call><tool>wait</tool></tool_call>")
}

func llmOptions(t *testing.T, url string, cache *llm.Cache, mode string, sc llmagent.Scaffold) Options {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: url, Model: "org/scripted:v1", Cache: cache, CacheMode: mode,
		RetryBaseDelay: time.Millisecond, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	return Options{Tasks: "I-01,II-12", Agents: "3", Protocols: "all", Agent: "llm,reference", Seeds: "1-2", MaxRounds: 10,
		LLM: &play.LLMAgent{Config: llmagent.Config{Model: c, Scaffold: sc}, Model: cfg.Model, BaseURL: cfg.BaseURL}}
}

// files returns the suite directory's files (relative path → bytes),
// leaving out timing.jsonl and the run databases, which hold wall-clock
// times and SQLite page layout, and the empty lock file.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := filepath.Base(p)
		if base == llmagent.FileTiming || strings.HasPrefix(base, play.FileDB) || base == atomicfs.LockFile {
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLLMSuiteReplay: a suite of LLM agents (with its N = 1 baseline)
// recorded against a loopback server replays offline, from the response
// cache alone, into byte-identical artifacts.
func TestLLMSuiteReplay(t *testing.T) {
	srv := stubmodel.NewServer(scripted)
	cache, err := llm.OpenCache(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	s, err := Resolve(llmOptions(t, srv.URL, cache, "", llmagent.Scaffold{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 2 * 3 * 2 * 2; len(s.Cases) != want { // tasks × N (3 and the baseline 1) × protocols × agents × seeds
		t.Fatalf("%d cases, want %d", len(s.Cases), want)
	}
	if id := s.Cases[0].ID; id != "I-01__n1__p2p__llm-org-scripted-v1-2a5c3b__seeded-s1-merged-n3" {
		t.Errorf("case id %s", id)
	}
	live := t.TempDir()
	rep, err := Run(context.Background(), s, live, RunOptions{Workers: 4})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("live: %v %+v", err, rep.Failures)
	}
	_, total := srv.Completed()
	srv.Close()

	var in, out int64
	sum := readCSV(t, filepath.Join(live, FileSummary))
	head := sum[0]
	col := func(name string) int { return slices.Index(head, name) }
	for _, r := range sum[1:] {
		if r[col("agent")] == "reference" {
			if r[col("model")] != "" || r[col("C")] != "" {
				t.Errorf("scripted row has model columns: %v", r)
			}
			continue
		}
		if r[col("model")] != "org/scripted:v1" || r[col("C")] == "" || r[col("C_code")] == "" {
			t.Errorf("llm row: %v", r)
		}
		a, _ := strconv.ParseInt(r[col("input_tokens")], 10, 64)
		b, _ := strconv.ParseInt(r[col("output_tokens")], 10, 64)
		in, out = in+a, out+b
		if r[col("S")] != "0" || r[col("computation_error")] == "" {
			t.Errorf("llm row: S %s", r[col("S")])
		}
	}
	if in != total.PromptTokens || out != total.CompletionTokens {
		t.Errorf("summary tokens %d + %d, server %d + %d", in, out, total.PromptTokens, total.CompletionTokens)
	}

	// Replay: the server is gone; only the cache answers.
	s2, err := Resolve(llmOptions(t, srv.URL, cache, llm.CacheReplay, llmagent.Scaffold{}))
	if err != nil {
		t.Fatal(err)
	}
	replay := t.TempDir()
	rep2, err := Run(context.Background(), s2, replay, RunOptions{Workers: 4})
	if err != nil || len(rep2.Failures) > 0 {
		t.Fatalf("replay: %v %+v", err, rep2.Failures)
	}
	a, b := files(t, live), files(t, replay)
	// configuration and summary files, then per case result, calls,
	// manifest (+ turns for llm)
	if len(a) != len(b) || len(a) != 4+3*len(s.Cases)+len(s.Cases)/2 {
		t.Fatalf("%d files live, %d replayed", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs after replay", name)
		}
	}

	// A different scaffold is a different agent: new cases, and a replay
	// of them misses the cache and fails instead of being scored.
	s3, err := Resolve(llmOptions(t, srv.URL, cache, llm.CacheReplay, llmagent.Scaffold{Reminders: true}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s3.Cases[0].ID, "llm-org-scripted-v1-2a5c3b+reminders") {
		t.Errorf("scaffold case id %s", s3.Cases[0].ID)
	}
	// Another suite: refused where the first one is, run in a directory
	// of its own.
	if _, err := Run(context.Background(), s3, replay, RunOptions{Workers: 4}); err == nil || !strings.Contains(err.Error(), "another configuration (cases, llm differ") {
		t.Fatalf("a scaffold ablation into the first suite's directory: %v", err)
	}
	rep3, err := Run(context.Background(), s3, t.TempDir(), RunOptions{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep3.Failures) != len(s3.Cases)/2 || !strings.Contains(rep3.Failures[0].Err, "cache") {
		t.Fatalf("%d failures (want the %d llm cases): %+v", len(rep3.Failures), len(s3.Cases)/2, rep3.Failures[:1])
	}
}

// TestLLMSuiteModelFailure: in a suite, a model call that fails after the
// retries fails its case (with the endpoint's error) instead of being
// scored; the next run of the suite reruns it, replaying from the cache
// every call that had succeeded.
func TestLLMSuiteModelFailure(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		if down.Load() && strings.Contains(req.Messages[0].Content, "Your agent id is 1.") && len(req.Messages) > 2 {
			return stubmodel.Status(503, "model overloaded")
		}
		return scripted(req)
	})
	defer srv.Close()
	cache, err := llm.OpenCache(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	opt := llmOptions(t, srv.URL, cache, "", llmagent.Scaffold{})
	opt.Tasks, opt.Agents, opt.Protocols, opt.Agent, opt.Seeds = "I-01", "2", "p2p", "llm", "1"
	s, err := Resolve(opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), s, dir, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// N = 1 has no agent 1: it finishes; N = 2 fails on agent 1's second call
	if len(rep.Cases) != 1 || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Err, "503") ||
		!strings.Contains(rep.Failures[0].Err, "model overloaded") {
		t.Fatalf("cases %d, failures %+v", len(rep.Cases), rep.Failures)
	}
	if _, err := os.Stat(filepath.Join(dir, RunsDir, rep.Failures[0].Case.ID)); !os.IsNotExist(err) {
		t.Errorf("a failed case left its directory: %v", err)
	}
	down.Store(false)
	// The next run is a new process: a new client, whose circuit breaker
	// has not seen the outage (the old one stays open for its cooldown).
	opt = llmOptions(t, srv.URL, cache, "", llmagent.Scaffold{})
	opt.Tasks, opt.Agents, opt.Protocols, opt.Agent, opt.Seeds = "I-01", "2", "p2p", "llm", "1"
	if s, err = Resolve(opt); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	rep, err = Run(context.Background(), s, dir, RunOptions{})
	if err != nil || len(rep.Failures) != 0 || rep.Ran != 1 || rep.Skip != 1 {
		t.Fatalf("rerun: %v, ran %d, skipped %d, failures %+v", err, rep.Ran, rep.Skip, rep.Failures)
	}
	if res := rep.Cases[1].Result; res.Usage.ModelErrors != 0 || !res.AllSubmitted {
		t.Errorf("rerun result: %+v", res.Usage)
	}
	// the calls that had succeeded (round 1, and agent 0's in round 2) come
	// from the cache: only agent 1's round-2 call and both round-3 calls
	// reach the server
	if n := srv.Count() - before; n != 3 {
		t.Errorf("%d requests on the rerun, want 3", n)
	}
}
