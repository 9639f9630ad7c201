package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/sweep"
)

// siloStub plays SILO-BENCH like the gather stub, each call billed 1,000
// input and 10 output tokens; onCall, if set, sees the call's number
// (from 1) first and may answer instead (a refusal) or hold it.
func siloStub(t *testing.T, onCall func(n int64) *stubmodel.Reply) string {
	t.Helper()
	model := silogather.Model{Solve: silogather.PromptSolver}
	var calls atomic.Int64
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		if onCall != nil {
			if r := onCall(calls.Add(1)); r != nil {
				return *r
			}
		}
		r := model.Handle(req)
		r.Usage = &stubmodel.Usage{PromptTokens: 1000, CompletionTokens: 10}
		return r
	})
	t.Cleanup(srv.Close)
	return srv.URL
}

func siloExperiment(t *testing.T, dir, url string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "silo.yaml")
	exp := "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: 2\n  protocols: p2p\n  agent_kinds: [llm]\n  baseline: none\n" +
		"llm: {model: stub, base_url: \"" + url + "\", cache: cache.db, price: {input: 1, output: 2}}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSweepSiloFailedRunCounted: a silo case whose model fails mid-run
// (the suite aborts the run) keeps the turns it made in its partial turn
// log, so that its failed attempt carries their usage. Before the turn log
// was written as turns end, the attempt had none: the run's calls,
// replayed free from the cache on the rerun, were counted nowhere.
func TestSweepSiloFailedRunCounted(t *testing.T) {
	refuse := stubmodel.Status(http.StatusUnauthorized, "invalid key")
	var failing atomic.Bool
	failing.Store(true)
	url := siloStub(t, func(n int64) *stubmodel.Reply {
		if failing.Load() && n > 3 {
			return &refuse
		}
		return nil
	})
	tmp := t.TempDir()
	file := siloExperiment(t, tmp, url)
	dir := filepath.Join(tmp, "out")
	if out, err := run(t, "sweep", "run", file, "--out", dir); err == nil {
		t.Fatalf("the case did not fail\n%s", out)
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != 1 || att[0].Outcome != sweep.AttemptFailed || att[0].Calls != 3 || att[0].InputTokens != 3000 || att[0].OutputTokens != 30 {
		t.Fatalf("ledger %+v, %v: want one failed attempt of 3 billed calls", att, err)
	}
	failing.Store(false)
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := totalRow(t, dir)
	if got["cached_calls"] != "3" || got["discarded_calls"] != "3" || got["discarded_attempts"] != "1" {
		t.Errorf("after the rerun: %v", got)
	}
	if a, b := num(t, got["spent_usd"]), num(t, got["cost_usd"])+num(t, got["discarded_cost_usd"]); a != b || got["discarded_cost_usd"] == "0.000000" {
		t.Errorf("spent %v, want the finished cost plus the failed attempt's (%v)", a, got)
	}
}

// TestSweepSiloKilledRunCounted: a silo sweep run killed outright in the
// middle of a case leaves the turns made so far in the case's temporary
// directory; the next run records them as an interrupted attempt.
func TestSweepSiloKilledRunCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := coordbenchBinary(t)
	fourth, release := make(chan struct{}), make(chan struct{})
	url := siloStub(t, func(n int64) *stubmodel.Reply {
		if n == 4 {
			close(fourth)
			<-release
		}
		return nil
	})
	var released atomic.Bool
	free := func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}
	defer free()
	tmp := t.TempDir()
	file := siloExperiment(t, tmp, url)
	dir := filepath.Join(tmp, "out")
	cmd := exec.Command(bin, "sweep", "run", file, "--out", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fourth:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the fourth call never came")
	}
	// The third call may be in the same round as the fourth: wait for its
	// turn to reach the log.
	deadline := time.Now().Add(time.Minute)
	for {
		logs, _ := filepath.Glob(filepath.Join(dir, sweep.CasesDir(sweep.BenchmarkSilo), ".tmp-*", llmagent.FileTurns))
		if len(logs) == 1 {
			if b, _ := os.ReadFile(logs[0]); bytes.Count(b, []byte("\n")) == 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the three turns never reached the log: %v", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	free()
	out, err := run(t, "sweep", "run", file, "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != 1 || att[0].Outcome != sweep.AttemptInterrupted || att[0].Calls != 3 || att[0].InputTokens != 3000 {
		t.Fatalf("ledger %+v, %v: want one interrupted attempt of 3 calls", att, err)
	}
	if got := totalRow(t, dir); got["cached_calls"] != "3" || got["discarded_calls"] != "3" {
		t.Errorf("after the rerun: %v", got)
	}
	if !strings.Contains(out, "on 1 discarded attempt") {
		t.Errorf("sweep run does not print the discarded attempt:\n%s", out)
	}
}
