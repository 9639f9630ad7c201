package sweep_test

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// BuildModels builds an experiment's models with the libraries'
// configurations, as values: what a file sets reaches the controllers and
// agents, the command line's defaults apply where it sets nothing, and a
// setting the library refuses is reported at the file's field.
func TestBuildModels(t *testing.T) {
	const des = "benchmark: des\ndes:\n  instances: A3C9-1\n  controllers: llm\n"
	const silo = "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: 2\n  agent_kinds: llm\n"
	for _, c := range []struct{ in, want string }{
		{des + "  frameworks: [graph, swarm]\nmodels:\n  - {model: m, base_url: 'http://127.0.0.1:1/v1'}\n", `e.yaml:5: field "des.frameworks": unknown framework "swarm"`},
		{des + "llm:\n  model: m\n  base_url: 'http://127.0.0.1:1/v1'\n  reply_parsing: loose\n", `e.yaml:8: field "llm.reply_parsing": unknown rule "loose"`},
		{des + "models:\n  - {model: m, base_url: 'ftp://h/v1'}\n", `e.yaml:6: field "models[0].base_url": scheme "ftp"`},
		{des + "models:\n  - {model: m, base_url: 'http://h/v1', temperature: 5}\n", `field "models[0].temperature": 5 out of range`},
		{des + "llm:\n  model: m\n  base_url: 'http://h/v1'\n  timeout: soon\n", `e.yaml:8: field "llm.timeout": want a duration`},
		{des + "llm:\n  model: m\n  base_url: 'http://h/v1'\n  cache_mode: replay\n", `field "llm.cache": cache mode "replay" needs a cache`},
		{silo + "llm:\n  model: m\n  base_url: 'http://h/v1'\n  tool_format: json\n", `e.yaml:9: field "llm.tool_format": want xml or native`},
		{silo + "llm:\n  model: m\n  base_url: 'http://h/v1'\n  scaffold: [planning, pondering]\n", `e.yaml:9: field "llm.scaffold"`},
		{silo + "llm:\n  model: m\n  base_url: 'http://h/v1'\n  context_budget: -1\n", `field "llm.context_budget": must not be negative`},
	} {
		e, err := sweep.Parse("e.yaml", []byte(c.in))
		if err == nil {
			_, _, err = sweep.BuildModels(e, sweep.ModelOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.in, err, c.want)
		}
	}

	e, err := sweep.Parse("e.yaml", []byte(des+"  frameworks: [graph, relay]\nmodels:\n  - {name: small, model: m, base_url: 'http://127.0.0.1:1/v1', limits: {concurrency: 3}}\n  - {model: n, base_url: 'http://127.0.0.1:1/v1', max_tokens: 40}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var limited []string
	set, closer, err := sweep.BuildModels(e, sweep.ModelOptions{Limiter: func(entry string) llm.Limiter { limited = append(limited, entry); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if len(set.DesMakers) != 4 || set.Concurrency != 3+8 || strings.Join(limited, ",") != "small,n" {
		t.Fatalf("%d makers, concurrency %d, limiters asked for %v", len(set.DesMakers), set.Concurrency, limited)
	}
	var got []string
	for _, mk := range set.DesMakers {
		got = append(got, mk.Model()+"/"+mk.Framework())
	}
	if strings.Join(got, " ") != "small/graph small/relay n/graph n/relay" {
		t.Fatalf("makers %v", got)
	}
	ctrl, err := set.DesMakers[0].New(1)
	if err != nil {
		t.Fatal(err)
	}
	if lc := ctrl.(*llmctl.Controller); !lc.AbortOnModelError || lc.ModelNames() != "small" {
		t.Fatalf("a sweep's controller must abort on the first model error, labelled by its entry: %+v", lc)
	}
	if !strings.Contains(set.Status(), "small: ") || !strings.Contains(set.Status(), "; n: ") {
		t.Fatalf("status %q", set.Status())
	}

	e, err = sweep.Parse("e.yaml", []byte(silo+"llm:\n  model: org/m\n  base_url: 'http://127.0.0.1:1/v1'\n  tool_format: native\n  scaffold: [planning]\n  context_budget: 9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, closer, err = sweep.BuildModels(e, sweep.ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	a := set.SiloLLMs[0]
	if len(set.SiloLLMs) != 1 || !a.Config.Native || a.Config.ContextBudget != 9000 || a.Name != "" || a.Model != "org/m" ||
		!strings.HasPrefix(a.Label(), "llm-org-m-") || !strings.HasSuffix(a.Label(), "+planning+native") || set.Concurrency != 8 {
		t.Fatalf("silo agent %+v label %s concurrency %d", a, a.Label(), set.Concurrency)
	}
}
