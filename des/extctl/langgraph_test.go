//go:build unix

package extctl_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
)

const langGraphDir = "../../examples/langgraph-js"

// langGraphRunner returns the shell command running the LangGraph.js
// example, or skips the test when node or the example's node_modules is
// missing (fails in CI, where CI is set; .ci/run installs them with npm ci).
func langGraphRunner(t testing.TB) string {
	t.Helper()
	node := testenv.LookPath(t, "node")
	dir, err := filepath.Abs(langGraphDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph")); err != nil {
		testenv.Missing(t, "%s: run npm ci --prefix examples/langgraph-js (%v)", dir, err)
	}
	return shellQuote(node) + " " + shellQuote(filepath.Join(dir, "runner.mjs"))
}

// The LangGraph.js example passes the conformance checker without a
// protocol error or fallback.
func TestLangGraphRunnerPassesChecker(t *testing.T) {
	command := langGraphRunner(t)
	t.Parallel() // beside TestLangGraphRunnerEpisodes: node is the slow part
	rep, err := extctl.Check(context.Background(), command, extctl.CheckOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	t.Logf("\n%s", text.String())
	if !rep.Clean() || len(rep.Episodes) != 5 {
		t.Fatalf("not clean:\n%s", text.String())
	}
	for _, e := range rep.Episodes {
		if e.Fallbacks != 0 || e.Runner.Failure != "" || e.Decisions == 0 || e.RunError != "" {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
}

// The LangGraph.js example plays A3C9-1 under the four paradigms on the
// first test seed (node is the slow part of the suite): every decision is external (G_fb == 0), no protocol violation,
// and, since its greedy rule is the Python example's, the same decisions
// as the Go twin greedy_py.
func TestLangGraphRunnerEpisodes(t *testing.T) {
	command := langGraphRunner(t)
	t.Parallel()
	seeds := plantOf(t, faultInstance).Inst.Seeds.Test[:1]
	for _, mode := range coord.Builtins() {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/s%d", mode.ID, seed), func(t *testing.T) {
				t.Parallel()
				lg, stderr := playRunner(t, command, mode, seed)
				if lg.metrics.GFb != 0 || lg.metrics.Status == "" {
					t.Errorf("metrics: %+v", lg.metrics)
				}
				a := choices(t, lg.decisions, coord.SourceExternal) // fails on any fallback
				if len(a) == 0 {
					t.Fatal("no decision")
				}
				twin, err := policy.New("greedy_py", seed)
				if err != nil {
					t.Fatal(err)
				}
				goRun := play(t, twin, mode, seed)
				b := choices(t, goRun.decisions, coord.SourceBuiltin)
				if len(a) != len(b) {
					t.Fatalf("langgraph %d decisions, go twin %d", len(a), len(b))
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("decision %d: langgraph %q, go twin %q", i, a[i], b[i])
					}
				}
				if !strings.Contains(stderr, "langgraph_runner: episode over: status "+lg.metrics.Status) {
					t.Errorf("the runner did not see episode_end:\n%s", stderr)
				}
			})
		}
	}
}
