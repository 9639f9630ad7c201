package sweep_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/sweep"
)

// schema compiles docs/experiment.schema.json.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../docs/experiment.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("experiment.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("experiment.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON decodes a YAML document as the JSON value the schema describes.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestExamplesValidate: every example experiment file is valid under the
// published schema and loads; files the loader refuses for their shape
// fail the schema too.
func TestExamplesValidate(t *testing.T) {
	sch := schema(t)
	files, err := filepath.Glob("../examples/experiments/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if _, err := sweep.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{
		"benchmark: des\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\n  seed: 1\n",
		"benchmark: silo\nsilo:\n  agents: 2\n  baseline: maybe\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nsilo:\n  agents: 2\n",
		"benchmark: silo\nsilo:\n  agents: 2\nllm:\n  model: m\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nrun:\n  workers: -1\n",
		"benchmark: chess\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nmodels:\n  - {model: m, base_url: u, price: {inptu: 1}}\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nmodels:\n  - {model: m, base_url: u, limits: {rpm: -1}}\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nmodels:\n  - {model: m}\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nmodels:\n  - {name: 'a b', model: m, base_url: u}\n",
		"benchmark: des\ndes:\n  instances: A3C9-1\nmodels:\n  - {model: m, base_url: u}\nllm:\n  base_url: v\n",
	} {
		if err := sch.Validate(asJSON(t, []byte(bad))); err == nil {
			t.Errorf("schema accepts %q", bad)
		}
		if _, err := sweep.Parse("bad.yaml", []byte(bad)); err == nil {
			t.Errorf("Parse accepts %q", bad)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "e.yaml: empty experiment file"},
		{"benchmark: [des]\n", "e.yaml:1: field \"benchmark\""},
		{"benchmark: des\ndes:\n  instances: A3C9-1\n  paradigm: all\n", `e.yaml:4: field "des.paradigm": unknown field in des`},
		{"benchmark: des\ndes:\n  instances: {a: 1}\n", `e.yaml:3: field "des.instances": want a name, a number or a list of them`},
		{"benchmark: des\ndes:\n  instances: [[a]]\n", `e.yaml:3: field "des.instances": want a list of names or numbers`},
		{"benchmark: silo\nsilo:\n  agents: 2\n  baseline: maybe\n", `e.yaml:4: field "silo.baseline": want merged, seeded or none`},
		{"benchmark: silo\nsilo:\n  agents: 2\nllm:\n  model: m\n  base_url: u\n  framework: graph\n", `e.yaml:7: field "llm.framework": not a setting of silo experiments`},
		{"benchmark: des\ndes:\n  instances: a\nllm:\n  model: m\n  base_url: u\n  temperature: .nan\n", `field "llm.temperature"`},
		{"benchmark: des\ndes:\n  instances: a\n---\nbenchmark: des\n", "more than one YAML document"},
		{"benchmark: des\ndes:\n  instances: a\nrun:\n  worker: 2\n", `e.yaml:5: field "run.worker": unknown field in run`},
		{"bench: des\n", `e.yaml:1: field "bench": unknown field in the top level`},
		{"- a\n", "e.yaml:1:"},
		{"benchmark: des\ndes:\n  instances: &a [*a]\n", "e.yaml"},
	} {
		_, err := sweep.Parse("e.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

// The identity of an experiment leaves out how it runs.
func TestID(t *testing.T) {
	a, err := sweep.Parse("a", []byte("benchmark: des\ndes:\n  instances: A3C9-1\nrun:\n  workers: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := sweep.Parse("b", []byte("benchmark: des\nrun: {workers: 8}\ndes: {instances: [A3C9-1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sweep.Parse("c", []byte("benchmark: des\ndes: {instances: [A3C9-1], seeds: dev}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != b.ID() || a.ID() == c.ID() {
		t.Errorf("ids %s %s %s", a.ID(), b.ID(), c.ID())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"benchmark: des\ndes:\n  instances: A3C9-1\n", "benchmark: silo\nsilo: {agents: [2, 3]}\nllm: {model: m, base_url: u}\n",
		"benchmark: des\ndes: {instances: a, frameworks: [graph]}\nmodels:\n  - {name: a, model: m, base_url: u, limits: {rpm: 1}, price: {input: 1}}\n",
		"benchmark: silo\nsilo: {agents: [4, 6], agent_kinds: [team], teams: [{agents: [{model: a, share: 1}, {model: b, share: 2}]}]}\n" +
			"models: [{name: a, model: m, base_url: u}, {name: b, model: n, base_url: v}]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := sweep.Parse("f.yaml", data)
		if err == nil {
			_ = e.ID()
			_ = e.DesOptions()
			_ = e.SiloOptions()
		}
	})
}

func ExampleShard_Select() {
	sh, _ := sweep.ParseShard("1/3")
	ids, _ := sh.Select([]string{"c0", "c1", "c2", "c3", "c4", "c5", "c6"})
	fmt.Println(ids)
	// Output: [c1 c4]
}
