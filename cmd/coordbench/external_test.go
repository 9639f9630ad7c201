//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/testenv"
)

// greedyRunner is the shell command of the Python example runner; without
// python3 the test is skipped, or fails in CI (CI set).
func greedyRunner(t *testing.T) string {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	script, err := filepath.Abs("../../examples/python/greedy_runner.py")
	if err != nil {
		t.Fatal(err)
	}
	return "'" + py + "' '" + script + "'"
}

func TestRunExternalController(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "heterarchical_cnp", "--seed", "12",
		"--controller-command", greedyRunner(t), "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "external runner: answered ") || !strings.Contains(out, "0 protocol errors, 0 warnings") {
		t.Errorf("output:\n%s", out)
	}
	m := readMetrics(t, dir)
	if m.Controller != "external" || m.GFb != 0 || m.Secondary.DecisionsBySource["external"] != m.Secondary.Decisions || m.Seed != 12 {
		t.Errorf("metrics: %+v", m)
	}
	logb, _ := os.ReadFile(filepath.Join(dir, extctl.StderrFile))
	if !strings.Contains(string(logb), "greedy_runner: episode over: status done") {
		t.Errorf("%s:\n%s", extctl.StderrFile, logb)
	}
	var s extctl.Summary
	b, _ := os.ReadFile(filepath.Join(dir, extctl.SummaryFile))
	if err := json.Unmarshal(b, &s); err != nil || s.Steps != m.GDs || s.Answered != s.Steps || s.Errors != 0 || s.Runner.Name != "greedy_runner.py" {
		t.Errorf("%s: %v %+v", extctl.SummaryFile, err, s)
	}
	if out, err := run(t, "des", "validate", dir); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
	// The Go twin plays the same episode.
	twin := filepath.Join(t.TempDir(), "twin")
	if out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "heterarchical_cnp", "--seed", "12",
		"--controller", "greedy_py", "--out", twin); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, _ := os.ReadFile(filepath.Join(dir, harness.FileTrace))
	b, _ = os.ReadFile(filepath.Join(twin, harness.FileTrace))
	if !bytes.Equal(a, b) {
		t.Error("the Python runner's trace differs from greedy_py's")
	}
}

// A runner that dies before its first answer: the episode is aborted at
// its first step (audited fallbacks), every artifact is written, valid and
// marked aborted, and des run fails.
func TestRunExternalControllerFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--controller-command", "echo oops >&2; exit 2", "--out", dir)
	if err == nil || !strings.Contains(err.Error(), "episode aborted: external runner failed before the first decision: runner exited: exit status 2") {
		t.Fatalf("err %v\n%s", err, out)
	}
	m := readMetrics(t, dir)
	if m.Status != "aborted" || m.GFb != m.Secondary.Decisions || m.GFb == 0 || m.GDs != 1 {
		t.Errorf("metrics: status %s G_fb %d of %d, G_ds %d", m.Status, m.GFb, m.Secondary.Decisions, m.GDs)
	}
	for _, f := range []string{harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileManifest, harness.FileInstance, extctl.StderrFile, extctl.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	if out, err := run(t, "des", "validate", dir); err != nil || !strings.Contains(out, "status aborted") {
		t.Errorf("validate: %v\n%s", err, out)
	}
	logb, _ := os.ReadFile(filepath.Join(dir, extctl.StderrFile))
	if !strings.Contains(string(logb), "oops") {
		t.Errorf("the runner's stderr was not kept:\n%s", logb)
	}
	f, _ := os.Open(filepath.Join(dir, harness.FileDecisions))
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	sc.Scan()
	var a struct {
		Source, Reason string
		Error          string `json:"reply_error"`
	}
	json.Unmarshal(sc.Bytes(), &a)
	if a.Source != "fallback" || !strings.Contains(a.Reason, "exit status 2") || a.Error == "" {
		t.Errorf("first audit: %+v", a)
	}
}

