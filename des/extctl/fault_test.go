//go:build unix

package extctl_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/internal/testenv"
)

// episode is one external episode run to a directory.
type episode struct {
	res    harness.Result
	c      *extctl.Controller
	dir    string
	stderr string
	audits []audit
	timing []harness.TimingLine
}

type audit struct {
	Step      int          `json:"step"`
	AgentID   string       `json:"agent_id"`
	Kind      string       `json:"kind"`
	Action    int          `json:"action"`
	Source    coord.Source `json:"source"`
	Reason    string       `json:"reason"`
	Requested *int         `json:"requested"`
	Raw       string       `json:"raw_reply"`
	Error     string       `json:"reply_error"`

	PromptTokens       int64 `json:"prompt_tokens"`
	PromptCachedTokens int64 `json:"prompt_cached_tokens"`
}

const (
	faultInstance = "A3C9-1"
	faultSeed     = 11
)

func plantOf(t testing.TB, ref string) *factory.Plant {
	t.Helper()
	in, err := factory.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	return factory.Compile(in)
}

// runExternal plays A3C9-1 (seed 11) under mode with the runner command,
// writes the artifacts and ends the runner.
func runExternal(t *testing.T, command string, mode coord.AuthorityMode, cfg extctl.Config) *episode {
	t.Helper()
	p := plantOf(t, faultInstance)
	var stderr testenv.Buffer
	cfg.Command, cfg.Stderr, cfg.Episode = command, &stderr, extctl.EpisodeOf(p, mode, faultSeed)
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Grace == 0 {
		cfg.Grace = 3 * time.Second
	}
	c, err := extctl.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &episode{c: c, dir: t.TempDir()}
	e.res, err = harness.RunToDir(context.Background(), harness.Episode{Plant: p, Seed: faultSeed, Mode: mode, Controller: c}, e.dir)
	if err != nil && !errors.Is(err, coord.ErrAbort) { // an abort is a result the tests check (aborted)
		t.Fatalf("run: %v", err)
	}
	c.End(e.res.Metrics)
	e.stderr = stderr.String()
	e.audits = readLines[audit](t, filepath.Join(e.dir, harness.FileDecisions))
	e.timing = readLines[harness.TimingLine](t, filepath.Join(e.dir, harness.FileTiming))
	return e
}

// readLines decodes a JSONL artifact.
func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// intact checks that the episode ran to its regular end and that its
// artifacts pass the independent re-check.
func (e *episode) intact(t *testing.T) {
	t.Helper()
	if e.res.Err != nil || e.res.Metrics.Status != "done" {
		t.Errorf("episode: status %q, err %v", e.res.Metrics.Status, e.res.Err)
	}
	rep, err := check.Dir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("artifacts fail the re-check: %+v", rep.Problems)
	}
	if e.res.Metrics.GDs != len(e.audits) && e.res.Metrics.Secondary.Decisions != len(e.audits) {
		t.Errorf("%d audits for %d decisions", len(e.audits), e.res.Metrics.Secondary.Decisions)
	}
}

// aborted checks that the episode was aborted (status aborted, an error
// wrapping coord.ErrAbort that contains want), that metrics.json and
// manifest.json say so, and that its artifacts pass the re-check, which
// reports the status.
func (e *episode) aborted(t *testing.T, want string) {
	t.Helper()
	if !errors.Is(e.res.Err, coord.ErrAbort) || !strings.Contains(e.res.Err.Error(), want) || e.res.Metrics.Status != string(factory.Aborted) {
		t.Errorf("episode: status %q, err %v; want aborted with %q", e.res.Metrics.Status, e.res.Err, want)
	}
	var m harness.Metrics
	var man harness.Manifest
	if err := json.Unmarshal(readFile(t, e.dir, harness.FileMetrics), &m); err != nil || m.Status != string(factory.Aborted) {
		t.Errorf("%s: status %q (%v)", harness.FileMetrics, m.Status, err)
	}
	if err := json.Unmarshal(readFile(t, e.dir, harness.FileManifest), &man); err != nil || man.Status != string(factory.Aborted) {
		t.Errorf("%s: status %q (%v)", harness.FileManifest, man.Status, err)
	}
	rep, err := check.Dir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Stats.Status != string(factory.Aborted) {
		t.Errorf("re-check: status %q, problems %+v", rep.Stats.Status, rep.Problems)
	}
}

