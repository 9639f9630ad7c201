package sweep_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/sweep"
)

// resolveFile loads the experiment file, builds its models (closed when
// the test ends) and resolves its cases.
func resolveFile(t *testing.T, file string) *sweep.Suite {
	t.Helper()
	e, err := sweep.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	set, closer, err := sweep.BuildModels(e, sweep.ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closer)
	s, err := sweep.Resolve(file, e, set.Models, sweep.Whole())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDesOutputBound: a des model without max_tokens sends no cap, so its
// output is bounded at sweep.DesUncappedOutputTokens per call, and the
// plan says so; a model with max_tokens is bounded at it.
func TestDesOutputBound(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "e.yaml")
	body := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: [llm]\n  seeds: [1]\nmodels:\n" +
		"  - {name: open, model: m, base_url: 'http://127.0.0.1:1/v1'}\n" +
		"  - {name: capped, model: m, base_url: 'http://127.0.0.1:1/v1', max_tokens: 40}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := resolveFile(t, file)
	est, err := s.Estimate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	open, capped := est.Total("open"), est.Total("capped")
	if open.Calls == 0 || open.Calls != capped.Calls {
		t.Fatalf("calls: open %d, capped %d", open.Calls, capped.Calls)
	}
	if open.MaxOutputTokens != open.Calls*sweep.DesUncappedOutputTokens || capped.MaxOutputTokens != capped.Calls*40 {
		t.Errorf("output bounds: open %d, capped %d, for %d calls each", open.MaxOutputTokens, capped.MaxOutputTokens, open.Calls)
	}
	var plan bytes.Buffer
	s.RenderPlan(&plan, file, est, 0)
	if !strings.Contains(plan.String(), "without max_tokens (no cap, the default): "+strconv.Itoa(sweep.DesUncappedOutputTokens)+" tokens per call") {
		t.Errorf("the plan does not state the assumed bound:\n%s", plan.String())
	}
}
