package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

func statusServer(t *testing.T, code int) *stubmodel.Server {
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Status(code, "denied") })
	t.Cleanup(srv.Close)
	return srv
}

func metricsIn(t *testing.T, dir string) harness.Metrics {
	t.Helper()
	var m harness.Metrics
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, harness.FileMetrics)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// llmRun is a des run with the LLM controller against baseURL: one agent
// per step (centralized), so that calls are counted exactly.
func llmRun(baseURL, out string, extra ...string) []string {
	return append([]string{"des", "run", "--instance", "A3C9-1", "--controller", "llm", "--llm-model", "stub",
		"--llm-base-url", baseURL, "--llm-max-attempts", "2", "--out", out}, extra...)
}

// A model that cannot answer fails des run: an error naming the cause,
// status aborted in metrics.json, every artifact written and valid, and
// no more calls than --max-model-failures × --llm-max-attempts.
func TestRunFailsOnModelOutage(t *testing.T) {
	s401, s503, echo := statusServer(t, 401), statusServer(t, 503), stubmodel.NewServer(stubmodel.Echo)
	defer echo.Close()
	for _, tc := range []struct {
		name     string
		url      string
		extra    []string
		srv      *stubmodel.Server
		requests int
		want     []string
	}{
		{"401", s401.URL, nil, s401, 3, []string{"(auth)", "401 Unauthorized", "--llm-api-key-env"}},
		{"401 once", s401.URL, []string{"--max-model-failures", "1"}, s401, 1, []string{"failed 1 times in a row (auth)"}},
		// The circuit breaker opens after 3 failed attempts (1.5 calls):
		// the rest fail without a request.
		{"503", s503.URL, nil, s503, 3, []string{"(server)", "circuit breaker", "attempt 1 of 2 failed (server: 503"}},
		{"replay miss", echo.URL, []string{"--llm-cache", filepath.Join(t.TempDir(), "empty.db"), "--llm-cache-mode", "replay"}, echo, 0,
			[]string{"episode aborted: llm: replay mode: cache miss", "(see --llm-cache-mode)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			before := tc.srv.Count()
			out, err := run(t, llmRun(tc.url, dir, tc.extra...)...)
			if err == nil {
				t.Fatalf("des run succeeded:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error()+out, w) {
					t.Errorf("output and error lack %q:\n%v\n%s", w, err, out)
				}
			}
			if n := tc.srv.Count() - before; n != tc.requests {
				t.Errorf("server saw %d requests, want %d", n, tc.requests)
			}
			if !strings.Contains(out, "status aborted") {
				t.Errorf("the metrics were not printed:\n%s", out)
			}
			if m := metricsIn(t, dir); m.Status != "aborted" || m.GTr != 1 || m.GLlm != 0 {
				t.Errorf("metrics.json: status %s, G_tr %d, G_llm %d", m.Status, m.GTr, m.GLlm)
			}
			if out, err := run(t, "des", "validate", dir); err != nil || !strings.Contains(out, "the run was aborted (status aborted)") || strings.Contains(out, "all checks hold") {
				t.Errorf("validate: %v\n%s", err, out)
			}
		})
	}
	if _, err := run(t, llmRun(s401.URL, t.TempDir(), "--max-model-failures", "0")...); err == nil || !strings.Contains(err.Error(), "--max-model-failures") {
		t.Errorf("--max-model-failures 0: %v", err)
	}
}

// The built binary against a closed loopback port: exit code 1, the retry
// reported on stderr while it waits, the error last, the artifacts written.
func TestRunUnreachableEndpointExitCode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	url, err := stubmodel.UnreachableURL()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(coordbenchBinary(t), llmRun(url, dir)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	se := stderr.String()
	for _, w := range []string{"attempt 1 of 2 failed (transport: connection failed", "retrying in",
		"coordbench: controller llm: episode aborted: model calls failed 3 times in a row (transport)", "connection refused"} {
		if !strings.Contains(se, w) {
			t.Errorf("stderr lacks %q:\n%s", w, se)
		}
	}
	if !strings.Contains(stdout.String(), "status aborted") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, f := range []string{harness.FileMetrics, harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileManifest, harness.FileInstance} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// Replies the model did produce but that are unusable stay audited
// fallbacks: the run ends normally with exit 0.
func TestRunUnusableRepliesStillSucceed(t *testing.T) {
	srv := stubmodel.NewServer(func(stubmodel.ChatRequest) stubmodel.Reply { return stubmodel.Text("route it to the best cell") })
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := run(t, llmRun(srv.URL, dir)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if m := metricsIn(t, dir); m.Status == "aborted" || m.GFb != m.Secondary.Decisions || m.GLlm != 0 {
		t.Errorf("metrics: status %s, G_fb %d of %d", m.Status, m.GFb, m.Secondary.Decisions)
	}
}

// switchHandler serves whichever handler is current.
type switchHandler struct{ h atomic.Pointer[http.Handler] }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }
func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// In a suite, a model failure fails the case: it lands in failed/ with
// error.txt and status aborted, and the next run reruns it.
func TestSuiteModelOutageFailsAndReruns(t *testing.T) {
	var sw switchHandler
	sw.set(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"invalid key"}}`, http.StatusUnauthorized)
	}))
	srv := httptest.NewServer(&sw)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "suite")
	args := []string{"des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized", "--seeds", "1,2", "--controller", "llm",
		"--llm-model", "stub", "--llm-base-url", srv.URL + "/v1", "--max-model-failures", "5", "--out", dir}
	out, err := run(t, args...)
	if err == nil || !strings.Contains(err.Error(), "2 of 2 cases failed") {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	for _, seed := range []string{"1", "2"} {
		id := "A3C9-1__centralized__llm__stub-graph__s" + seed
		fd := filepath.Join(dir, harness.SuiteFailedDir, id)
		if e := string(mustRead(t, filepath.Join(fd, "error.txt"))); !strings.Contains(e, "failed 1 times in a row (auth)") {
			t.Errorf("%s: error.txt = %q (the first failure fails a suite case)", id, e)
		}
		if m := metricsIn(t, fd); m.Status != "aborted" {
			t.Errorf("%s: status %s", id, m.Status)
		}
		if !strings.Contains(out, "failed: "+id) {
			t.Errorf("%s not reported failed:\n%s", id, out)
		}
	}
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	sw.set(stub)
	if out, err := run(t, args...); err != nil || !strings.Contains(out, "2 run now, 0 already done") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	for _, r := range summaryRows(t, dir) {
		if r[7] != "done" {
			t.Errorf("after resume: %v", r)
		}
		if _, err := os.Stat(filepath.Join(dir, harness.SuiteFailedDir, r[0])); !os.IsNotExist(err) {
			t.Errorf("%s still in failed/ after its rerun succeeded (%v)", r[0], err)
		}
	}
}

// Retries are reported with model, endpoint, attempt, class, reason and
// wait, the first at once and then at most one line per interval.
func TestRetryNotice(t *testing.T) {
	var b strings.Builder
	notice := retryNotice(&b, time.Hour)
	r := llm.Retry{Attempt: 2, MaxAttempts: 5, Wait: 1500 * time.Millisecond,
		Err: &llm.Error{Model: "m", Endpoint: "http://h/v1/chat/completions", Status: 429, Reason: "slow down", Class: llm.ClassRateLimit}}
	notice(r)
	notice(r)
	want := `llm: model "m" at http://h/v1/chat/completions: attempt 2 of 5 failed (rate_limit: 429 Too Many Requests: slow down); retrying in 1.5s` + "\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}
