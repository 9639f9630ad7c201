package sweep_test

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/sweep"
)

// TestModelsParse: the models list, its limits and prices, and des
// frameworks are read strictly, with errors naming the file, line and
// field.
func TestModelsParse(t *testing.T) {
	const head = "benchmark: des\ndes:\n  instances: A3C9-1\n  controllers: llm\n"
	for _, c := range []struct{ in, want string }{
		{head + "models:\n  - model: m\n    base_url: u\n    prize: {input: 1}\n", `e.yaml:8: field "models[0].prize": unknown field in model`},
		{head + "models:\n  - model: m\n    base_url: u\n    price:\n      input: 1\n      ouput: 2\n", `e.yaml:10: field "models[0].price.ouput": unknown field in price`},
		{head + "models:\n  - model: m\n    base_url: u\n    limits: {concurrency: 2, rps: 1}\n", `e.yaml:8: field "models[0].limits.rps": unknown field in limits`},
		{head + "models:\n  - model: m\n    base_url: u\n  - model: m\n    base_url: v\n", `e.yaml:8: field "models[1].name": models[0] has the same label "m"`},
		{head + "models:\n  - model: m\n    base_url: u\n    price: {input: -1}\n", `e.yaml:8: field "models[0].price.input": want a number from 0`},
		{head + "models:\n  - model: m\n  - model: n\n    base_url: u\n", `e.yaml:6: field "models[0].base_url": required`},
		{head + "models:\n  - name: a b\n    model: m\n    base_url: u\n", `e.yaml:6: field "models[0].name": want at most 64 letters`},
		{head + "models:\n  - model: m\n    base_url: u\nllm:\n  model: x\n", `e.yaml:9: field "llm.model": with a models list, set model per model`},
		{head + "  frameworks: [graph]\nllm:\n  model: m\n  base_url: u\n  framework: relay\n", `e.yaml:5: field "des.frameworks": give the frameworks here or llm.framework, not both`},
		{head + "llm:\n  model: m\n  base_url: u\n  price: {input: .nan}\n", `field "llm.price.input"`},
	} {
		_, err := sweep.Parse("e.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.in, err, c.want)
		}
	}
	e, err := sweep.Parse("e.yaml", []byte(head+"  frameworks: graph,relay\nmodels:\n  - {name: a, model: m, base_url: u, limits: {concurrency: 2, rpm: 60}, price: {input: 1, output: 2}}\n  - {model: n, base_url: v}\nllm: {cache: c.db, timeout: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ms := e.ModelList()
	if len(ms) != 2 || ms[0].Label() != "a" || ms[1].Label() != "n" || ms[0].Price.Output != 2 || ms[0].Limits.RPM != 60 || len(e.Frameworks()) != 2 {
		t.Errorf("models %+v, frameworks %v", ms, e.Frameworks())
	}
}

// TestSingleLLMUnchanged: a file with the one-model llm section reads as a
// one-model list and keeps its identity: the canonical JSON (hence the id
// recorded by earlier sweeps) is the one it had before models existed;
// price and limits are not part of it.
func TestSingleLLMUnchanged(t *testing.T) {
	src := "benchmark: des\ndes:\n  instances: A3C9-1\n  controllers: [llm]\nllm:\n  model: m\n  base_url: http://127.0.0.1:1/v1\n  framework: relay\n"
	e, err := sweep.Parse("e.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"benchmark":"des","des":{"instances":["A3C9-1"],"controllers":["llm"]},"llm":{"model":"m","base_url":"http://127.0.0.1:1/v1","framework":"relay"}}`
	if got := string(e.Canonical()); got != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", got, want)
	}
	if ms := e.ModelList(); len(ms) != 1 || ms[0].Label() != "m" || e.Frameworks()[0] != "relay" {
		t.Errorf("models %+v, frameworks %v", ms, e.Frameworks())
	}
	p, err := sweep.Parse("e.yaml", []byte(src+"  price: {input: 1, output: 2}\n  concurrency: 3\n"))
	if err != nil || p.ID() != e.ID() {
		t.Errorf("a price changed the id: %v", err)
	}
}

// TestModelsTemperature: a model's temperature is sent only when its entry
// gives one (the published call sends no sampling parameter), per model;
// a negative one is refused, and so is the llm section's beside a models
// list. The silo settings message_order and tool_results are read too.
func TestModelsTemperature(t *testing.T) {
	const head = "benchmark: silo\nsilo:\n  agents: 2\n  agent_kinds: llm\n  message_order: fixed\n"
	e, err := sweep.Parse("e.yaml", []byte(head+"models:\n  - {name: a, model: m, base_url: u, temperature: 0.7}\n  - {name: b, model: m, base_url: u}\n  - {name: c, model: m, base_url: u, temperature: 0}\nllm: {tool_results: compact}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ms := e.ModelList()
	if len(ms) != 3 || ms[0].Temperature == nil || *ms[0].Temperature != 0.7 || ms[1].Temperature != nil ||
		ms[2].Temperature == nil || *ms[2].Temperature != 0 {
		t.Errorf("models %+v", ms)
	}
	if e.Silo.MessageOrder != "fixed" || e.LLM.ToolResults != "compact" {
		t.Errorf("message_order %q, tool_results %q", e.Silo.MessageOrder, e.LLM.ToolResults)
	}
	for _, c := range []struct{ in, want string }{
		{head + "models:\n  - {model: m, base_url: u, temperature: -1}\n", `field "models[0].temperature": want a number from 0`},
		{head + "models:\n  - {model: m, base_url: u}\nllm: {temperature: 0.5}\n", `field "llm.temperature": with a models list, set temperature per model`},
		{head + "llm: {model: m, base_url: u, temperature: -2}\n", `field "llm.temperature": want a number from 0`},
	} {
		if _, err := sweep.Parse("e.yaml", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.in, err, c.want)
		}
	}
}
