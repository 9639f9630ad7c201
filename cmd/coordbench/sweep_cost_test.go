package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/sweep"
)

// desStub serves the stub model that answers as the rule controller, on
// loopback, until the test ends.
func desStub(t *testing.T) *httptest.Server {
	t.Helper()
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stub)
	t.Cleanup(srv.Close)
	return srv
}

// runShardsAndCollect runs the n shards of the experiment file into tmp
// and collects them; it returns the shard directories and the merged one.
func runShardsAndCollect(t *testing.T, file, tmp string, n int) (shards []string, merged string) {
	t.Helper()
	for i := range n {
		dir := filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		if out, err := run(t, "sweep", "run", file, "--out", dir, "--shard", fmt.Sprintf("%d/%d", i, n)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		shards = append(shards, dir)
	}
	merged = filepath.Join(tmp, "merged")
	if out, err := run(t, append([]string{"sweep", "collect", "--out", merged}, shards...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return shards, merged
}

// csvRows reads a CSV file, header included.
func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(mustRead(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// col is the value of column name in row of a table with header h.
func col(t *testing.T, h, row []string, name string) string {
	t.Helper()
	i := slices.Index(h, name)
	if i < 0 {
		t.Fatalf("no column %s in %v", name, h)
	}
	return row[i]
}

// siloAgents are the parts of a silo case's cost, for teams up to 10.
var siloAgents = []string{"agent 0", "agent 1", "agent 2", "agent 3", "agent 4", "agent 5", "agent 6", "agent 7", "agent 8", "agent 9"}

// checkCostParts: cost_parts.csv splits every row of cost.csv into parts
// (roles or agents, named by partCol, each one of want) whose usage adds up
// to the row's exactly and whose costs add up to its cost (to the
// rounding of the printed dollars).
func checkCostParts(t *testing.T, dir, partCol string, want []string) {
	t.Helper()
	costs := csvRows(t, filepath.Join(dir, sweep.FileCost))
	parts := csvRows(t, filepath.Join(dir, sweep.FileCostParts))
	if len(parts) < len(costs) {
		t.Fatalf("cost_parts.csv has %d rows for cost.csv's %d", len(parts)-1, len(costs)-1)
	}
	cols := []string{"calls", "input_tokens", "prompt_cached_input_tokens", "output_tokens", "cached_calls", "cached_input_tokens", "cached_output_tokens", "cost_usd"}
	type key struct{ id, model string }
	sums := map[key][]float64{}
	for _, r := range parts[1:] {
		k := key{col(t, parts[0], r, "case_id"), col(t, parts[0], r, "model")}
		if p := col(t, parts[0], r, partCol); !slices.Contains(want, p) {
			t.Errorf("%v: %s %q", k, partCol, p)
		}
		s := sums[k]
		if s == nil {
			s = make([]float64, len(cols))
		}
		for i, c := range cols {
			v, err := strconv.ParseFloat(col(t, parts[0], r, c), 64)
			if err != nil {
				t.Fatal(err)
			}
			s[i] += v
		}
		sums[k] = s
	}
	for _, r := range costs[1:] {
		k := key{col(t, costs[0], r, "case_id"), col(t, costs[0], r, "model")}
		s := sums[k]
		if s == nil {
			t.Errorf("%v: no parts", k)
			continue
		}
		for i, c := range cols {
			v, _ := strconv.ParseFloat(col(t, costs[0], r, c), 64)
			if d := math.Abs(v - s[i]); (c == "cost_usd" && d > 1e-5) || (c != "cost_usd" && d != 0) {
				t.Errorf("%v: %s %v, the parts sum to %v", k, c, v, s[i])
			}
		}
		delete(sums, k)
	}
	if len(sums) > 0 {
		t.Errorf("parts of no cost.csv row: %v", sums)
	}
}

// wantCost is the cost of tokens at prices per million, as cost.csv
// writes it.
func wantCost(in, out int64, pin, pout float64) string {
	return strconv.FormatFloat((float64(in)*pin+float64(out)*pout)/1e6, 'f', 6, 64)
}

// twoModelDes is a des experiment with two models of different prices on
// the stub at url: 2 model-backed cases and one rule case.
func twoModelDes(url string) string {
	return "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: [llm, rule]\n  seeds: [1]\n" +
		"models:\n" +
		"  - name: cheap\n    model: stub-a\n    base_url: " + url + "\n    price: {input: 0.5, output: 1.5}\n" +
		"  - name: dear\n    model: stub-b\n    base_url: " + url + "\n    limits: {concurrency: 2}\n    price: {input: 3, output: 15}\n"
}

// TestSweepTwoModelsCost: one des experiment with two models of different
// prices against the stub: the cases of each model are told apart in ids
// and the model column; cost.csv prices each case's tokens exactly as the
// stub counted them (the summary's prompt and completion tokens); the plan
// estimates them exactly (the stub answers as the rule controller);
// --cost-limit stops before the case that would exceed it, says so and
// fails, and a rerun with a higher limit completes with summaries and
// cost files byte-identical to an unlimited run's, and to its shards
// collected; sweep status counts the cases.
func TestSweepTwoModelsCost(t *testing.T) {
	srv := desStub(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "two.yaml")
	if err := os.WriteFile(file, []byte(twoModelDes(srv.URL+"/v1")), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := run(t, "sweep", "plan", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, plan)
	}
	whole := filepath.Join(tmp, "whole")
	if out, err := run(t, "sweep", "run", file, "--out", whole, "--workers", "1"); err != nil || !strings.Contains(out, "cost total: $") {
		t.Fatalf("%v\n%s", err, out)
	}
	h := harness.SummaryHeader()
	prices := map[string][2]float64{"cheap": {0.5, 1.5}, "dear": {3, 15}}
	want := map[string]string{}
	var ids []string
	for _, r := range summaryRows(t, whole) {
		if col(t, h, r, "controller") != "llm" {
			continue
		}
		m := col(t, h, r, "model")
		in, _ := strconv.ParseInt(col(t, h, r, "prompt_tokens"), 10, 64)
		out, _ := strconv.ParseInt(col(t, h, r, "completion_tokens"), 10, 64)
		id := col(t, h, r, "case_id")
		want[id] = wantCost(in, out, prices[m][0], prices[m][1])
		ids = append(ids, id)
		if !strings.Contains(id, "__"+m+"-graph__") || in == 0 {
			t.Errorf("case %s of model %s, %d input tokens", id, m, in)
		}
		// The plan's estimate of the case is its real usage.
		if line := fmt.Sprintf("  %s  %s calls, %d in, %d out, $%s\n", id, col(t, h, r, "llm_calls"), in, out, want[id]); !strings.Contains(plan, line) {
			t.Errorf("plan lacks %q:\n%s", line, plan)
		}
	}
	if len(ids) != 2 || want[ids[0]] == want[ids[1]] {
		t.Fatalf("cases %v, costs %v", ids, want)
	}
	costs := csvRows(t, filepath.Join(whole, sweep.FileCost))
	if len(costs) != 3 {
		t.Fatalf("cost.csv: %v", costs)
	}
	for _, r := range costs[1:] {
		if got := col(t, costs[0], r, "cost_usd"); got != want[r[0]] {
			t.Errorf("%s costs %s, want %s", r[0], got, want[r[0]])
		}
	}
	sum := csvRows(t, filepath.Join(whole, sweep.FileCostSummary))
	if len(sum) != 4 || sum[3][0] != "total" || sum[1][0] != "cheap" || col(t, sum[0], sum[1], "cost_usd") != want[ids[0]] {
		t.Errorf("cost_summary.csv: %v", sum)
	}
	checkCostParts(t, whole, "role", []string{"plant", "area", "cell"})
	// The two models pair case by case within the suite; the rule cases,
	// which have no model, are left out.
	if out, err := run(t, "report", whole, "--compare-by", "model", "--format", "csv"); err != nil || !strings.Contains(out, "[model cheap]") || !strings.Contains(out, "[model dear]") || strings.Contains(out, ",rule,") {
		t.Errorf("report --compare-by model: %v\n%s", err, out)
	}

	// A limit above the first case's estimate and below both: the second
	// is not started, the free rule case is.
	first, _ := strconv.ParseFloat(want[ids[0]], 64)
	limited := filepath.Join(tmp, "limited")
	limit := strconv.FormatFloat(first*1.5, 'f', 6, 64)
	out, err := run(t, "sweep", "run", file, "--out", limited, "--workers", "1", "--cost-limit", limit)
	if err == nil || !strings.Contains(err.Error(), "cost limit $"+limit+" reached: $"+want[ids[0]]+" spent so far, 1 case not started") ||
		!strings.Contains(out, "  "+ids[1]+"\n") {
		t.Fatalf("limited run: %v\n%s", err, out)
	}
	st, err := run(t, "sweep", "status", limited)
	if err != nil || !strings.Contains(st, "cases: 3 planned, 2 done, 0 failed, 1 not started") || !strings.Contains(st, "spent: $"+want[ids[0]]) {
		t.Errorf("status: %v\n%s", err, st)
	}
	if out, err := run(t, "sweep", "run", file, "--out", limited, "--workers", "1", "--cost-limit", "100"); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}

	// des case reruns a case of the entry named apart from its model,
	// given the entry's name as --llm-label: the same artifacts.
	dear := ids[1]
	if !strings.Contains(dear, "__dear-graph__") {
		t.Fatalf("second case %s is not dear's", dear)
	}
	caseArgs := []string{"des", "case", "--suite-dir", whole, "--case-id", dear, "--llm-model", "stub-b", "--llm-base-url", srv.URL + "/v1"}
	if _, err := run(t, append(caseArgs, "--out", filepath.Join(tmp, "nolabel"))...); err == nil || !strings.Contains(err.Error(), `"stub-b-graph"`) {
		t.Errorf("des case without --llm-label: %v", err)
	}
	again := filepath.Join(tmp, "again")
	if out, err := run(t, append(caseArgs, "--llm-label", "dear", "--out", again)...); err != nil {
		t.Fatalf("des case --llm-label dear: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(again)
	if err != nil || len(entries) < 5 {
		t.Fatalf("des case wrote %d files: %v", len(entries), err)
	}
	for _, e := range entries {
		if e.Name() == harness.FileTiming || e.Name() == harness.FileEpisodeTiming { // wall-clock times
			continue
		}
		if a, b := mustRead(t, filepath.Join(whole, harness.SuiteCasesDir, dear, e.Name())), mustRead(t, filepath.Join(again, e.Name())); !bytes.Equal(a, b) {
			t.Errorf("des case's %s differs from the sweep's", e.Name())
		}
	}

	shards, merged := runShardsAndCollect(t, file, tmp, 2)
	// A shard run with other prices is not collected with the others.
	m, err := sweep.ReadMarker(shards[1])
	if err != nil {
		t.Fatal(err)
	}
	saved := mustRead(t, filepath.Join(shards[1], sweep.MarkerFile))
	m.Prices["dear"] = sweep.Price{Input: 30, Output: 150}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(shards[1], sweep.MarkerFile), b, 0o644)
	if _, err := run(t, "sweep", "collect", "--out", filepath.Join(tmp, "repriced"), shards[0], shards[1]); err == nil || !strings.Contains(err.Error(), "different model prices") {
		t.Errorf("collect of shards with different prices: %v", err)
	}
	os.WriteFile(filepath.Join(shards[1], sweep.MarkerFile), saved, 0o644)
	for _, f := range []string{harness.FileSuiteSummary, harness.FileSuiteAggregate, sweep.FileCost, sweep.FileCostSummary, sweep.FileCostParts} {
		a := mustRead(t, filepath.Join(whole, f))
		for _, d := range []string{limited, merged} {
			if b := mustRead(t, filepath.Join(d, f)); !bytes.Equal(a, b) {
				t.Errorf("%s of %s differs from the unlimited run's:\n%s\n---\n%s", f, filepath.Base(d), a, b)
			}
		}
	}
	st, err = run(t, append([]string{"sweep", "status"}, shards...)...)
	if err != nil || !strings.Contains(st, "cases: 3 planned, 3 done, 0 failed, 0 not started") || !strings.Contains(st, "shard-1 (shard 1/2)") {
		t.Errorf("status of shards: %v\n%s", err, st)
	}
}

// TestSweepSiloTwoModelsCost: a silo experiment with two models (two
// entries of one stub model, named apart) runs each case once per model,
// told apart by the agent label in ids and summaries; cost.csv prices the
// tokens of each run's turn log; its shards collected give the same
// summaries and cost files.
func TestSweepSiloTwoModelsCost(t *testing.T) {
	srv := stubmodel.NewServer(silogather.Model{Solve: silogather.PromptSolver}.Handle)
	defer srv.Close()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "silo.yaml")
	exp := "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: 2\n  protocols: p2p\n  agent_kinds: [llm]\n  baseline: none\n" +
		"models:\n  - {name: a, model: stub, base_url: \"" + srv.URL + "\", price: {input: 1, output: 2}}\n" +
		"  - {name: b, model: stub, base_url: \"" + srv.URL + "\", price: {input: 4, output: 8}}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "out")
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rows := csvRows(t, filepath.Join(dir, suite.FileSummary))
	h := rows[0]
	costs := csvRows(t, filepath.Join(dir, sweep.FileCost))
	if len(rows) != 3 || len(costs) != 3 {
		t.Fatalf("summary %v\ncost %v", rows, costs)
	}
	prices := map[string][2]float64{"llm-a": {1, 2}, "llm-b": {4, 8}}
	for k, r := range rows[1:] {
		agent := col(t, h, r, "agent")
		in, _ := strconv.ParseInt(col(t, h, r, "input_tokens"), 10, 64)
		out, _ := strconv.ParseInt(col(t, h, r, "output_tokens"), 10, 64)
		c := costs[k+1]
		if c[0] != r[0] || !strings.Contains(r[0], "__"+agent+"__") || in == 0 ||
			col(t, costs[0], c, "cost_usd") != wantCost(in, out, prices[agent][0], prices[agent][1]) {
			t.Errorf("case %s (%s, %d in, %d out): cost row %v", r[0], agent, in, out, c)
		}
	}
	_, merged := runShardsAndCollect(t, file, tmp, 2)
	checkCostParts(t, dir, "agent", siloAgents)
	for _, f := range []string{suite.FileSummary, suite.FileAggregate, sweep.FileCost, sweep.FileCostSummary, sweep.FileCostParts} {
		if a, b := mustRead(t, filepath.Join(dir, f)), mustRead(t, filepath.Join(merged, f)); !bytes.Equal(a, b) {
			t.Errorf("%s of the collected shards differs:\n%s\n---\n%s", f, a, b)
		}
	}
}

// TestSweepCachedCallsCostNothing: a second run of an experiment into a
// new directory, answered from the response cache, costs nothing: its
// calls and tokens are counted apart as cached.
func TestSweepCachedCallsCostNothing(t *testing.T) {
	srv := desStub(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "c.yaml")
	exp := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: llm\n  seeds: 1\n" +
		"llm:\n  model: m\n  base_url: " + srv.URL + "/v1\n  cache: cache.db\n  price: {input: 1, output: 1}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	var sums [2]map[string]string
	for i, d := range []string{"live", "replay"} {
		dir := filepath.Join(tmp, d)
		if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		sums[i] = totalRow(t, dir)
	}
	live, replay := sums[0], sums[1]
	if live["calls"] == "0" || live["cost_usd"] == "0.000000" || replay["calls"] != "0" || replay["cost_usd"] != "0.000000" ||
		replay["cached_calls"] == "0" || replay["cached_input_tokens"] != live["input_tokens"] || replay["cached_output_tokens"] != live["output_tokens"] ||
		live["prompt_cached_input_tokens"] != "0" {
		t.Errorf("live %v, replay %v", live, replay)
	}
}

// TestSweepSiloMixedTeamCost: an experiment's mixed team (silo.teams) of
// two models at two stub endpoints runs beside the models alone; cost.csv
// gives the team's cases a row per model, each model's tokens (its
// agents', as summary_models.csv counts them) at its own price, and the
// summary counts each case once; its shards collected give the same
// files, the per-model ones included.
func TestSweepSiloMixedTeamCost(t *testing.T) {
	gather := stubmodel.NewServer(silogather.Model{Solve: silogather.PromptSolver}.Handle)
	defer gather.Close()
	hasty := stubmodel.NewServer(silogather.Model{Solve: silogather.PromptSolver, Hasty: true}.Handle)
	defer hasty.Close()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "team.yaml")
	exp := "benchmark: silo\nsilo:\n  tasks: [I-01, II-11]\n  agents: 4\n  protocols: p2p\n  agent_kinds: [team]\n  baseline: none\n" +
		"  teams:\n    - agents: [{model: g, count: 3}, {model: h, count: 1}]\n" +
		"models:\n  - {name: g, model: stub-gather, base_url: \"" + gather.URL + "\", price: {input: 1, output: 2}}\n" +
		"  - {name: h, model: stub-hasty, base_url: \"" + hasty.URL + "\", price: {input: 4, output: 8}}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "out")
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	per := csvRows(t, filepath.Join(dir, suite.FileSummaryModels))
	costs := csvRows(t, filepath.Join(dir, sweep.FileCost))
	if len(per) != 1+2*2 || len(costs) != len(per) {
		t.Fatalf("summary by model %v\ncost %v", per, costs)
	}
	prices := map[string][2]float64{"g": {1, 2}, "h": {4, 8}}
	for k, r := range per[1:] {
		model := col(t, per[0], r, "model")
		in, _ := strconv.ParseInt(col(t, per[0], r, "input_tokens"), 10, 64)
		out, _ := strconv.ParseInt(col(t, per[0], r, "output_tokens"), 10, 64)
		c := costs[k+1]
		if c[0] != r[0] || col(t, costs[0], c, "model") != model || col(t, costs[0], c, "input_tokens") != strconv.FormatInt(in, 10) ||
			col(t, costs[0], c, "cost_usd") != wantCost(in, out, prices[model][0], prices[model][1]) {
			t.Errorf("case %s model %s (%d in, %d out): cost row %v", r[0], model, in, out, c)
		}
	}
	sum := csvRows(t, filepath.Join(dir, sweep.FileCostSummary))
	if got := col(t, sum[0], sum[3], "cases"); sum[3][0] != "total" || got != "2" {
		t.Errorf("cost summary counts %s cases in all: %v", got, sum)
	}
	_, merged := runShardsAndCollect(t, file, tmp, 2)
	checkCostParts(t, dir, "agent", siloAgents)
	for _, f := range []string{suite.FileSummary, suite.FileAggregate, suite.FileSummaryModels, suite.FileAggregateModels, sweep.FileCost, sweep.FileCostSummary, sweep.FileCostParts} {
		if a, b := mustRead(t, filepath.Join(dir, f)), mustRead(t, filepath.Join(merged, f)); !bytes.Equal(a, b) {
			t.Errorf("%s of the collected shards differs:\n%s\n---\n%s", f, a, b)
		}
	}
}
