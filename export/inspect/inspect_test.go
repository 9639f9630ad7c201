package inspect

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
)

// fabricated runs: one des run of an LLM controller whose reply is hostile
// text, two seeds of one silo case with native tool calls (one with
// arguments that are not JSON) and a NaN metric.
func fabricated() []Run {
	hostile := "\x1b[2J</script><b>\"quoted\"</b>\u2028\x00 {\"action\": 1}"
	des := Run{Benchmark: BenchDES, Source: "runs/d", CaseID: "X__centralized__llm-m__s3", Sample: "X__centralized", Seed: 3,
		Fields:     map[string]any{"instance": "X", "paradigm": "centralized", "controller": "llm", "model": "m", "framework": "graph"},
		Controller: "llm", Model: "m", ModelRecorded: true, Status: "done",
		Metrics: []Metric{{Name: "G_mk", Value: 12.5}, {Name: "G_cj", Value: 4, Int: true}},
		Usage:   Usage{Calls: 2, InputTokens: 100, OutputTokens: 7, CachedInputTokens: 40},
		Messages: []Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "{}"},
			{Role: "assistant", Content: hostile}},
		Summary: "status done", Meta: map[string]any{"seed": 3},
	}
	silo := func(seed uint64, args string) Run {
		return Run{Benchmark: BenchSilo, Source: "runs/s", CaseID: "I-01__n2__p2p__llm__seeded-s" + string(rune('0'+seed)),
			Sample: "I-01__n2__p2p", Seed: seed, Controller: "llm", Model: "a+b", ModelRecorded: true, Status: "done",
			Fields:   map[string]any{"task": "I-01", "n": 2, "protocol": "p2p", "agent": "llm", "mode": "seeded"},
			Metrics:  []Metric{{Name: "S", Value: 1}, {Name: "C", Value: math.NaN()}},
			ByModel:  map[string]Usage{"a": {Calls: 1, InputTokens: 5, OutputTokens: 1}, "b": {Calls: 1, InputTokens: 6, OutputTokens: 2}},
			Usage:    Usage{Calls: 2, InputTokens: 11, OutputTokens: 3},
			Messages: []Message{chatMessage(llmMessage("assistant", "", "c1", "send_message", args), "[round 1 · agent 0] "), {Role: "tool", Content: "ok", ToolCallID: "c1"}},
		}
	}
	return []Run{silo(2, `{"target_id": 1}`), des, silo(1, `not json`)}
}

