package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/export/inspect/inspectschema"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
)

// exportRuns makes one directory of each kind the export reads, small:
// a des run and a des suite of a built-in controller, a des run of the
// LLM controller against the stub model, a silo run and a silo suite of
// the scripted team, a silo run and a silo suite of LLM agents against
// the gather stub. It returns them in that order.
func exportRuns(t *testing.T) []string {
	t.Helper()
	tmp := t.TempDir()
	desStub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	dsrv := httptest.NewServer(desStub)
	t.Cleanup(dsrv.Close)
	ssrv := stubmodel.NewServer(silogather.Model{Solve: silogather.PromptSolver}.Handle)
	t.Cleanup(ssrv.Close)
	dirs := map[string][]string{
		"desrun":    {"des", "run", "--instance", "A3C9-1"},
		"dessuite":  {"des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized,hierarchical", "--seeds", "1,2"},
		"desllm":    {"des", "run", "--instance", "A3C9-1", "--controller", "llm", "--llm-model", "stub-des", "--llm-base-url", dsrv.URL + "/v1"},
		"silorun":   {"silo", "run", "--task", "I-01", "--agents", "3"},
		"silosuite": {"silo", "suite", "--tasks", "I-01", "--agents", "2", "--protocols", "p2p", "--seeds", "1,2"},
		"silollm":   {"silo", "run", "--agent", "llm", "--llm-model", "stub-silo", "--llm-base-url", ssrv.URL, "--task", "I-01", "--agents", "2"},
		"silollmsuite": {"silo", "suite", "--agent", "llm", "--llm-model", "stub-silo", "--llm-base-url", ssrv.URL,
			"--tasks", "I-01", "--agents", "2", "--protocols", "broadcast", "--no-baseline"},
	}
	var out []string
	for _, name := range []string{"desrun", "dessuite", "desllm", "silorun", "silosuite", "silollm", "silollmsuite"} {
		d := filepath.Join(tmp, name)
		if msg, err := run(t, append(dirs[name], "--out", d)...); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, msg)
		}
		out = append(out, d)
	}
	return out
}

// inspectLogName is Inspect's pattern of JSON log names (log_file_pattern
// of its log listing), with its <timestamp>_<task>_<id>.json layout.
var inspectLogName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[^_]*_[^_]+_[0-9a-f]{22}\.json$`)

// evalLog is the part of an eval log the test checks.
type evalLog struct {
	Version int    `json:"version"`
	Status  string `json:"status"`
	Eval    struct {
		Task    string `json:"task"`
		Model   string `json:"model"`
		Created string `json:"created"`
		Dataset struct {
			Samples int `json:"samples"`
		} `json:"dataset"`
	} `json:"eval"`
	Results struct {
		TotalSamples int `json:"total_samples"`
		Scores       []struct {
			Name    string                         `json:"name"`
			Metrics map[string]struct{ Value any } `json:"metrics"`
		} `json:"scores"`
	} `json:"results"`
	Stats struct {
		ModelUsage map[string]struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"model_usage"`
	} `json:"stats"`
	Samples []struct {
		ID       string `json:"id"`
		Epoch    int    `json:"epoch"`
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []any  `json:"tool_calls"`
		} `json:"messages"`
		Scores map[string]struct {
			Value float64 `json:"value"`
		} `json:"scores"`
	} `json:"samples"`
}

