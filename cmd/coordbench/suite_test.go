package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

func summaryRows(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

func TestSuiteCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	args := []string{"des", "suite", "--suite", "A3C9-1,A5C12-1", "--seeds", "1,2", "--out", dir}
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	modes := coord.Builtins()
	n := 2 * len(modes) * 2
	for _, want := range []string{"effectiveness", "robustness", "G_mk", "G_do", " ± ", harness.FileSuiteSummary,
		harness.FileSuiteAggregate, "suite: " + strconv.Itoa(n) + " cases, 0 already done", strconv.Itoa(n) + " cases: " + strconv.Itoa(n) + " run now"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The aggregate: a row per instance × controller × paradigm (model and
	// framework, empty for built-ins, are left out), then the legend.
	if strings.Count(out, "| instance | controller | paradigm ") != 4 || !strings.Contains(out, " G_mk ↓ |") ||
		!strings.Contains(out, "| G_cj   | ↑ higher | jobs ") || strings.Contains(out, "| model") {
		t.Errorf("aggregate tables are not grouped by instance, controller and paradigm with a legend:\n%s", out)
	}
	for _, inst := range []string{"A3C9-1  ", "A5C12-1 "} {
		for _, m := range modes {
			if !strings.Contains(out, "| "+inst+" | rule       | "+m.ID+" ") {
				t.Errorf("aggregate tables lack the row %s × rule × %s:\n%s", inst, m.ID, out)
			}
		}
	}
	agg, err := os.ReadFile(filepath.Join(dir, harness.FileSuiteAggregate))
	if err != nil || !strings.HasPrefix(string(agg), "instance,controller,model,framework,paradigm,cases,failed,G_mk_mean,") ||
		!strings.Contains(string(agg), "\nA5C12-1,rule,,,"+modes[0].ID+",2,0,") {
		t.Errorf("%s: %v\n%s", harness.FileSuiteAggregate, err, agg)
	}
	if rows := summaryRows(t, dir); len(rows) != n || rows[0][0] != "A3C9-1__"+modes[0].ID+"__rule__s1" {
		t.Fatalf("%d summary rows, first %v", len(rows), rows[0])
	}
	out, err = run(t, "des", "validate", filepath.Join(dir, "cases", "A5C12-1__"+modes[0].ID+"__rule__s2"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Again: nothing to run.
	out, err = run(t, args...)
	if err != nil || !strings.Contains(out, strconv.Itoa(n)+" cases: 0 run now, "+strconv.Itoa(n)+" already done") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	// --group-by paradigm pools the instances: nothing runs, the aggregate
	// has one row per paradigm.
	out, err = run(t, append(args, "--group-by", "paradigm")...)
	if err != nil || !strings.Contains(out, "0 run now") || !strings.Contains(out, "| paradigm          |   n |") ||
		!strings.Contains(out, "| "+modes[0].ID+"       |   4 |") || strings.Contains(out, "| instance") {
		t.Fatalf("--group-by paradigm: %v\n%s", err, out)
	}
	agg, _ = os.ReadFile(filepath.Join(dir, harness.FileSuiteAggregate))
	if lines := strings.Split(strings.TrimSpace(string(agg)), "\n"); len(lines) != 1+len(modes) ||
		!strings.HasPrefix(lines[0], "paradigm,cases,failed,") || !strings.HasPrefix(lines[1], modes[0].ID+",4,0,") {
		t.Errorf("--group-by paradigm: %s\n%s", harness.FileSuiteAggregate, agg)
	}
	if out, err := run(t, append(args, "--group-by", "paradigm,seed")...); err == nil ||
		!strings.Contains(err.Error(), `--group-by: "seed" is not a group key`) {
		t.Errorf("--group-by paradigm,seed: %v\n%s", err, out)
	}
	// Another configuration (other controllers: other cases) is refused in
	// the same directory, which keeps its suite (issue 14: it rewrote
	// suite.json and orphaned the earlier cases); --force replaces it.
	config := string(mustRead(t, filepath.Join(dir, harness.FileSuiteConfig)))
	other := []string{"des", "suite", "--suite", "A3C9-1", "--paradigm", modes[0].ID, "--seeds", "1", "--controller", "greedy", "--out", dir}
	if _, err := run(t, other...); err == nil ||
		!strings.Contains(err.Error(), "--out: "+dir+" holds a suite of another configuration (controllers, instances, paradigms, seeds, suite differ from its suite.json)") ||
		!strings.Contains(err.Error(), "(see --force)") {
		t.Errorf("another configuration: %v", err)
	}
	if string(mustRead(t, filepath.Join(dir, harness.FileSuiteConfig))) != config || len(summaryRows(t, dir)) != n {
		t.Error("the refused suite rewrote suite.json or the summary")
	}
	// --limit and --cases select cases; the summary lists only those.
	out, err = run(t, "des", "suite", "--suite", "A3C9-1,A5C12-1", "--seeds", "1,2", "--out", dir,
		"--cases", "A5C12-1__"+modes[0].ID+"__rule__s2,A3C9-1__"+modes[0].ID+"__rule__s1")
	if err != nil || len(summaryRows(t, dir)) != 2 || !strings.Contains(out, "2 cases: 0 run now, 2 already done") {
		t.Fatalf("--cases: %v\n%s", err, out)
	}
}

func TestCaseCommandReproducesSuiteCase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if out, err := run(t, "des", "suite", "--suite", "A5C12-2,gen:A3C6J9", "--paradigm", "all",
		"--controller", "random,greedy", "--seeds", "21", "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, id := range []string{"A5C12-2__centralized__random__s21", "gen-A3C6J9__centralized__greedy__s21"} {
		for _, extra := range [][]string{nil, {"--suite-dir", dir}} {
			out := filepath.Join(t.TempDir(), "case")
			res, err := run(t, append([]string{"des", "case", "--case-id", id, "--out", out}, extra...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, res)
			}
			for _, f := range []string{harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileManifest} {
				a, _ := os.ReadFile(filepath.Join(dir, "cases", id, f))
				b, _ := os.ReadFile(filepath.Join(out, f))
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("des case %s %v: %s differs from the suite's", id, extra, f)
				}
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "case", "--case-id", "A5C12-2__centralized__random"}, "want <instance>__<paradigm>"},
		{[]string{"des", "case", "--case-id", "A5C12-2__anarchy__random__s1"}, "unknown paradigm"},
		{[]string{"des", "case", "--case-id", "file-mine__centralized__rule__s1"}, "--instance FILE"},
		{[]string{"des", "case", "--case-id", "A5C12-2__centralized__rule__s21", "--suite-dir", dir}, "not in the suite"},
		{[]string{"des", "case"}, "case-id"},
	} {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

// A custom paradigm from a file runs a suite end to end, and its cases
// rerun by id.
func TestSuiteParadigmFile(t *testing.T) {
	tmp := t.TempDir()
	mode := filepath.Join(tmp, "my_mode.yaml")
	os.WriteFile(mode, []byte(`mode_id: central_copy
routing_authority_mode: centralized
cell_contract_actions: accept_only
plant_reroute_required: true
description: a copy of centralized under another id
`), 0o644)
	dir := filepath.Join(tmp, "suite")
	out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized", "--paradigm-file", mode,
		"--seeds", "11,12", "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rows := summaryRows(t, dir)
	var got []string
	for _, r := range rows {
		got = append(got, r[0])
	}
	want := []string{"A3C9-1__centralized__rule__s11", "A3C9-1__centralized__rule__s12",
		"A3C9-1__central_copy__rule__s11", "A3C9-1__central_copy__rule__s12"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("cases %v, want %v", got, want)
	}
	if !strings.Contains(out, "| central_copy ") {
		t.Errorf("aggregate lacks the custom paradigm:\n%s", out)
	}
	// Same switches, same episode: the copy's metrics equal centralized's.
	for k := 6; k < len(rows[0]); k++ {
		if rows[0][k] != rows[2][k] {
			t.Errorf("column %d: centralized %s, copy %s", k, rows[0][k], rows[2][k])
		}
	}
	cfg, err := harness.ReadSuiteConfig(dir)
	if err != nil || len(cfg.Paradigms) != 2 || cfg.Paradigms[1].Description != "a copy of centralized under another id" {
		t.Fatalf("suite.json paradigms: %+v %v", cfg, err)
	}
	caseDir := filepath.Join(tmp, "case")
	if out, err := run(t, "des", "case", "--case-id", want[3], "--paradigm-file", mode, "--out", caseDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "cases", want[3], harness.FileTrace))
	b, _ := os.ReadFile(filepath.Join(caseDir, harness.FileTrace))
	if !bytes.Equal(a, b) {
		t.Error("des case of the custom paradigm does not reproduce the trace")
	}
	// des list shows the paradigms of its own files only, and a command
	// without the file does not know the paradigm (commands of one
	// process share no registry).
	if out, err := run(t, "des", "list", "--paradigm-file", mode); err != nil || !strings.Contains(out, "central_copy") {
		t.Errorf("des list --paradigm-file: %v\n%s", err, out)
	}
	if out, err := run(t, "des", "list"); err != nil || strings.Contains(out, "central_copy") {
		t.Errorf("des list without files: %v\n%s", err, out)
	}
	if _, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "central_copy", "--out", filepath.Join(tmp, "run")); err == nil ||
		!strings.Contains(err.Error(), `unknown paradigm "central_copy"`) {
		t.Errorf("des run without the paradigm file: %v", err)
	}
	// A conflicting definition under a taken id is refused.
	os.WriteFile(mode, []byte("mode_id: centralized\nrouting_authority_mode: centralized\ncell_contract_actions: accept_only\n"), 0o644)
	if _, err := run(t, "des", "suite", "--paradigm-file", mode, "--out", filepath.Join(tmp, "x")); err == nil ||
		!strings.Contains(err.Error(), "already registered") {
		t.Errorf("conflicting paradigm file: %v", err)
	}
}

// Bad specs fail with a clear message before anything runs.
func TestSuiteBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "never")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", "A5C12-9"}, `unknown instance "A5C12-9"`},
		{[]string{"--suite", "A5C12,nowhere.yaml"}, "instance file nowhere.yaml: file does not exist"},
		{[]string{"--suite", "gen:A2"}, "gen:A<areas>C<cells>"},
		{[]string{"--paradigm", "centralized,anarchy"}, `unknown paradigm "anarchy"`},
		{[]string{"--controller", "rule,oracle"}, `unknown controller "oracle"`},
		{[]string{"--seeds", "validation"}, `"validation" is not a seed`},
		{[]string{"--seeds", "1,2,-3"}, `"-3" is not a seed`},
		{[]string{"--limit", "-1"}, "--limit"},
		{[]string{"--workers", "0"}, "--workers"},
		{[]string{"--cases", "A5C12-1__centralized__rule__s77"}, "not in this suite"},
		{[]string{"--paradigm-file", "missing.yaml"}, "missing.yaml"},
	} {
		_, err := run(t, append([]string{"des", "suite", "--out", out}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v created %s before failing", tc.args, out)
		}
	}
}

