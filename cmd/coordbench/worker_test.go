package main

import (
	"context"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

// A case of a served experiment the worker does not trust fails naming
// the worker's flags: its error reaches the user through serve, whose
// flags are others.
func TestCaseRunnerTrustInFlagTerms(t *testing.T) {
	trust, err := jetstream.NewTrust(nil)
	if err != nil {
		t.Fatal(err)
	}
	run := caseRunner(t.TempDir(), trust, termsOf(workerCmd()))
	for body, want := range map[string]string{
		"benchmark: des\ndes:\n  instances: [A3C9-1]\n  controllers: [llm]\nmodels:\n  - {name: m, model: m, base_url: 'https://api.example.com/v1'}\n": "this worker does not call https://api.example.com/v1: API keys go only to loopback endpoints and those the worker allows (see --allow-endpoint)",
		"benchmark: des\ndes:\n  instances: [../x.yaml]\n": `the experiment names "../x.yaml", outside the experiment directory: a worker reads only files below it (see --experiment-dir)`,
	} {
		e, err := sweep.Parse("exp.yaml", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		spec := &jetstream.Spec{ID: e.ID(), FileName: "exp.yaml", File: []byte(body)}
		if _, err := run(context.Background(), jetstream.CaseRun{Spec: spec, ID: "x", Dir: t.TempDir()}); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want it to end in %q", body, err, want)
		}
	}
}