// TestExportInspect: the eval logs of real runs of every kind validate
// against Inspect's log schema, are named as Inspect names JSON logs,
// group the runs as docs/export.md says, carry the metrics, transcripts
// and token usage, and are the same bytes when exported again.
func TestExportInspect(t *testing.T) {
	dirs := exportRuns(t)
	out := filepath.Join(t.TempDir(), "logs")
	if msg, err := run(t, append(append([]string{"export", "inspect"}, dirs...), "--out", out)...); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	} else if !strings.Contains(msg, "inspect view --log-dir "+out) {
		t.Errorf("no viewer hint: %s", msg)
	}
	sch, err := inspectschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	byModel := map[string]evalLog{}
	for _, e := range ents {
		if !inspectLogName.MatchString(e.Name()) {
			t.Errorf("%s: not named as Inspect names JSON logs", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := inspectschema.Validate(sch, b); err != nil {
			t.Errorf("%s does not validate against Inspect's log schema: %v", e.Name(), err)
		}
		var l evalLog
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		if l.Version != 2 || l.Status != "success" || l.Eval.Created != "1970-01-01T00:00:00+00:00" ||
			l.Results.TotalSamples != len(l.Samples) || len(l.Samples) == 0 {
			t.Errorf("%s: version %d status %s created %s, %d samples of %d", e.Name(), l.Version, l.Status, l.Eval.Created, len(l.Samples), l.Results.TotalSamples)
		}
		byModel[l.Eval.Task+" "+l.Eval.Model+" "+itoa(len(l.Samples))] = l
	}
	// One log per directory (the suites have one controller and model each).
	want := []string{
		"coordbench-des coordbench/builtin-rule 1", "coordbench-des coordbench/builtin-rule 4", "coordbench-des stub-des 1",
		"coordbench-silo coordbench/scripted 1", "coordbench-silo coordbench/scripted-reference 4",
		"coordbench-silo coordbench/unrecorded-model 1", "coordbench-silo stub-silo 1",
	}
	if len(byModel) != len(want) {
		t.Errorf("logs %v, want %v", keys(byModel), want)
	}
	for _, k := range want {
		if _, ok := byModel[k]; !ok {
			t.Errorf("no log %q among %v", k, keys(byModel))
		}
	}
	// The des suite: two paradigms, two seeds each as epochs 1 and 2, the
	// 15 metrics as scores with their mean.
	suite := byModel["coordbench-des coordbench/builtin-rule 4"]
	if suite.Eval.Dataset.Samples != 2 || suite.Samples[0].ID != "A3C9-1__centralized" || suite.Samples[1].Epoch != 2 ||
		len(suite.Samples[0].Scores) != 15 || len(suite.Results.Scores) != 15 || suite.Results.Scores[0].Name != "G_mk" {
		t.Errorf("des suite log: %d samples, first %s, scores %d/%d", suite.Eval.Dataset.Samples, suite.Samples[0].ID,
			len(suite.Samples[0].Scores), len(suite.Results.Scores))
	}
	if m := suite.Samples[0].Messages; len(m) != 1 || m[0].Role != "system" || !strings.Contains(m[0].Content, "built-in") {
		t.Errorf("built-in controller's transcript: %+v", m)
	}
	// The LLM runs: the prompts and replies, and the tokens by model.
	des := byModel["coordbench-des stub-des 1"]
	if m := des.Samples[0].Messages; len(m) < 3 || m[0].Role != "system" || m[1].Role != "user" || m[2].Role != "assistant" ||
		!strings.Contains(m[2].Content, "action") || des.Stats.ModelUsage["stub-des"].InputTokens == 0 {
		t.Errorf("des LLM log: %d messages, usage %v", len(m), des.Stats.ModelUsage)
	}
	silo := byModel["coordbench-silo stub-silo 1"]
	if m := silo.Samples[0].Messages; len(m) < 3 || !strings.HasPrefix(m[1].Content, "[round 1 · agent 0] ") ||
		silo.Stats.ModelUsage["stub-silo"].OutputTokens == 0 || silo.Samples[0].Scores["S"].Value != 1 {
		t.Errorf("silo LLM log: %d messages, usage %v, S %v", len(m), silo.Stats.ModelUsage, silo.Samples[0].Scores["S"])
	}
	if u := byModel["coordbench-silo coordbench/unrecorded-model 1"].Stats.ModelUsage; len(u) != 0 {
		t.Errorf("a run whose model is not recorded has usage under a made-up name: %v", u)
	}
	scripted := byModel["coordbench-silo coordbench/scripted 1"].Samples[0].Messages
	if len(scripted) < 3 || scripted[1].Role != "assistant" || len(scripted[1].ToolCalls) != 1 || scripted[2].Role != "tool" {
		t.Errorf("scripted team's transcript: %+v", scripted[:min(3, len(scripted))])
	}

	// Again: the same bytes; into an existing --out only with --force.
	again := filepath.Join(t.TempDir(), "again")
	if msg, err := run(t, append(append([]string{"export", "inspect"}, dirs...), "--out", again)...); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	sameTree(t, out, again)
	if _, err := run(t, "export", "inspect", dirs[0], "--out", out); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an existing --out: %v", err)
	}
	if msg, err := run(t, "export", "inspect", dirs[0], "--out", out, "--force", "--created", "2026-12-06T04:00:00Z"); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "2026-12-06T04-00-00+00-00_coordbench-des_") {
		t.Errorf("--force --created: %v", ents)
	}
}