// Killing a suite and running it again gives the files of a clean run.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// coordbenchBinary builds the CLI once for the tests that run it as a
// separate process.
func coordbenchBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "coordbench-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "coordbench")
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	maybeRunAsCLI()
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// killSuite is a suite of a few seconds on one worker.
var killSuite = []string{"des", "suite", "--suite", "all", "--paradigm", "all", "--controller", "rule,greedy,random",
	"--seeds", "test", "--limit", "90"}

// finishedCases counts the case directories in place.
func finishedCases(dir string) int {
	ents, _ := os.ReadDir(filepath.Join(dir, "cases"))
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			n++
		}
	}
	return n
}

func TestSuiteResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs suites of a few seconds")
	}
	bin := coordbenchBinary(t)
	clean := filepath.Join(t.TempDir(), "clean")
	if out, err := exec.Command(bin, append(killSuite, "--workers", "2", "--out", clean)...).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	total := len(summaryRows(t, clean))

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "suite")
			cmd := exec.Command(bin, append(killSuite, "--workers", "1", "--out", dir)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Wait for a few finished cases (the timeout only guards a hang).
			deadline := time.Now().Add(2 * time.Minute)
			for finishedCases(dir) < 3 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("no case finished")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := <-exited
			done := finishedCases(dir)
			t.Logf("%s after %d of %d cases", sig, done, total)
			if err == nil || done >= total {
				t.Fatalf("the suite was not stopped (exit %v, %d of %d cases done): make it larger", err, done, total)
			}
			if sig == syscall.SIGINT {
				msg := stderr.String()
				if !strings.Contains(msg, "run the same command again to resume") || !strings.Contains(msg, "interrupted") {
					t.Errorf("SIGINT message:\n%s", msg)
				}
				// In-flight cases finished; the summary lists exactly the finished ones.
				if rows := summaryRows(t, dir); len(rows) != done {
					t.Errorf("summary after SIGINT has %d rows, %d cases are done", len(rows), done)
				}
				ents, _ := os.ReadDir(filepath.Join(dir, "cases"))
				if len(ents) != done {
					t.Errorf("temporaries left after SIGINT: %d entries, %d cases", len(ents), done)
				}
			}
			out, err := exec.Command(bin, append(killSuite, "--workers", "1", "--out", dir)...).CombinedOutput()
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if want := strconv.Itoa(done) + " already done"; !strings.Contains(string(out), want) {
				t.Errorf("resume output lacks %q:\n%s", want, out)
			}
			for _, f := range []string{harness.FileSuiteConfig, harness.FileSuiteSummary, harness.FileSuiteAggregate, harness.FileSuiteAggregateMD} {
				a, _ := os.ReadFile(filepath.Join(clean, f))
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s after %s and resume differs from a clean run", f, sig)
				}
			}
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
					t.Errorf("temporary left: %s", path)
				}
				return nil
			})
			if finishedCases(dir) != total {
				t.Errorf("%d case directories, %d cases", finishedCases(dir), total)
			}
		})
	}
}

