package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

func roundTripInstances(t *testing.T) []*Instance {
	t.Helper()
	var out []*Instance
	for _, task := range All() {
		in, err := Official(task.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
		for _, n := range []int{1, 3} {
			s, err := Seeded(task.ID, n, 5)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
	}
	return out
}

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, in := range roundTripInstances(t) {
		path := filepath.Join(dir, in.FileName())
		if err := in.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("%s: trailing newline", path)
		}
		got, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		what := in.FileName()
		if got.Task != in.Task || got.N != in.N || got.Mode != ModeFile || got.Path != path {
			t.Errorf("%s: header %v %d %s %s", what, got.Task, got.N, got.Mode, got.Path)
		}
		if got.Template != in.Template || got.Hint != in.Hint {
			t.Errorf("%s: template or hint changed", what)
		}
		eqRaw := func(field string, a, b []json.RawMessage) {
			if len(a) != len(b) {
				t.Fatalf("%s: %s: %d vs %d", what, field, len(a), len(b))
			}
			for i := range a {
				if !bytes.Equal(a[i], b[i]) {
					t.Errorf("%s: %s[%d]: %s vs %s", what, field, i, truncate(a[i]), truncate(b[i]))
				}
			}
		}
		eqRaw("shards", got.Shards, in.Shards)
		eqRaw("expected", got.Expected, in.Expected)
		if !reflect.DeepEqual(got.Deps, in.Deps) || !bytes.Equal(got.Params, in.Params) {
			t.Errorf("%s: deps or params changed: %s vs %s", what, got.Params, in.Params)
		}
		for i := 0; i < in.N; i++ {
			for _, h := range []bool{true, false} {
				if got.Prompt(i, h) != in.Prompt(i, h) {
					t.Errorf("%s: agent %d prompt (hint %v) changed", what, i, h)
				}
			}
			if got.ShardText(i) != in.ShardText(i) {
				t.Errorf("%s: agent %d shard text changed", what, i)
			}
		}
		d1, d2 := got.Doc, in.Doc
		d1.UserPrompts = nil
		if !reflect.DeepEqual(d1, d2) {
			t.Errorf("%s: doc changed:\n%+v\n%+v", what, d1, d2)
		}
		if err := got.Verify(); err != nil {
			t.Errorf("%s: loaded instance does not verify: %v", what, err)
		}
		again, err := got.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("%s: writing the loaded instance gives different bytes", what)
		}
	}
}

// TestFileFormatMatchesPython re-dumps our files with Python's json.dump
// (indent=2, ensure_ascii=False): the bytes must be identical, and the file
// must carry the published keys in order.
func TestFileFormatMatchesPython(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	dir := t.TempDir()
	var paths []string
	for _, id := range []string{"I-04", "I-07", "II-13", "II-18", "III-25", "III-27", "III-29", "III-30"} {
		in, err := Official(id, 5)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, in.FileName())
		if err := in.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	script := `
import json, sys
keys = ["case_id", "case_name", "paradigm", "leetcode", "metadata", "task_description",
        "agent_configs", "expected_output", "evaluation_metrics"]
for p in sys.argv[1:]:
    raw = open(p, encoding="utf-8").read()
    case = json.loads(raw)
    assert list(case) == keys, (p, list(case))
    assert list(case["metadata"]) == ["num_agents", "optimal_topology", "optimal_message_count",
        "theoretical_complexity", "output_type", "is_segmented"], p
    assert list(case["agent_configs"][0]) == ["agent_id", "system_prompt", "user_prompt",
        "input_shard", "expected_output"], p
    assert list(case["expected_output"]) == ["type", "per_agent_values", "is_segmented",
        "verification_logic", "verification_logic_hint", "format_description"], p
    for c in case["agent_configs"]:
        assert c["expected_output"] == case["expected_output"]["per_agent_values"][c["agent_id"]]
        assert "{input_shard}" not in c["user_prompt"] and "{agent_id}" not in c["user_prompt"]
    again = json.dumps(case, indent=2, ensure_ascii=False)
    if again != raw:
        sys.exit(p + ": json.dumps(indent=2, ensure_ascii=False) gives different text")
print("ok")
`
	out, err := exec.Command(py, append([]string{"-c", script}, paths...)...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("python check: %v\n%s", err, out)
	}
}

func TestFileNonASCII(t *testing.T) {
	in, _ := Official("II-11", 2)
	b, err := in.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("→")) || bytes.Contains(b, []byte(`\u2192`)) {
		t.Error("non-ASCII text must be written as is (ensure_ascii=False)")
	}
}

