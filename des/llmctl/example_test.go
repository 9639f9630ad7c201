package llmctl_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// A Go program builds and checks the LLM controllers of a run from a
// MakerConfig, as the command line and experiment files do, and plays an
// episode with one. Here the model is the stub that answers as the rule
// controller would.
func ExampleNewMaker() {
	stub, _ := despolicy.New("builtin")
	srv := httptest.NewServer(stub)
	defer srv.Close()

	cfg := llmctl.MakerConfig{
		Model:            llm.Spec{Endpoint: llm.Endpoint{Name: "stub", Model: "plant=p,area=a,cell=c", BaseURL: srv.URL + "/v1"}},
		Framework:        "relay",
		MaxModelFailures: llmctl.DefaultMaxModelFailures,
	}
	bad := cfg
	bad.Framework = "swarm"
	fmt.Println(bad.Validate())

	mk, err := llmctl.NewMaker(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctrl, _ := mk.New(1)
	in, _ := factory.Resolve("A3C9-1")
	r := harness.Run(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(), Controller: ctrl})
	m := r.Metrics
	fmt.Println(m.Status, m.Model, m.Framework, m.Secondary.LLMCalls == m.GLlm, m.GFb)
	// Output:
	// Framework: unknown framework "swarm" (want graph or relay)
	// done stub relay true 0
}
