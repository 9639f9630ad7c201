package llmctl_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/suiterun"
)

type maker struct{ models map[string]llmctl.Model }

func (maker) Name() string      { return "llm" }
func (maker) Model() string     { return "stub" }
func (maker) Framework() string { return "graph" }
func (m maker) New(uint64) (coord.Controller, error) {
	return llmctl.New("graph", m.models)
}

// BenchmarkSuiteConcurrency: a suite whose model answers in 200 ms, with a
// limit of 32 calls in flight, against its ideal wall time
// (calls / 32 × 200 ms). Episodes are short (A3C9-1 with 4 jobs) and many
// run at once (more than the limit), so that the endpoint limit, not the episodes' sequential
// decisions, bounds the wall time. Reports the measured / ideal ratio.
func BenchmarkSuiteConcurrency(b *testing.B) {
	const latency, limit = 200 * time.Millisecond, 32
	stub, _ := despolicy.New("builtin")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		stub.ServeHTTP(w, r)
	}))
	defer srv.Close()
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		b.Fatal(err)
	}
	in.Name = "A3C9-short"
	in.Arrivals.Jobs, in.Arrivals.Initial = 4, 4
	path := filepath.Join(b.TempDir(), "short.json")
	os.WriteFile(path, harness.InstanceJSON(in), 0o644)
	cl, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", Concurrency: limit})
	if err != nil {
		b.Fatal(err)
	}
	mk := maker{models: map[string]llmctl.Model{"": {Name: "stub", Client: cl}}}
	for b.Loop() {
		s, err := harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: path, Paradigms: "centralized,hierarchical", Seeds: seeds(48),
			Controllers: "llm", Makers: []harness.ControllerMaker{mk}})
		if err != nil {
			b.Fatal(err)
		}
		before := cl.Stats().Calls()
		start := time.Now()
		rep, err := harness.RunSuite(context.Background(), s, b.TempDir(), harness.SuiteRunOptions{Options: suiterun.Options{Workers: len(s.Cases)}})
		if err != nil || rep.Failed > 0 {
			b.Fatal(err, rep.Failed)
		}
		wall := time.Since(start)
		calls := cl.Stats().Calls() - before
		ideal := time.Duration(float64(calls) / limit * float64(latency))
		b.ReportMetric(float64(calls), "calls")
		b.ReportMetric(wall.Seconds(), "wall_s")
		b.ReportMetric(ideal.Seconds(), "ideal_s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	}
}

func seeds(n int) string {
	s := "1"
	for i := 2; i <= n; i++ {
		s += "," + strconv.Itoa(i)
	}
	return s
}
