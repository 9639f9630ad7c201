package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/sweep"
)

// TestSweepPromptCachedCost: a server that reports prompt-cache hits
// (the stub reports the system prompt of every call as cached):
// decisions.jsonl records them per answer, and cost.csv prices them at
// price.cached_input, giving the hand-computed discounted cost; the same
// run without cached_input costs the undiscounted price (no discount
// given, none applied). A replay from the response cache costs nothing
// and bills no prompt-cached tokens, with the same decisions.jsonl.
func TestSweepPromptCachedCost(t *testing.T) {
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	stub.PromptCache = true
	srv := httptest.NewServer(stub)
	defer srv.Close()
	perCall := int64(despolicy.PromptCached(len(llmctl.SystemPrompt)))
	if perCall == 0 {
		t.Fatal("the system prompt is empty")
	}
	tmp := t.TempDir()
	exp := func(name, price string) string {
		file := filepath.Join(tmp, name+".yaml")
		body := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: llm\n  seeds: 1\n" +
			"llm:\n  model: m\n  base_url: " + srv.URL + "/v1\n  cache: " + name + ".db\n  price: " + price + "\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	discounted := exp("discounted", "{input: 2, output: 8, cached_input: 0.5}")
	plain := exp("plain", "{input: 2, output: 8}")

	if plan, err := run(t, "sweep", "plan", discounted); err != nil || !strings.Contains(plan, "estimates price every input token at price.input") {
		t.Errorf("plan with cached_input: %v\n%s", err, plan)
	}
	if plan, err := run(t, "sweep", "plan", plain); err != nil || strings.Contains(plan, "price.cached_input") {
		t.Errorf("plan without cached_input: %v\n%s", err, plan)
	}

	type result struct {
		cost  []string // cost.csv's row
		head  []string
		total map[string]string
		dir   string
	}
	sweepRun := func(file, out string) result {
		t.Helper()
		dir := filepath.Join(tmp, out)
		if o, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
			t.Fatalf("%v\n%s", err, o)
		}
		rows := csvRows(t, filepath.Join(dir, sweep.FileCost))
		if len(rows) != 2 {
			t.Fatalf("%s cost.csv: %v", out, rows)
		}
		return result{cost: rows[1], head: rows[0], total: totalRow(t, dir), dir: dir}
	}
	live := sweepRun(discounted, "live")

	// The hand computation, from the suite summary's counts.
	sum := summaryRows(t, live.dir)
	h := harness.SummaryHeader()
	if len(sum) != 1 {
		t.Fatalf("summary: %v", sum)
	}
	in, _ := strconv.ParseInt(col(t, h, sum[0], "prompt_tokens"), 10, 64)
	out, _ := strconv.ParseInt(col(t, h, sum[0], "completion_tokens"), 10, 64)
	calls, _ := strconv.ParseInt(col(t, h, sum[0], "llm_calls"), 10, 64)
	pc := calls * perCall
	if calls == 0 || pc >= in {
		t.Fatalf("%d calls, %d input tokens, %d prompt-cached", calls, in, pc)
	}
	want := strconv.FormatFloat((float64(in-pc)*2+float64(pc)*0.5+float64(out)*8)/1e6, 'f', 6, 64)
	undiscounted := wantCost(in, out, 2, 8)
	if want == undiscounted {
		t.Fatalf("the discount does not show in 6 decimals: %s", want)
	}

	// decisions.jsonl: every answer's prompt_cached_tokens.
	var logged int64
	caseDir := filepath.Join(live.dir, harness.SuiteCasesDir, live.cost[0])
	decisions := mustRead(t, filepath.Join(caseDir, harness.FileDecisions))
	for _, line := range bytes.Split(bytes.TrimSpace(decisions), []byte("\n")) {
		var a struct {
			Calls              int64 `json:"calls"`
			PromptCachedTokens int64 `json:"prompt_cached_tokens"`
		}
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if a.PromptCachedTokens != a.Calls*perCall {
			t.Errorf("audit line with %d calls has %d prompt-cached tokens, want %d each: %s", a.Calls, a.PromptCachedTokens, perCall, line)
		}
		logged += a.PromptCachedTokens
	}
	if logged != pc {
		t.Errorf("decisions.jsonl: %d prompt-cached tokens, want %d", logged, pc)
	}

	if got := col(t, live.head, live.cost, "prompt_cached_input_tokens"); got != strconv.FormatInt(pc, 10) {
		t.Errorf("cost.csv prompt_cached_input_tokens %s, want %d", got, pc)
	}
	if got := col(t, live.head, live.cost, "input_tokens"); got != strconv.FormatInt(in, 10) {
		t.Errorf("cost.csv input_tokens %s, want %d (prompt-cached included)", got, in)
	}
	if got := col(t, live.head, live.cost, "price_prompt_cached_input_usd_per_mtok"); got != "0.5" {
		t.Errorf("cost.csv prompt-cached price %s, want 0.5", got)
	}
	if got := col(t, live.head, live.cost, "cost_usd"); got != want {
		t.Errorf("cost.csv cost %s, want the discounted %s (undiscounted %s)", got, want, undiscounted)
	}
	if live.total["cost_usd"] != want || live.total["spent_usd"] != want || live.total["prompt_cached_input_tokens"] != strconv.FormatInt(pc, 10) {
		t.Errorf("cost_summary.csv total: %v, want cost %s", live.total, want)
	}
	if st, err := run(t, "sweep", "status", live.dir); err != nil || !strings.Contains(st, "spent: $"+want) {
		t.Errorf("status: %v\n%s", err, st)
	}

	// Without cached_input: no discount given, none applied.
	full := sweepRun(plain, "plain")
	if got := col(t, full.head, full.cost, "cost_usd"); got != undiscounted {
		t.Errorf("without cached_input: cost %s, want %s", got, undiscounted)
	}
	if got := col(t, full.head, full.cost, "prompt_cached_input_tokens"); got != strconv.FormatInt(pc, 10) {
		t.Errorf("without cached_input: prompt_cached_input_tokens %s, want %d", got, pc)
	}
	if got := col(t, full.head, full.cost, "price_prompt_cached_input_usd_per_mtok"); got != "2" {
		t.Errorf("without cached_input: prompt-cached price %s, want price.input 2", got)
	}

	// A replay from the response cache: free, the same audit.
	replay := sweepRun(discounted, "replay")
	if replay.total["cost_usd"] != "0.000000" || replay.total["calls"] != "0" || replay.total["prompt_cached_input_tokens"] != "0" ||
		replay.total["cached_input_tokens"] != strconv.FormatInt(in, 10) {
		t.Errorf("replay: %v", replay.total)
	}
	if b := mustRead(t, filepath.Join(replay.dir, harness.SuiteCasesDir, replay.cost[0], harness.FileDecisions)); !bytes.Equal(b, decisions) {
		t.Error("the replay's decisions.jsonl differs from the live run's")
	}
}

