package llmctl_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// A MakerConfig names its bad field; a good one builds controllers whose
// models, label and settings are the configuration's.
func TestMakerConfig(t *testing.T) {
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	base := llmctl.MakerConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Model: "m", BaseURL: srv.URL + "/v1"}}, MaxModelFailures: 1}
	bad := []struct {
		option string
		mod    func(*llmctl.MakerConfig)
	}{
		{"LLM", func(c *llmctl.MakerConfig) { c.Model.BaseURL = "" }},
		{"Framework", func(c *llmctl.MakerConfig) { c.Framework = "swarm" }},
		{"ReplyParsing", func(c *llmctl.MakerConfig) { c.ReplyParsing = "lenient" }},
		{"MaxModelFailures", func(c *llmctl.MakerConfig) { c.MaxModelFailures = 0 }},
		{"Model", func(c *llmctl.MakerConfig) { c.Model.Model = "boss=m" }},
		{"Model", func(c *llmctl.MakerConfig) { c.Model.Model = "plant=a,cell=c" }},
		{"Name", func(c *llmctl.MakerConfig) { c.Model.Name = "a__b" }},
		{"CacheMode", func(c *llmctl.MakerConfig) { c.Options.CacheMode = "sometimes" }},
		{"Cache", func(c *llmctl.MakerConfig) { c.Options.CacheMode = llm.CacheReplay }},
	}
	for _, b := range bad {
		c := base
		b.mod(&c)
		var oe *opterr.Error
		if err := c.Validate(); !errors.As(err, &oe) || oe.Option != b.option {
			t.Errorf("%s: Validate gave %v", b.option, err)
		}
		if _, err := llmctl.NewMaker(c); !errors.As(err, &oe) || oe.Option != b.option {
			t.Errorf("%s: NewMaker gave %v", b.option, err)
		}
	}

	c := base
	c.Model.Model, c.Model.Name, c.Framework = "plant=a,area=b,cell=c", "trio", "relay"
	mk, err := llmctl.NewMaker(c)
	if err != nil {
		t.Fatal(err)
	}
	if mk.Name() != "llm" || mk.Model() != "trio" || mk.Framework() != "relay" || mk.ReplyParsing() != llmctl.ParsingPublished {
		t.Fatalf("maker: %s %s %s %s", mk.Name(), mk.Model(), mk.Framework(), mk.ReplyParsing())
	}
	ctrl, err := mk.New(1)
	if err != nil {
		t.Fatal(err)
	}
	lc := ctrl.(*llmctl.Controller)
	if lc.ModelNames() != "trio" || lc.MaxModelFailures != 1 || lc.Framework() != "relay" {
		t.Fatalf("controller: %s %d %s", lc.ModelNames(), lc.MaxModelFailures, lc.Framework())
	}
	lc.Label = ""
	if got := lc.ModelNames(); got != "area=b,cell=c,plant=a" {
		t.Fatalf("role models: %q", got)
	}
	// Defaults of a zero framework and parsing.
	c = base
	mk, err = llmctl.NewMaker(c)
	if err != nil || mk.Framework() != llmctl.DefaultFramework || mk.Model() != "m" {
		t.Fatalf("defaults: %v %v", mk, err)
	}
}