func validFile(t *testing.T) map[string]any {
	t.Helper()
	in, _ := Official("III-27", 2)
	b, err := in.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadFileMalformed(t *testing.T) {
	dir := t.TempDir()
	cfg := func(m map[string]any, i int) map[string]any {
		return m["agent_configs"].([]any)[i].(map[string]any)
	}
	cases := []struct {
		name  string
		edit  func(m map[string]any)
		raw   string // used instead of the edited map when set
		field string
		msg   string
	}{
		{name: "not json", raw: `{"case_id": `, msg: "invalid JSON"},
		{name: "not object", raw: `[1]`, msg: "top level"},
		{name: "unknown case", edit: func(m map[string]any) { m["case_id"] = "IV-31" }, field: "case_id"},
		{name: "case id type", edit: func(m map[string]any) { m["case_id"] = 5 }, field: "case_id", msg: "want string"},
		{name: "no name", edit: func(m map[string]any) { delete(m, "case_name") }, field: "case_name", msg: "missing"},
		{name: "escape in name", edit: func(m map[string]any) { m["case_name"] = "x\x1b]0;pwned\x07" }, field: "case_name", msg: "U+001B, a control"},
		{name: "bidi in paradigm", edit: func(m map[string]any) { m["paradigm"] = "a\u202eb" }, field: "paradigm", msg: "U+202E"},
		{name: "num agents", edit: func(m map[string]any) { m["metadata"].(map[string]any)["num_agents"] = 3 }, field: "agent_configs", msg: "num_agents = 3"},
		{name: "num agents type", edit: func(m map[string]any) { m["metadata"].(map[string]any)["num_agents"] = "2" }, field: "metadata.num_agents"},
		{name: "segmented", edit: func(m map[string]any) { m["metadata"].(map[string]any)["is_segmented"] = true }, field: "metadata.is_segmented"},
		{name: "agent id", edit: func(m map[string]any) { cfg(m, 1)["agent_id"] = 0 }, field: "agent_configs[1].agent_id"},
		{name: "user prompt", edit: func(m map[string]any) { delete(cfg(m, 0), "user_prompt") }, field: "agent_configs[0].user_prompt", msg: "missing"},
		{name: "shard key", edit: func(m map[string]any) {
			cfg(m, 1)["input_shard"] = map[string]any{"users": map[string]any{"x": []any{1.5}}, "items": map[string]any{}}
		}, field: "agent_configs[1].input_shard.users", msg: "not an integer id"},
		{name: "shard value", edit: func(m map[string]any) {
			cfg(m, 0)["input_shard"] = map[string]any{"users": map[string]any{"1": []any{"a"}}, "items": map[string]any{}}
		}, field: "agent_configs[0].input_shard.users.1[0]", msg: "want float"},
		{name: "shard missing", edit: func(m map[string]any) { delete(cfg(m, 1), "input_shard") }, field: "agent_configs[1].input_shard", msg: "missing"},
		{name: "gold count", edit: func(m map[string]any) {
			eo := m["expected_output"].(map[string]any)
			eo["per_agent_values"] = eo["per_agent_values"].([]any)[:1]
		}, field: "expected_output.per_agent_values", msg: "1 values for 2 agents"},
		{name: "gold shape", edit: func(m map[string]any) {
			eo := m["expected_output"].(map[string]any)
			eo["per_agent_values"] = []any{"x", "x"}
			cfg(m, 0)["expected_output"] = "x"
			cfg(m, 1)["expected_output"] = "x"
		}, field: "expected_output.per_agent_values[0]"},
		{name: "config gold differs", edit: func(m map[string]any) { cfg(m, 1)["expected_output"] = []any{} }, field: "agent_configs[1].expected_output"},
		{name: "no configs", edit: func(m map[string]any) { delete(m, "agent_configs") }, field: "agent_configs", msg: "missing"},
		// Found by FuzzParseFile: it loaded, but no run, check or
		// write-back could use it (the write-back did not load).
		{name: "single agent without shard", raw: `{"case_id": "I-01", "case_name": "Global Max", "paradigm": "Paradigm I",
 "agent_config": {"user_prompt": "Find the max"}, "expected_output": 9}`, field: "agent_config.input_shard", msg: "missing"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		data := []byte(c.raw)
		if c.raw == "" {
			m := validFile(t)
			c.edit(m)
			data, _ = json.Marshal(m)
		}
		os.WriteFile(path, data, 0o644)
		_, err := LoadFile(path)
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want *FileError", c.name, err)
			continue
		}
		if fe.Path != path || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: got %q (field %q), want field %q and message containing %q", c.name, err, fe.Field, c.field, c.msg)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", c.name, err)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file loaded")
	}
}

// TestLoadSingleAgentVariant: a file with agent_config and a raw gold, as
// the published init_case accepts.
func TestLoadSingleAgentVariant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "I-01_n1.json")
	os.WriteFile(path, []byte(`{"case_id": "I-01", "case_name": "Global Max", "paradigm": "Paradigm I",
 "agent_config": {"user_prompt": "Find the max of [3, 9, -2]", "input_shard": [3, 9, -2]},
 "expected_output": 9}`), 0o644)
	in, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if in.N != 1 || string(in.Expected[0]) != "9" || in.Prompt(0, true) != "Find the max of [3, 9, -2]" || in.Template != "Global Max" {
		t.Fatalf("loaded %+v", in)
	}
	if err := in.Verify(); err != nil {
		t.Error(err)
	}
}

// TestLoadPublishedStyleIII25: a file whose wording is not ours still
// yields III-25's centroids from its description, and verifies.
func TestLoadPublishedStyleIII25(t *testing.T) {
	in, _ := Official("III-25", 2)
	b, _ := in.MarshalFile()
	var m map[string]any
	json.Unmarshal(b, &m)
	m["task_description"] = "K-means. Initial centroids: " + pyvalue.Str(in.params) + "\nYour data {input_shard}"
	data, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), "III-25_n2.json")
	os.WriteFile(path, data, 0o644)
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Params, in.Params) {
		t.Fatalf("params %s, want %s", got.Params, in.Params)
	}
	if got.Hint != "" || got.Prompt(0, false) != got.Prompt(0, true) {
		t.Error("an unknown hint wording cannot be removed; both prompts must be the file's")
	}
	if err := got.Verify(); err != nil {
		t.Error(err)
	}
}