// TestExportJSONL: one flat record per run with every metric as a
// top-level number, the same bytes on a rerun; an --out directory holds
// runs.jsonl; an existing file is replaced only with --force.
func TestExportJSONL(t *testing.T) {
	dirs := exportRuns(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "runs.jsonl")
	args := append(append([]string{"export", "inspect", "--format", "jsonl"}, dirs...), "--out", file)
	if msg, err := run(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		recs = append(recs, r)
	}
	// 1 + 4 des runs and 1 LLM des run; 1 + 4 silo scripted runs (2 seeds ×
	// N 2 and their merged N 1 baselines), 1 + 1 silo LLM runs.
	if len(recs) != 13 {
		t.Fatalf("%d records, want 13", len(recs))
	}
	for _, r := range recs {
		switch r["benchmark"] {
		case "des":
			if _, ok := r["G_mk"].(float64); !ok || r["instance"] != "A3C9-1" || r["status"] == nil || r["controller"] == nil {
				t.Errorf("des record: %v", r)
			}
		case "silo":
			if _, ok := r["S"].(float64); !ok || r["task"] != "I-01" || r["protocol"] == nil || r["agent"] == nil {
				t.Errorf("silo record: %v", r)
			}
		default:
			t.Errorf("record of no benchmark: %v", r)
		}
	}
	if recs[5]["model"] != "stub-des" || recs[5]["input_tokens"].(float64) == 0 || recs[5]["model_recorded"] != true {
		t.Errorf("LLM des record: %v", recs[5])
	}
	if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an existing file: %v", err)
	}
	if msg, err := run(t, append(args, "--force")...); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if b2, _ := os.ReadFile(file); !bytes.Equal(b, b2) {
		t.Error("a rerun wrote other bytes")
	}
	dir := filepath.Join(tmp, "dir")
	os.Mkdir(dir, 0o755)
	if msg, err := run(t, "export", "inspect", "--format", "jsonl", dirs[0], "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if b3, err := os.ReadFile(filepath.Join(dir, "runs.jsonl")); err != nil || !bytes.Equal(b3, b[:bytes.IndexByte(b, '\n')+1]) {
		t.Errorf("--out DIR: %v\n%s", err, b3)
	}
}

// TestExportBadInput: what is not a run, or a damaged one, is an error
// naming the directory or file; nothing is written.
func TestExportBadInput(t *testing.T) {
	tmp := t.TempDir()
	runDir := filepath.Join(tmp, "run")
	if msg, err := run(t, "des", "run", "--instance", "A3C9-1", "--out", runDir); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	bad := filepath.Join(tmp, "bad")
	os.Mkdir(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "manifest.json"), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(bad, "metrics.json"), []byte(`{"instance": "x", `), 0o644)
	out := filepath.Join(tmp, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "inspect", filepath.Join(tmp, "none"), "--out", out}, "no such file"},
		{[]string{"export", "inspect", empty, "--out", out}, "is not a coordbench run or suite directory"},
		{[]string{"export", "inspect", filepath.Join(runDir, "metrics.json"), "--out", out}, "is not a directory"},
		{[]string{"export", "inspect", bad, "--out", out}, "metrics.json: not the JSON coordbench writes"},
		{[]string{"export", "inspect", runDir}, "--out"},
		{[]string{"export", "inspect", runDir, "--out", out, "--format", "csv"}, `--format "csv"`},
		{[]string{"export", "inspect", runDir, "--out", out, "--created", "yesterday"}, "--created"},
		{[]string{"export", "inspect", runDir, runDir, "--out", out}, "give each directory once"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args[2:], err, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed export left --out")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// sameTree fails unless directories a and b hold the same files, byte for byte.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	ea, _ := os.ReadDir(a)
	eb, _ := os.ReadDir(b)
	if len(ea) != len(eb) {
		t.Fatalf("%d files against %d", len(ea), len(eb))
	}
	for i := range ea {
		x, _ := os.ReadFile(filepath.Join(a, ea[i].Name()))
		y, _ := os.ReadFile(filepath.Join(b, eb[i].Name()))
		if ea[i].Name() != eb[i].Name() || !bytes.Equal(x, y) {
			t.Errorf("%s and %s differ", ea[i].Name(), eb[i].Name())
		}
	}
}
