package llm_test

import (
	"errors"
	"math"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
)

// A Spec is checked as the client it configures would be, without a key:
// each bad field is named.
func TestSpecValidate(t *testing.T) {
	ok := llm.Spec{Endpoint: llm.Endpoint{Name: "small", Model: "m", BaseURL: "http://127.0.0.1:1/v1"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	cases := []struct {
		option string
		mod    func(*llm.Spec)
	}{
		{"Name", func(s *llm.Spec) { s.Name = "two words" }},
		{"Model", func(s *llm.Spec) { s.Model = " " }},
		{"BaseURL", func(s *llm.Spec) { s.BaseURL = "127.0.0.1:1/v1" }},
		{"APIKeyEnv", func(s *llm.Spec) { s.APIKeyEnv = "sk-secret-value" }},
		{"Temperature", func(s *llm.Spec) { s.Temperature = ptr(3.0) }},
		{"MaxTokens", func(s *llm.Spec) { s.MaxTokens = -1 }},
		{"Price", func(s *llm.Spec) { s.Price.Output = math.NaN() }},
	}
	for _, c := range cases {
		s := ok
		c.mod(&s)
		var oe *opterr.Error
		if err := s.Validate(); !errors.As(err, &oe) || oe.Option != c.option {
			t.Errorf("%s: got %v, want an error naming %s", c.option, err, c.option)
		}
	}
	// A key variable that is unset is not Validate's business (New reads it).
	s := ok
	s.APIKeyEnv = "COORDBENCH_SPEC_TEST_UNSET"
	if err := s.Validate(); err != nil {
		t.Errorf("unset key variable refused by Validate: %v", err)
	}
	if _, err := llm.New(s.Config("", llm.Options{})); err == nil {
		t.Error("New accepted an unset key variable")
	}
}

// Config carries every field of the Spec and the Options into the client
// configuration, with the model named per call when given.
func TestSpecConfig(t *testing.T) {
	seed := int64(7)
	cache := &llm.Cache{}
	eps := llm.NewEndpoints()
	s := llm.Spec{Endpoint: llm.Endpoint{Name: "x", Model: "m", BaseURL: "http://h/v1", APIKeyEnv: "K", Temperature: ptr(0.5), MaxTokens: 9, Seed: &seed},
		Limits: llm.Limits{Concurrency: 3, RPM: 60}}
	o := llm.Options{Timeout: 5, MaxAttempts: 2, Cache: cache, CacheMode: llm.CacheReplay, Endpoints: eps}
	c := s.Config("", o)
	if c.Model != "m" || c.BaseURL != "http://h/v1" || c.APIKeyEnv != "K" || *c.Temperature != 0.5 || c.MaxTokens != 9 ||
		c.Seed != &seed || c.Concurrency != 3 || c.RPM != 60 || c.Timeout != 5 || c.MaxAttempts != 2 || c.Cache != cache ||
		c.CacheMode != llm.CacheReplay || c.Endpoints != eps {
		t.Fatalf("Config lost a field: %+v", c)
	}
	if c := s.Config("other", o); c.Model != "other" {
		t.Fatalf("Config(model) sends %q", c.Model)
	}
	if s.Label() != "x" || (llm.Endpoint{Model: "m"}).Label() != "m" {
		t.Fatal("Label: want Name, else Model")
	}
}