// runnerGone checks that the runner process (its pid is in stderr) is gone.
func (e *episode) runnerGone(t *testing.T) {
	t.Helper()
	// The pid coordbench logged when it started the runner: the shell execs
	// the helper, so it is the helper's, even when the helper was stopped
	// before it could print its own (a slow start on a loaded machine).
	pid := 0
	if _, rest, ok := strings.Cut(e.stderr, "started runner (pid "); ok {
		pid, _ = strconv.Atoi(rest[:strings.IndexByte(rest, ')')])
	}
	if pid <= 0 {
		t.Fatalf("no runner pid in stderr:\n%s", e.stderr)
	}
	if !waitDead(pid) {
		t.Errorf("runner pid %d still alive after End", pid)
	}
}

// at returns the audits of step s.
func (e *episode) at(s int) []audit {
	var out []audit
	for _, a := range e.audits {
		if a.Step == s {
			out = append(out, a)
		}
	}
	return out
}

func (e *episode) fallbacks() int {
	n := 0
	for _, a := range e.audits {
		if a.Source == coord.SourceFallback {
			n++
		}
	}
	return n
}

func (e *episode) violations(code string) []extctl.Violation {
	var out []extctl.Violation
	for _, v := range e.c.Violations() {
		if v.Code == code {
			out = append(out, v)
		}
	}
	return out
}

// onlyStepFallsBack checks that step s fell back for every agent with a
// reason containing want (and the raw reply raw, if not ""), and that
// every other step was the runner's.
func (e *episode) onlyStepFallsBack(t *testing.T, s int, want, raw string) {
	t.Helper()
	for _, a := range e.audits {
		if a.Step != s {
			if a.Source != coord.SourceExternal {
				t.Fatalf("step %d: source %s (%s), want external", a.Step, a.Source, a.Reason)
			}
			continue
		}
		if a.Source != coord.SourceFallback || !strings.Contains(a.Reason, want) || a.Raw != raw {
			t.Errorf("step %d %s: source %s reason %q raw %q; want a fallback for %q with raw %q", s, a.AgentID, a.Source, a.Reason, a.Raw, want, raw)
		}
	}
	if len(e.at(s)) == 0 {
		t.Fatalf("no audit at step %d", s)
	}
}

// deadFrom checks that the runner failed at step s, and that the failure
// aborted the episode there: every earlier step is the runner's, step s
// fell back with reason want, and no later step was played.
func (e *episode) deadFrom(t *testing.T, s int, want string) {
	t.Helper()
	for _, a := range e.audits {
		switch {
		case a.Step < s && a.Source != coord.SourceExternal:
			t.Fatalf("step %d: %s (%s) before the failure", a.Step, a.Source, a.Reason)
		case a.Step == s && (a.Source != coord.SourceFallback || a.Error != want || !strings.Contains(a.Reason, fmt.Sprintf("episode aborted: external runner failed at step %d: %s", s, want))):
			t.Fatalf("step %d: %s reason %q reply_error %q, want the abort for %q", a.Step, a.Source, a.Reason, a.Error, want)
		case a.Step > s:
			t.Fatalf("step %d played after the runner failed at step %d: %s (%s)", a.Step, s, a.Source, a.Reason)
		}
	}
	if len(e.at(s)) == 0 {
		t.Fatalf("no audit at step %d", s)
	}
	if err := e.c.Failed(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Failed() = %v, want %q", err, want)
	}
	e.aborted(t, fmt.Sprintf("external runner failed at step %d: %s", s, want))
}

func TestCleanRunner(t *testing.T) {
	for _, mode := range coord.Builtins() {
		t.Run(mode.ID, func(t *testing.T) {
			e := runExternal(t, helperCommand(t, "first"), mode, extctl.Config{})
			e.intact(t)
			e.runnerGone(t)
			if e.fallbacks() != 0 || e.c.Failed() != nil || len(e.c.Violations()) != 0 {
				t.Errorf("fallbacks %d, failed %v, violations %v", e.fallbacks(), e.c.Failed(), e.c.Violations())
			}
			m := e.res.Metrics
			if m.Controller != "external" || m.Secondary.DecisionsBySource["external"] != m.Secondary.Decisions || m.Framework != "scripted" || m.Model != "none" {
				t.Errorf("metrics: controller %q by source %v framework %q model %q", m.Controller, m.Secondary.DecisionsBySource, m.Framework, m.Model)
			}
			a := e.audits[0]
			if a.Raw == "" || a.Error != "" {
				t.Errorf("audit notes: %+v", a)
			}
			// the round trip is in timing.jsonl, one line per audited answer
			if len(e.timing) != len(e.audits) || e.timing[0].Step != a.Step || e.timing[0].LatencyMS <= 0 {
				t.Errorf("timing: %d lines for %d audits, first %+v", len(e.timing), len(e.audits), e.timing)
			}
			s := e.c.Summary()
			if s.Sent != m.GDs || s.Answered != s.Sent || s.Latency.N != s.Sent || s.Runner.Name != "helper" {
				t.Errorf("summary: %+v", s)
			}
			if !strings.Contains(e.stderr, "helper pid") || !strings.Contains(e.stderr, "[coordbench] runner done: exit status 0") {
				t.Errorf("stderr log:\n%s", e.stderr)
			}
		})
	}
}