// TestLogsValidate: logs of fabricated runs, hostile text and all,
// validate against Inspect's schema, group and order as documented, and
// encode to the same bytes twice.
func TestLogsValidate(t *testing.T) {
	sch := compileSchema(t)
	logs, err := Logs(fabricated(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || logs[0].Eval.Task != "coordbench-silo" || logs[1].Eval.Task != "coordbench-des" {
		t.Fatalf("logs %d: want the silo directory's then the des directory's", len(logs))
	}
	s := logs[0]
	if len(s.Samples) != 2 || s.Samples[0].Epoch != 1 || s.Samples[1].Epoch != 2 || !strings.Contains(s.Samples[0].Input, "seed 1") ||
		s.Eval.Dataset.Samples != 1 || s.Eval.Config["epochs"] != 2 {
		t.Errorf("silo samples: %+v", s.Samples)
	}
	if _, ok := s.Samples[0].Scores["C"]; ok {
		t.Error("a NaN metric became a score")
	}
	if u := s.Stats.ModelUsage; u["a"].InputTokens != 10 || u["b"].TotalTokens != 16 {
		t.Errorf("usage by model: %+v", u)
	}
	if tc := s.Samples[0].Messages[0].ToolCalls; len(tc) != 1 || tc[0].ParseError == nil {
		t.Errorf("seed 1's arguments were not JSON: %+v", tc)
	}
	if u := logs[1].Stats.ModelUsage["m"]; u.InputTokensCacheRead == nil || *u.InputTokensCacheRead != 40 {
		t.Errorf("des usage: %+v", u)
	}
	for i := range logs {
		var a, b bytes.Buffer
		if err := Encode(&a, &logs[i]); err != nil {
			t.Fatal(err)
		}
		validate(t, sch, logs[i].Name(), a.Bytes())
		again, _ := Logs(fabricated(), Options{})
		Encode(&b, &again[i])
		if !bytes.Equal(a.Bytes(), b.Bytes()) || again[i].Name() != logs[i].Name() {
			t.Errorf("log %d: other bytes the second time", i)
		}
	}
	var a bytes.Buffer
	Encode(&a, &logs[1])
	var back EvalLog
	if err := json.Unmarshal(a.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.String(), `\u001b[2J</script>`) || strings.Contains(a.String(), "\x1b") {
		t.Errorf("the hostile reply is not one escaped JSON string:\n%s", a.String())
	}
	if _, err := Logs(fabricated(), Options{Created: "yesterday"}); err == nil {
		t.Error("a created time that is no time was accepted")
	}
	l, err := Logs(fabricated(), Options{Created: "2026-12-06T05:00:00+01:00"})
	if err != nil || !strings.HasPrefix(l[0].Name(), "2026-12-06T05-00-00+01-00_coordbench-silo_") {
		t.Errorf("created: %v %s", err, l[0].Name())
	}
}

// TestJSONLRecords: one flat line per run in order, metrics at the top
// level, NaN as null.
func TestJSONLRecords(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSONL(&b, fabricated()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil {
		t.Fatal(err)
	}
	if r["G_mk"] != 12.5 || r["G_cj"] != 4.0 || r["instance"] != "X" || r["input_tokens"] != 100.0 || r["model"] != "m" {
		t.Errorf("des record: %v", r)
	}
	if !strings.Contains(lines[0], `"C":null`) {
		t.Errorf("NaN: %s", lines[0])
	}
}

// TestReadBadInput: what is not a run, damaged files and a line past the
// cap are errors naming the file; nothing panics.
func TestReadBadInput(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, files map[string]string) string {
		d := filepath.Join(tmp, name)
		os.MkdirAll(d, 0o755)
		for f, c := range files {
			os.WriteFile(filepath.Join(d, f), []byte(c), 0o644)
		}
		return d
	}
	okMetrics := `{"instance":"X","paradigm":"centralized","controller":"llm","model":"m","seed":1,"status":"done","secondary":{}}`
	long := strings.Repeat("x", MaxLineBytes+1)
	for _, c := range []struct {
		dir, want string
	}{
		{mk("empty", nil), "not a coordbench run or suite directory"},
		{mk("badjson", map[string]string{"manifest.json": "{}", "metrics.json": "[1,"}), "metrics.json: not the JSON coordbench writes"},
		{mk("nofields", map[string]string{"manifest.json": "{}", "metrics.json": "{}"}), "lacks instance"},
		{mk("nodecisions", map[string]string{"manifest.json": "{}", "metrics.json": okMetrics}), "decisions.jsonl"},
		{mk("badline", map[string]string{"manifest.json": "{}", "metrics.json": okMetrics, "decisions.jsonl": "{\"step\":0}\n{oops\n"}), "decisions.jsonl line 2"},
		{mk("longline", map[string]string{"manifest.json": "{}", "metrics.json": okMetrics, "decisions.jsonl": long}), "longer than"},
		{mk("silo", map[string]string{"result.json": `{"task":"I-01","n":2,"protocol":"p2p","agents":[]}`, "calls.jsonl": ""}), "lacks task, n, protocol"},
		{mk("suite", map[string]string{"suite.json": "{}"}), "not a coordbench run"},
	} {
		_, err := Read(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", filepath.Base(c.dir), err, c.want)
		}
	}
	d := mk("suite2", map[string]string{"silo_suite.json": "{}"})
	os.MkdirAll(filepath.Join(d, "runs", "bad"), 0o755)
	os.MkdirAll(filepath.Join(d, "runs", ".tmp-inflight"), 0o755)
	if _, err := Read(d); err == nil || !strings.Contains(err.Error(), filepath.Join("runs", "bad")) {
		t.Errorf("a suite's damaged run: %v", err)
	}
	os.RemoveAll(filepath.Join(d, "runs", "bad"))
	if runs, err := Read(d); err != nil || len(runs) != 0 {
		t.Errorf("a suite with a run in flight only: %v %v", runs, err)
	}
}

func llmMessage(role, content, id, name, args string) llm.Message {
	return llm.Message{Role: role, Content: content, ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// TestSampleErrorAndCollisions: an aborted run's sample carries an error
// and still validates; two runs of one log with the same sample and seed
// (a setting the sample id leaves out) keep apart by their case ids.
func TestSampleErrorAndCollisions(t *testing.T) {
	sch := compileSchema(t)
	runs := fabricated()
	des := runs[1]
	des.Error = "the episode was aborted"
	twin := des
	twin.CaseID, twin.Error = "X__centralized__llm-m-strict__s3", ""
	logs, err := Logs([]Run{des, twin}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || len(logs[0].Samples) != 2 {
		t.Fatalf("%d logs", len(logs))
	}
	s := logs[0].Samples
	if s[0].ID != twin.CaseID || s[1].ID != des.CaseID || s[0].Epoch != 1 || s[1].Epoch != 1 ||
		s[1].Error == nil || s[1].Error.Message != des.Error || s[0].Error != nil {
		t.Errorf("samples %s/%d %s/%d, errors %v %v", s[0].ID, s[0].Epoch, s[1].ID, s[1].Epoch, s[0].Error, s[1].Error)
	}
	var b bytes.Buffer
	if err := Encode(&b, &logs[0]); err != nil {
		t.Fatal(err)
	}
	validate(t, sch, "aborted", b.Bytes())
}
