package llmctl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/otlptest"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/telemetry"
)

// With a model that fails transiently and answers badly, the traced
// episode carries each retry as an event of its call's chat span and each
// fallback as an event of its agent's invoke_agent span, as many as the
// server's log and the audit say.
func TestTracedFaultsAreEvents(t *testing.T) {
	rcv := otlptest.Start(t)
	tp, err := telemetry.New(telemetry.Config{Endpoint: rcv.URL(), Getenv: func(string) string { return "" }})
	if err != nil || tp == nil {
		t.Fatalf("provider %v: %v", tp, err)
	}
	stub, srv := stubServer(t, "faults")
	c := controller(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", RetryBaseDelay: time.Millisecond, RetryMaxDelay: 2 * time.Millisecond}, "relay")
	var dec bytes.Buffer
	ctx := telemetry.WithAttrs(tp.Context(context.Background()), telemetry.String(telemetry.KeyCaseID, "case-1"))
	r := harness.Run(ctx, harness.Episode{Plant: plant(t, "A3C9-1"), Seed: 1, Mode: coord.HeterarchicalCNP(), Controller: c, Decisions: &dec})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	tp.Shutdown(context.Background())
	m := r.Metrics
	run, agents, chats, _ := otlptest.CheckTree(t, rcv.Spans(), otlptest.Want{Run: "des episode", Agents: strings.Count(dec.String(), "\n"), Chats: m.Secondary.LLMCalls})
	if run.Str(telemetry.KeyCaseID) != "case-1" || run.Str(telemetry.KeyController) != "llm" {
		t.Errorf("run span: %v", run.Attrs)
	}
	log := stub.Log()
	var retries, fallbacks int
	for _, s := range chats {
		for _, e := range s.Events {
			if e.Name == telemetry.EventRetry && e.Attrs[telemetry.KeyErrorType] != "" {
				retries++
			}
		}
		if s.Int(telemetry.KeyAttempts) < 1 {
			t.Errorf("chat span without attempts: %v", s.Attrs)
		}
	}
	for _, s := range agents {
		for _, e := range s.Events {
			if e.Name == telemetry.EventFallback && e.Attrs["coordbench.reason"] != "" {
				fallbacks++
			}
		}
	}
	if retries != log["http_429"]+log["http_500"] || retries == 0 {
		t.Errorf("%d retry events; the server failed %d + %d attempts", retries, log["http_429"], log["http_500"])
	}
	if fallbacks != m.GFb || fallbacks == 0 {
		t.Errorf("%d fallback events, G_fb %d", fallbacks, m.GFb)
	}
}
