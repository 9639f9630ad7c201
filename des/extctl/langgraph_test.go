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
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
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
	for _, pkg := range []string{"langgraph", "openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", pkg)); err != nil {
			testenv.Missing(t, "%s: run npm ci --prefix examples/langgraph-js (%v)", dir, err)
		}
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

// The LangGraph.js example's model-backed mode, end to end against the
// generic stub played in-process behind the model-call proxy
// (--llm-proxy-upstream stub:generic): every agent of every decision step
// asks the model through the proxy (a tool whose schema enumerates the
// legal indices), the generic stub answers with a legal index, and the
// episode is done with every decision's source llm and its calls in the
// notes; no answer falls back to the greedy choice.
func TestLangGraphRunnerLLM(t *testing.T) {
	command := langGraphRunner(t)
	t.Parallel()
	p, err := extctl.NewProxy(extctl.ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: "stub:generic"}},
		Options: llm.Options{Stubs: stubmodel.Policies{stubmodel.GenericPolicy()}, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Centralized: one agent per step, so that every decision is the
	// model's (under the other paradigms a legal answer, such as the
	// plant declining a fallback placement, may hand a decision to the
	// fallback on purpose).
	for _, mode := range coord.Builtins()[:1] {
		e := runExternal(t, "COORDBENCH_LANGGRAPH_LLM=1 "+command, mode, extctl.Config{Proxy: p, Timeout: 30 * time.Second})
		e.intact(t)
		if e.c.Failed() != nil || len(e.c.Violations()) != 0 || strings.Contains(e.stderr, "greedy choice") {
			t.Fatalf("%s: failed %v, violations %v\n%s", mode.ID, e.c.Failed(), e.c.Violations(), e.stderr)
		}
		if !strings.Contains(e.stderr, "model-backed mode") {
			t.Errorf("%s: the runner did not run its model-backed mode:\n%s", mode.ID, e.stderr)
		}
		type llmAudit struct {
			Step   int          `json:"step"`
			Source coord.Source `json:"source"`
			Calls  int          `json:"calls"`
			Model  string       `json:"model"`
		}
		audits := readLines[llmAudit](t, filepath.Join(e.dir, harness.FileDecisions))
		calls := map[int]int{}
		for _, a := range audits {
			if a.Source != coord.SourceLLM {
				t.Fatalf("%s: step %d decided by %s, want llm", mode.ID, a.Step, a.Source)
			}
			calls[a.Step] += a.Calls
		}
		for step, n := range calls {
			if n == 0 {
				t.Errorf("%s: step %d made no model call", mode.ID, step)
			}
		}
		sec := e.res.Metrics.Secondary
		if len(audits) == 0 || sec.LLMCalls < len(calls) || sec.PromptTokens == 0 {
			t.Errorf("%s: %d audits, %d steps, secondary %+v", mode.ID, len(audits), len(calls), sec)
		}
	}
	if tot := p.Totals(); tot.Failures != 0 || tot.Calls == 0 || tot.Unattributed != 0 {
		t.Errorf("proxy totals %+v", tot)
	}
}