// TestSweepSiloPromptCachedCost: the same for a silo experiment: every
// reply of the server reports 1000 prompt tokens of which 600 came from
// its prompt cache; turns.jsonl records them in each turn's usage and
// cost.csv prices them at price.cached_input.
func TestSweepSiloPromptCachedCost(t *testing.T) {
	model := silogather.Model{Solve: silogather.PromptSolver}
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		r := model.Handle(req)
		r.Usage = &stubmodel.Usage{PromptTokens: 1000, CompletionTokens: 10, PromptCachedTokens: 600}
		return r
	})
	defer srv.Close()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "silo.yaml")
	exp := "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: 2\n  protocols: p2p\n  agent_kinds: [llm]\n  baseline: none\n" +
		"llm: {model: stub, base_url: \"" + srv.URL + "\", price: {input: 3, output: 12, cached_input: 0.75}}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "out")
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	} else if !strings.Contains(out, "prompt-cached)") {
		t.Errorf("sweep run does not print the prompt-cached tokens:\n%s", out)
	}
	rows := csvRows(t, filepath.Join(dir, sweep.FileCost))
	if len(rows) != 2 {
		t.Fatalf("cost.csv: %v", rows)
	}
	h, r := rows[0], rows[1]
	calls, _ := strconv.ParseInt(col(t, h, r, "calls"), 10, 64)
	if calls == 0 || col(t, h, r, "input_tokens") != strconv.FormatInt(calls*1000, 10) ||
		col(t, h, r, "prompt_cached_input_tokens") != strconv.FormatInt(calls*600, 10) {
		t.Errorf("cost.csv usage: %v", r)
	}
	want := strconv.FormatFloat(float64(calls)*(400*3+600*0.75+10*12)/1e6, 'f', 6, 64)
	if got := col(t, h, r, "cost_usd"); got != want {
		t.Errorf("cost %s, want %s", got, want)
	}
	turns := mustRead(t, filepath.Join(dir, sweep.CasesDir(sweep.BenchmarkSilo), r[0], llmagent.FileTurns))
	if n := bytes.Count(turns, []byte(`"usage":{"prompt_tokens":1000,"completion_tokens":10,"prompt_cached_tokens":600}`)); int64(n) != calls {
		t.Errorf("turns.jsonl records the prompt-cache hits of %d turns, want %d", n, calls)
	}
}