// An LLM suite against the stub model: rows carry the model, framework,
// calls and tokens; the same suite replays offline from the cache with the
// server stopped, with an identical summary.
func TestSuiteWithStubModel(t *testing.T) {
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stub)
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache.db")
	args := []string{"des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized,holonic_hybrid", "--seeds", "11,12", "--controller", "llm,rule",
		"--llm-model", "stub-m", "--llm-base-url", srv.URL + "/v1", "--framework", "relay", "--llm-cache", cache}
	if out, err := run(t, append(args, "--out", filepath.Join(dir, "live"))...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srv.Close()
	if out, err := run(t, append(args, "--llm-cache-mode", "replay", "--out", filepath.Join(dir, "replay"))...); err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	live := mustRead(t, filepath.Join(dir, "live", harness.FileSuiteSummary))
	replay := mustRead(t, filepath.Join(dir, "replay", harness.FileSuiteSummary))
	if !bytes.Equal(live, replay) {
		t.Errorf("replayed summary differs:\n%s\n---\n%s", live, replay)
	}
	rows := strings.Split(strings.TrimSpace(string(live)), "\n")
	llmRows := 0
	for _, r := range rows[1:] {
		if strings.Contains(r, "__llm__stub-m-relay__") {
			llmRows++
			if !strings.Contains(r, ",llm,stub-m,relay,") {
				t.Errorf("llm row lacks model and framework: %s", r)
			}
		}
	}
	if llmRows != 4 || len(rows) != 9 {
		t.Errorf("%d llm rows of %d", llmRows, len(rows)-1)
	}
	// des case reruns an LLM case from the cache, offline, byte for byte;
	// the wrong framework is refused.
	id := "A3C9-1__holonic_hybrid__llm__stub-m-relay__s12"
	caseOut := filepath.Join(dir, "case")
	replayArgs := []string{"--llm-model", "stub-m", "--llm-base-url", srv.URL + "/v1", "--llm-cache", cache, "--llm-cache-mode", "replay"}
	if out, err := run(t, append([]string{"des", "case", "--case-id", id, "--suite-dir", filepath.Join(dir, "live"), "--framework", "relay", "--out", caseOut}, replayArgs...)...); err != nil {
		t.Fatalf("des case: %v\n%s", err, out)
	}
	for _, f := range []string{harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileMetrics} {
		if !bytes.Equal(mustRead(t, filepath.Join(caseOut, f)), mustRead(t, filepath.Join(dir, "live", harness.SuiteCasesDir, id, f))) {
			t.Errorf("des case did not reproduce the LLM case's %s", f)
		}
	}
	if _, err := run(t, append([]string{"des", "case", "--case-id", id, "--framework", "graph", "--out", t.TempDir()}, replayArgs...)...); err == nil || !strings.Contains(err.Error(), "stub-m-relay") {
		t.Errorf("a case rerun with another framework was accepted: %v", err)
	}
	// Model use by role: the report's table is the mean per episode of
	// the cases' by_role; replayed, every answer is a cache hit (live, only
	// the prompts an episode repeats).
	for _, tc := range []struct {
		run    string
		cached string
	}{{"live", "0"}, {"replay", "1"}} {
		out, err := run(t, "report", "--format", "csv", "--table", "roles", filepath.Join(dir, tc.run))
		if err != nil {
			t.Fatalf("report roles: %v\n%s", err, out)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 5 {
			t.Fatalf("%s: roles csv (%v):\n%s", tc.run, err, out)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, r := range recs[1:] {
			p, role := r[col["paradigm"]], r[col["role"]]
			var sum float64
			for _, seed := range []string{"11", "12"} {
				var m harness.Metrics
				if err := json.Unmarshal(mustRead(t, filepath.Join(dir, tc.run, harness.SuiteCasesDir, "A3C9-1__"+p+"__llm__stub-m-relay__s"+seed, harness.FileMetrics)), &m); err != nil {
					t.Fatal(err)
				}
				sum += float64(m.Secondary.ByRole[role].LLMCalls)
			}
			if r[col["n"]] != "2" || r[col["llm_calls_mean"]] != strconv.FormatFloat(sum/2, 'g', -1, 64) || r[col["llm_calls_mean"]] != r[col["decisions_mean"]] ||
				(tc.cached == "1") != (r[col["cached_share"]] == "1") || r[col["fallback_share"]] != "0" {
				t.Errorf("%s: %s %s: %v (calls summed %v)", tc.run, p, role, r, sum)
			}
		}
	}
	// The stub's builtin policy is the rule: the llm cases' traces equal the rule cases'.
	for _, m := range []string{"centralized", "holonic_hybrid"} {
		a := mustRead(t, filepath.Join(dir, "live", harness.SuiteCasesDir, "A3C9-1__"+m+"__llm__stub-m-relay__s11", harness.FileTrace))
		b := mustRead(t, filepath.Join(dir, "live", harness.SuiteCasesDir, "A3C9-1__"+m+"__rule__s11", harness.FileTrace))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: llm-through-stub trace differs from the rule's", m)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Seed ranges read the same in both benchmarks' suites (issue 14).
func TestSuiteSeedRange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized", "--seeds", "2-4", "--out", dir)
	if err != nil || !strings.Contains(out, "3 cases: 3 run now") {
		t.Fatalf("--seeds 2-4: %v\n%s", err, out)
	}
	for i, r := range summaryRows(t, dir) {
		if want := fmt.Sprintf("A3C9-1__centralized__rule__s%d", i+2); r[0] != want {
			t.Errorf("row %d: %s, want %s", i, r[0], want)
		}
	}
}
