package play_test

import (
	"errors"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
)

// An LLMConfig names its bad field; a good one gives the agents its
// settings, with the manifest's defaults filled in.
func TestLLMConfig(t *testing.T) {
	base := play.LLMConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Model: "m", BaseURL: "http://127.0.0.1:1/v1"}}, MaxModelFailures: 2}
	for _, b := range []struct {
		option string
		mod    func(*play.LLMConfig)
	}{
		{"LLM", func(c *play.LLMConfig) { c.Model.Model = "" }},
		{"ToolFormat", func(c *play.LLMConfig) { c.ToolFormat = "json" }},
		{"Scaffold", func(c *play.LLMConfig) { c.Scaffold = "planning,dreaming" }},
		{"ContextBudget", func(c *play.LLMConfig) { c.ContextBudget = -5 }},
		{"ReplyReserve", func(c *play.LLMConfig) { c.ReplyReserve = -5 }},
		{"MaxModelFailures", func(c *play.LLMConfig) { c.MaxModelFailures = 0 }},
		{"Temperature", func(c *play.LLMConfig) { t := -1.0; c.Model.Temperature = &t }},
		{"ToolResults", func(c *play.LLMConfig) { c.ToolResults = "utf8" }},
		{"Cache", func(c *play.LLMConfig) { c.Options.CacheMode = llm.CacheReplay }},
	} {
		c := base
		b.mod(&c)
		var oe *opterr.Error
		if err := c.Validate(); !errors.As(err, &oe) || oe.Option != b.option {
			t.Errorf("%s: Validate gave %v", b.option, err)
		}
		if _, err := play.NewLLMAgent(c); !errors.As(err, &oe) || oe.Option != b.option {
			t.Errorf("%s: NewLLMAgent gave %v", b.option, err)
		}
	}
	c := base
	c.Model.Name, c.Model.BaseURL, c.ToolFormat, c.Scaffold = "tiny", "http://127.0.0.1:1/v1/", play.ToolFormatNative, "reminders"
	a, err := play.NewLLMAgent(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "tiny" || a.Model != "m" || a.BaseURL != "http://127.0.0.1:1/v1" || !a.Config.Native || a.Config.MaxModelFailures != 2 ||
		a.Config.ReplyReserve != llmagent.DefaultReplyReserve || a.Label() != "llm-tiny+reminders+native" || a.Status() == "" {
		t.Fatalf("agent %+v label %s", a, a.Label())
	}
	c.Model.Name = "m" // the model's own name labels nothing apart
	if a, err = play.NewLLMAgent(c); err != nil || a.Name != "" {
		t.Fatalf("name %q, %v", a.Name, err)
	}
}