// A runner that crashes mid-episode (issue 32: a run whose runner exited
// after some decisions was marked done and passed des validate): the
// episode is aborted at the step it crashed in, and metrics.json,
// manifest.json and the re-check say status aborted.
func TestCrashMidEpisode(t *testing.T) {
	e := runExternal(t, helperCommand(t, "crash:40"), coord.Hierarchical(), extctl.Config{})
	e.runnerGone(t)
	e.deadFrom(t, 40, "runner exited: exit status 2")
	if !strings.Contains(e.stderr, "helper: crashing at step 40") {
		t.Errorf("the runner's stderr was not captured:\n%s", e.stderr)
	}
}

func TestHangTimesOut(t *testing.T) {
	// The timeout bounds the ready message too, which needs the helper
	// process started: a second leaves room for a loaded machine.
	e := runExternal(t, helperCommand(t, "hang:25"), coord.Centralized(), extctl.Config{Timeout: time.Second})
	e.runnerGone(t)
	e.deadFrom(t, 25, "timeout after 1s")
	// One timeout, at step 25: the runner is not asked again, and the
	// episode ends there (deadFrom). Tests assert on behaviour, never on
	// wall-clock time.
	if v := e.violations(extctl.VTimeout); len(v) != 1 || v[0].Step != 25 {
		t.Errorf("timeout violations %+v, want one, at step 25", v)
	}
	if !strings.Contains(e.stderr, "SIGTERM") {
		t.Errorf("no SIGTERM in the log:\n%s", e.stderr)
	}
}

func TestHangIgnoringSIGTERMIsKilled(t *testing.T) {
	e := runExternal(t, helperCommand(t, "noterm:3"), coord.Centralized(), extctl.Config{Timeout: time.Second, Grace: 200 * time.Millisecond})
	e.runnerGone(t)
	e.deadFrom(t, 3, "timeout after 1s")
	if !strings.Contains(e.stderr, "sending SIGKILL") {
		t.Errorf("no SIGKILL in the log:\n%s", e.stderr)
	}
}

func TestExitBeforeHello(t *testing.T) {
	e := runExternal(t, helperCommand(t, "nohello"), coord.HolonicHybrid(), extctl.Config{})
	want := "runner failed before the first decision: runner exited: exit status 3 (waiting for ready)"
	e.aborted(t, "external "+want)
	for _, a := range e.audits {
		if a.Source != coord.SourceFallback || a.Reason != "controller error: episode aborted: external "+want || a.Error != want {
			t.Fatalf("step %d: %s %q", a.Step, a.Source, a.Reason)
		}
	}
	if err := e.c.Failed(); err == nil || !strings.Contains(err.Error(), "before the first decision") {
		t.Errorf("Failed() = %v", err)
	}
	if !strings.Contains(e.stderr, "giving up before hello") {
		t.Errorf("stderr:\n%s", e.stderr)
	}
}

func TestCommandNotFound(t *testing.T) {
	e := runExternal(t, "/nonexistent/runner --flag", coord.Centralized(), extctl.Config{})
	e.aborted(t, "exit status 127")
	if e.fallbacks() != len(e.audits) || e.c.Failed() == nil || !strings.Contains(e.c.Failed().Error(), "exit status 127") {
		t.Errorf("fallbacks %d of %d, failed %v", e.fallbacks(), len(e.audits), e.c.Failed())
	}
}

func TestNoReady(t *testing.T) {
	e := runExternal(t, helperCommand(t, "noready"), coord.Centralized(), extctl.Config{Timeout: 200 * time.Millisecond})
	e.aborted(t, "timeout after 200ms (waiting for ready)")
	e.runnerGone(t)
	if err := e.c.Failed(); err == nil || !strings.Contains(err.Error(), "timeout after 200ms (waiting for ready)") {
		t.Errorf("Failed() = %v", err)
	}
	e = runExternal(t, helperCommand(t, "badready"), coord.Centralized(), extctl.Config{})
	e.runnerGone(t)
	if err := e.c.Failed(); err == nil || !strings.Contains(err.Error(), `expected a ready message after hello, got "{\"type\":\"hullo\"}"`) {
		t.Errorf("Failed() = %v", err)
	}
	if e.fallbacks() != len(e.audits) {
		t.Errorf("%d fallbacks of %d", e.fallbacks(), len(e.audits))
	}
}

