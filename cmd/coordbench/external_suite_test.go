package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/testenv"
)

// The Python example completes a 4-paradigm suite on A3C9-1 with 2 seeds,
// and every case equals its Go twin's (greedy_py) run in-process; the
// suite resumes, and des case reproduces an external case.
func TestSuiteWithExternalRunner(t *testing.T) {
	testenv.LookPath(t, "python3")
	runner := "python3 " + filepath.Join("..", "..", "examples", "python", "greedy_runner.py")
	dir := t.TempDir()
	args := []string{"des", "suite", "--suite", "A3C9-1", "--seeds", "11,12", "--controller", "external,greedy_py",
		"--paradigm", "centralized,hierarchical,heterarchical_cnp,holonic_hybrid", "--controller-command", runner, "--out", dir}
	if out, err := run(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rows := strings.Split(strings.TrimSpace(string(mustRead(t, filepath.Join(dir, harness.FileSuiteSummary)))), "\n")
	if len(rows) != 17 {
		t.Fatalf("%d summary rows, want 16 cases", len(rows)-1)
	}
	for _, m := range []string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"} {
		for _, s := range []string{"11", "12"} {
			ext := filepath.Join(dir, harness.SuiteCasesDir, "A3C9-1__"+m+"__external__s"+s)
			twin := filepath.Join(dir, harness.SuiteCasesDir, "A3C9-1__"+m+"__greedy_py__s"+s)
			if !bytes.Equal(mustRead(t, filepath.Join(ext, harness.FileTrace)), mustRead(t, filepath.Join(twin, harness.FileTrace))) {
				t.Errorf("%s s%s: the Python runner's trace differs from its Go twin's", m, s)
			}
			if _, err := os.Stat(filepath.Join(ext, "controller_stderr.txt")); err != nil {
				t.Errorf("%s s%s: no runner stderr in the case: %v", m, s, err)
			}
		}
	}
	out, err := run(t, args...)
	if err != nil || !strings.Contains(out, "0 run now, 16 already done") {
		t.Errorf("resume reran cases: %v\n%s", err, out)
	}
	other := append(append([]string{}, args[:len(args)-4]...), "--controller-command", runner+" --unused", "--out", dir)
	if _, err := run(t, other...); err == nil || !strings.HasPrefix(err.Error(), "--out: "+dir+" holds a suite of another configuration (controller_identities differ from its suite.json)") {
		t.Errorf("another runner command into the same suite directory: %v", err)
	}
	id := "A3C9-1__holonic_hybrid__external__s12"
	caseOut := filepath.Join(t.TempDir(), "case")
	if out, err := run(t, "des", "case", "--case-id", id, "--controller-command", runner, "--out", caseOut); err != nil {
		t.Fatalf("des case: %v\n%s", err, out)
	}
	if !bytes.Equal(mustRead(t, filepath.Join(caseOut, harness.FileTrace)), mustRead(t, filepath.Join(dir, harness.SuiteCasesDir, id, harness.FileTrace))) {
		t.Error("des case did not reproduce the external case")
	}
	if _, err := run(t, "des", "case", "--case-id", id, "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--controller-command") {
		t.Errorf("an external case without its command: %v", err)
	}
}

// The LangGraph.js example completes the same suite, with the same
// decisions as the Go twin (its rule is the Python example's).
func TestSuiteWithLangGraphRunner(t *testing.T) {
	root := filepath.Join("..", "..", "examples", "langgraph-js")
	testenv.LookPath(t, "node")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@langchain", "langgraph")); err != nil {
		testenv.Missing(t, "the LangGraph.js example's npm packages (npm ci --prefix examples/langgraph-js): %v", err)
	}
	dir := t.TempDir()
	out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "11,12", "--controller", "external,greedy_py",
		"--paradigm", "centralized,hierarchical,heterarchical_cnp,holonic_hybrid",
		"--controller-command", "node "+filepath.Join(root, "runner.mjs"), "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, m := range []string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"} {
		for _, s := range []string{"11", "12"} {
			ext := filepath.Join(dir, harness.SuiteCasesDir, "A3C9-1__"+m+"__external__s"+s, harness.FileTrace)
			twin := filepath.Join(dir, harness.SuiteCasesDir, "A3C9-1__"+m+"__greedy_py__s"+s, harness.FileTrace)
			if !bytes.Equal(mustRead(t, ext), mustRead(t, twin)) {
				t.Errorf("%s s%s: the LangGraph.js runner's trace differs from the Go twin's", m, s)
			}
		}
	}
}