func TestRunExternalControllerFlags(t *testing.T) {
	for _, args := range [][]string{
		{"des", "run", "--controller", "external"},
		{"des", "run", "--controller", "greedy", "--controller-command", "true"},
		{"des", "run", "--controller-command", "true", "--controller-timeout", "0s"},
		{"des", "check-controller"},
	} {
		if _, err := run(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	// Without --out, the run directory is named after the external controller.
	runner := greedyRunner(t)
	t.Chdir(t.TempDir())
	if out, err := run(t, "des", "run", "--instance", "A3C9-1", "--controller", "external", "--controller-command", runner); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join("runs", "A3C9-1_centralized_external_s11", extctl.SummaryFile)); err != nil {
		t.Error(err)
	}
}

func TestCheckController(t *testing.T) {
	out, err := run(t, "des", "check-controller", "--controller-command", greedyRunner(t))
	if err != nil || !strings.Contains(out, "OK: no violation in 5 episodes") || !strings.Contains(out, "latency over") {
		t.Fatalf("err %v\n%s", err, out)
	}
	out, err = run(t, "des", "check-controller", "--controller-command", "read hello; echo '{\"type\":\"ready\"}'; read d; echo '{\"actions\":{\"cell:C99\":1}}'", "--json", "--controller-timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "broke the runner protocol") {
		t.Fatalf("err %v\n%s", err, out)
	}
	var rep extctl.CheckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Clean() || rep.Counts[extctl.VUnknownAgent] != 5 || rep.Counts[extctl.VExited] != 5 || len(rep.Episodes) != 5 {
		t.Errorf("report: errors %d counts %v", rep.Errors, rep.Counts)
	}
}

// issue 32: a runner that crashes after 10 decisions. des run exits
// non-zero, and every artifact says the run was aborted: metrics.json,
// manifest.json, decisions.jsonl (the last step's fallbacks), des
// validate (which finds the artifacts consistent but no result).
func TestRunExternalRunnerCrashIsAborted(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	script, err := filepath.Abs("../../des/extctl/testdata/crash_after.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "hierarchical", "--controller-command", "'"+py+"' '"+script+"' 10", "--out", dir)
	if err == nil || !strings.Contains(err.Error(), "episode aborted: external runner failed at step") || !strings.Contains(err.Error(), "runner exited: exit status 1") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if !strings.Contains(out, "status aborted") {
		t.Errorf("output:\n%s", out)
	}
	m := readMetrics(t, dir)
	if m.Status != "aborted" || m.Secondary.DecisionsBySource["external"] == 0 || m.GFb == 0 {
		t.Errorf("metrics: status %s, by source %v", m.Status, m.Secondary.DecisionsBySource)
	}
	var man harness.Manifest
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, harness.FileManifest)), &man); err != nil || man.Status != "aborted" {
		t.Errorf("manifest: status %q (%v)", man.Status, err)
	}
	var s extctl.Summary
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, extctl.SummaryFile)), &s); err != nil || s.Answered != 10 || !strings.Contains(s.Failure, "exit status 1") {
		t.Errorf("%s: %v %+v", extctl.SummaryFile, err, s)
	}
	vout, err := run(t, "des", "validate", dir)
	if err != nil || !strings.Contains(vout, "the run was aborted (status aborted)") || strings.Contains(vout, "all checks hold") {
		t.Errorf("validate: %v\n%s", err, vout)
	}
}

// issue 32: an external runner whose model upstream is dead (every call
// through --llm-proxy-upstream answers 500). The run aborts after
// --max-model-failures failed calls in a row, exit non-zero, and no
// decision is credited to the model.
func TestRunProxyOutageIsAborted(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	script, err := filepath.Abs("../../des/extctl/testdata/proxy_runner.py")
	if err != nil {
		t.Fatal(err)
	}
	down := statusServer(t, 500)
	for _, tc := range []struct {
		max   string
		calls int
	}{{"3", 3}, {"1", 1}} {
		dir := filepath.Join(t.TempDir(), "run")
		out, err := run(t, "des", "run", "--instance", "A3C9-1", "--controller-command", "'"+py+"' '"+script+"'", "--controller-timeout", "60s",
			"--llm-proxy-upstream", down.URL, "--llm-max-attempts", "1", "--max-model-failures", tc.max, "--out", dir)
		want := "model calls through the proxy failed " + tc.max + " times in a row (server)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("--max-model-failures %s: err %v, want %q\n%s", tc.max, err, want, out)
		}
		m := readMetrics(t, dir)
		if m.Status != "aborted" || m.GLlm != 0 || m.Secondary.DecisionsBySource["llm"] != 0 {
			t.Errorf("metrics: status %s, G_llm %d, by source %v", m.Status, m.GLlm, m.Secondary.DecisionsBySource)
		}
		var s extctl.Summary
		if err := json.Unmarshal(mustRead(t, filepath.Join(dir, extctl.SummaryFile)), &s); err != nil || s.Proxy == nil || s.Proxy.Calls != tc.calls || s.Proxy.Failures != tc.calls {
			t.Errorf("%s: %v %+v", extctl.SummaryFile, err, s.Proxy)
		}
	}
	if _, err := run(t, "des", "run", "--controller-command", "true", "--llm-proxy-upstream", down.URL, "--max-model-failures", "0", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--max-model-failures") {
		t.Errorf("--max-model-failures 0: %v", err)
	}
}