func TestGarbageLine(t *testing.T) {
	e := runExternal(t, helperCommand(t, "garbage:7"), coord.HeterarchicalCNP(), extctl.Config{})
	e.intact(t)
	e.runnerGone(t)
	e.onlyStepFallsBack(t, 7, "unusable reply: invalid JSON: invalid character 'n'", "{not json")
	if e.c.Failed() != nil || len(e.violations(extctl.VInvalidJSON)) != 1 {
		t.Errorf("failed %v, violations %v", e.c.Failed(), e.c.Violations())
	}
}

func TestWrongAgents(t *testing.T) {
	e := runExternal(t, helperCommand(t, "wrong:9"), coord.HeterarchicalCNP(), extctl.Config{})
	e.intact(t)
	e.onlyStepFallsBack(t, 9, "unusable reply: unknown agent cell:C99 (not active at this step)", `{"actions":{"cell:C99":0}}`)
	e = runExternal(t, helperCommand(t, "missing:9"), coord.HeterarchicalCNP(), extctl.Config{})
	e.intact(t)
	e.onlyStepFallsBack(t, 9, "unusable reply: no action for this agent in the reply", `{"actions":{}}`)
	if n := len(e.violations(extctl.VMissingAgent)); n != len(e.at(9)) || e.c.Failed() != nil {
		t.Errorf("%d missing-agent violations for %d agents; failed %v", n, len(e.at(9)), e.c.Failed())
	}
}

func TestIllegalAndNonIntegerIndices(t *testing.T) {
	e := runExternal(t, helperCommand(t, "illegal:4"), coord.HolonicHybrid(), extctl.Config{})
	e.intact(t)
	for _, a := range e.at(4) {
		if a.Source != coord.SourceFallback || a.Reason != "illegal action index 99" || a.Requested == nil || *a.Requested != 99 || a.Raw == "" {
			t.Errorf("step 4: %+v", a)
		}
	}
	if len(e.violations(extctl.VIllegal)) != len(e.at(4)) || e.fallbacks() != len(e.at(4)) {
		t.Errorf("violations %v", e.c.Violations())
	}
	e = runExternal(t, helperCommand(t, "notint:4"), coord.HolonicHybrid(), extctl.Config{})
	e.intact(t)
	e.onlyStepFallsBack(t, 4, `unusable reply: action is not an integer: "\"0\""`, `{"actions":{"plant":"0"},"step":4}`)
}

// A runner that prints debugging lines on stdout, echoes no step, or
// sends its answers twice still gets every decision through, and plays the
// same episode as the clean runner.
func TestTolerableNoise(t *testing.T) {
	ref := runExternal(t, helperCommand(t, "first"), coord.HeterarchicalCNP(), extctl.Config{})
	refTrace := readFile(t, ref.dir, harness.FileTrace)
	for spec, code := range map[string]string{"noise": extctl.VNoise, "stale": extctl.VStale, "nostep": ""} {
		t.Run(spec, func(t *testing.T) {
			e := runExternal(t, helperCommand(t, spec), coord.HeterarchicalCNP(), extctl.Config{})
			e.intact(t)
			if e.fallbacks() != 0 || e.c.Failed() != nil {
				t.Errorf("%d fallbacks, failed %v", e.fallbacks(), e.c.Failed())
			}
			if !bytes.Equal(readFile(t, e.dir, harness.FileTrace), refTrace) {
				t.Error("trace differs from the clean runner's")
			}
			vs := e.c.Violations()
			if code == "" && len(vs) != 0 || code != "" && len(e.violations(code)) == 0 {
				t.Errorf("violations %v, want %q", vs, code)
			}
			s := e.c.Summary()
			switch spec {
			case "noise":
				if s.Errors != 0 || s.Warnings != e.res.Metrics.GDs || !strings.Contains(e.stderr, "[coordbench] stdout (skipped, not a protocol message): debug: step 0, 1 agents") {
					t.Errorf("noise: %d errors %d warnings; stderr:\n%.400s", s.Errors, s.Warnings, e.stderr)
				}
			case "stale":
				// The second copy is skipped as stale when it comes after
				// the next decision was sent, as unsolicited when before.
				if n := s.Counts[extctl.VStale] + s.Counts[extctl.VUnsolicited]; n != e.res.Metrics.GDs || s.Errors != n {
					t.Errorf("stale: counts %v", s.Counts)
				}
			}
		})
	}
}

