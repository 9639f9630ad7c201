package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/task"
)

func TestSiloCommands(t *testing.T) {
	out, err := run(t, "silo", "tasks")
	if err != nil || strings.Count(out, "\n") != 31 || !strings.Contains(out, "III-30") {
		t.Fatalf("silo tasks: %v\n%s", err, out)
	}
	// An official instance written in the published format loads back with
	// the same answers, and runs from the file.
	file := filepath.Join(t.TempDir(), "I-06_n5.json")
	if _, err := run(t, "silo", "instance", "--task", "I-06", "--agents", "5", "--mode", "official", "--task-file", file); err != nil {
		t.Fatal(err)
	}
	in, err := task.LoadFile(file)
	if err != nil || in.N != 5 {
		t.Fatalf("task file: %v", err)
	}
	for k, p := range []string{"p2p", "broadcast", "sfs"} {
		dir := filepath.Join(t.TempDir(), p)
		args := []string{"silo", "run", "--task-file", file, "--protocol", p, "--out", dir}
		format := "str" // the default; the last protocol runs with json
		if k == 2 {
			format = "json"
			args = append(args, "--message-format", format)
		}
		if out, err := run(t, args...); err != nil {
			t.Fatalf("%s: %v\n%s", p, err, out)
		}
		var res struct {
			S       float64 `json:"S"`
			Success bool    `json:"success"`
			Format  string  `json:"message_format"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "result.json"))
		if err := json.Unmarshal(b, &res); err != nil || res.S != 1 || !res.Success || res.Format != format {
			t.Errorf("%s: result %s", p, b)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "calls.jsonl"))
		if !strings.Contains(string(log), `"tool":"submit_result"`) {
			t.Errorf("%s: tool-call log lacks submissions", p)
		}
		if st, err := os.Stat(filepath.Join(dir, "run.db")); err != nil || st.Size() == 0 {
			t.Errorf("%s: no run database", p)
		}
	}
	out, err = run(t, "silo", "instance", "--task", "II-11", "--agents", "3", "--json")
	if err != nil || !strings.Contains(out, `"expected"`) {
		t.Errorf("instance --json: %v", err)
	}
	for _, args := range [][]string{
		{"silo", "run", "--protocol", "carrier-pigeon"},
		{"silo", "run", "--agent", "llm"},
		{"silo", "run", "--message-format", "yaml"},
		{"silo", "suite", "--message-format", "yaml", "--tasks", "I-01", "--agents", "2", "--out", t.TempDir()},
		{"silo", "instance", "--task", "IV-99"},
		{"silo", "instance", "--mode", "official", "--agents", "3"},
	} {
		if _, err := run(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestSiloImport(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"I-07", "II-18", "III-25"} {
		in, err := task.Official(id, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.WriteFile(filepath.Join(dir, in.FileName())); err != nil {
			t.Fatal(err)
		}
	}
	seeded, _ := task.Seeded("I-01", 3, 9)
	seeded.WriteFile(filepath.Join(dir, "I-01_n3.json"))
	out, err := run(t, "silo", "import", dir)
	if err != nil || strings.Count(out, "identical") != 3 || !strings.Contains(out, "not a published agent count") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// A file whose expected output was tampered with is reported.
	b, _ := os.ReadFile(filepath.Join(dir, "I-07_n5.json"))
	var doc map[string]any
	json.Unmarshal(b, &doc)
	exp := doc["expected_output"].(map[string]any)
	vals := exp["per_agent_values"].([]any)
	vals[0] = 12345.0
	doc["agent_configs"].([]any)[0].(map[string]any)["expected_output"] = 12345.0
	b, _ = json.Marshal(doc)
	os.WriteFile(filepath.Join(dir, "I-07_n5.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "broken_n2.json"), []byte(`{"case_id": 7}`), 0o644)
	out, err = run(t, "silo", "import", dir)
	if err == nil || !strings.Contains(out, "DISAGREE") || !strings.Contains(out, "broken_n2.json") {
		t.Errorf("tampered and broken files not reported: %v\n%s", err, out)
	}
	if _, err := run(t, "silo", "import", t.TempDir()); err == nil {
		t.Error("an empty directory imported")
	}
}