func TestEndOfEpisode(t *testing.T) {
	e := runExternal(t, helperCommand(t, "badexit"), coord.Centralized(), extctl.Config{})
	e.intact(t)
	if vs := e.violations(extctl.VExitStatus); len(vs) != 1 || !strings.Contains(vs[0].Detail, "exit status 1 after episode_end") || vs[0].Step != extctl.StepEnd || e.c.Failed() != nil {
		t.Errorf("violations %v, failed %v", e.c.Violations(), e.c.Failed())
	}
	e = runExternal(t, helperCommand(t, "linger"), coord.Centralized(), extctl.Config{Grace: 200 * time.Millisecond})
	e.intact(t)
	e.runnerGone(t)
	if vs := e.violations(extctl.VNoExit); len(vs) != 1 || e.fallbacks() != 0 {
		t.Errorf("violations %v", e.c.Violations())
	}
}

func TestNoOrphans(t *testing.T) {
	e := runExternal(t, helperCommand(t, "orphan"), coord.Centralized(), extctl.Config{})
	e.intact(t)
	e.runnerGone(t)
	if pid := pidIn(t, e.stderr, "grandchild"); !waitDead(pid) {
		t.Errorf("the runner's child %d outlived the episode", pid)
	}
}

// cancelAfter is a decisions.jsonl sink that cancels after n audits whose
// source is the external runner.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	if w.n > 0 && bytes.Contains(p, []byte(`"source":"external"`)) {
		if w.n--; w.n == 0 {
			w.cancel()
		}
	}
	return len(p), nil
}

func TestCancelStopsRunner(t *testing.T) {
	p := plantOf(t, faultInstance)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr testenv.Buffer
	c, err := extctl.Start(ctx, extctl.Config{Command: helperCommand(t, "slow:2"), Stderr: &stderr, Grace: 200 * time.Millisecond,
		Episode: extctl.EpisodeOf(p, coord.Centralized(), faultSeed)})
	if err != nil {
		t.Fatal(err)
	}
	// Cancel once the runner has answered a few steps (not after a fixed
	// time, which a loaded machine may spend starting the runner).
	dec := &cancelAfter{n: 5, cancel: cancel}
	res := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: faultSeed, Mode: coord.Centralized(), Controller: c, Decisions: dec})
	c.End(res.Metrics)
	if res.Err != nil || res.Metrics.Status != "done" || res.Metrics.GFb == 0 || res.Metrics.Secondary.DecisionsBySource["external"] == 0 {
		t.Errorf("status %s err %v by source %v", res.Metrics.Status, res.Err, res.Metrics.Secondary.DecisionsBySource)
	}
	if err := c.Failed(); err == nil || !strings.Contains(err.Error(), "runner stopped: context canceled") {
		t.Errorf("Failed() = %v", err)
	}
	if pid := pidIn(t, stderr.String(), "helper"); !waitDead(pid) {
		t.Errorf("runner %d alive after cancel", pid)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := extctl.Start(context.Background(), extctl.Config{Command: "  "}); err == nil {
		t.Error("an empty command started")
	}
	if _, err := extctl.Check(context.Background(), "", extctl.CheckOptions{}); err == nil {
		t.Error("an empty command was checked")
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A runner that floods its stderr leaves a bounded controller_stderr.txt:
// its head, a line saying how much was cut, and its tail with the runner's
// last words and coordbench's notes on how it ended.
func TestStderrIsCapped(t *testing.T) {
	var stderr bytes.Buffer
	const limit = 64 << 10
	c, err := extctl.Start(context.Background(), extctl.Config{
		Command: `echo FIRST >&2; head -c 1000000 /dev/zero | tr '\0' x >&2; echo LAST >&2; exit 3`,
		Stderr:  &stderr, MaxStderr: limit, Episode: extctl.EpisodeOf(plantOf(t, faultInstance), coord.Centralized(), faultSeed)})
	if err != nil {
		t.Fatal(err)
	}
	c.End(nil)
	s := stderr.String()
	if len(s) > limit+200 || !strings.Contains(s[:200], "\nFIRST\n") || !strings.Contains(s, "bytes cut here") ||
		!strings.Contains(s, "LAST\n") || !strings.Contains(s, "runner done: exit status 3") {
		t.Errorf("stderr log of %d bytes: %.100q … %q", len(s), s, s[max(0, len(s)-300):])
	}
}
