package llm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/otlptest"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/telemetry"
)

// BenchmarkCacheHit measures a Complete answered from the SQLite cache.
func BenchmarkCacheHit(b *testing.B) {
	srv := startServer(b, stubmodel.Echo)
	c := newClient(b, srv, func(cfg *llm.Config) { cfg.Cache = openCache(b) })
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You schedule jobs on machines. Answer with one job id."},
		{Role: llm.RoleUser, Content: "Queue: J1 J2 J3. Machine M2 is idle. Which job next?"},
	}
	if _, err := c.Complete(context.Background(), msgs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		resp, err := c.Complete(context.Background(), msgs)
		if err != nil || !resp.Cached {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkThroughput sends 320 calls to a server that takes 200 ms per
// call, with Concurrency 32: ideally 10 waves, 2 s. It reports the ideal
// time over the measured time (1 = no overhead); no assertion.
func BenchmarkThroughput(b *testing.B) {
	const calls, conc, delay = 320, 32, 200 * time.Millisecond
	srv := startServer(b, func(r stubmodel.ChatRequest) stubmodel.Reply {
		return stubmodel.WithDelay(stubmodel.Echo(r), delay)
	})
	c := newClient(b, srv, func(cfg *llm.Config) { cfg.Concurrency = conc })
	ideal := time.Duration(calls/conc) * delay
	var measured time.Duration
	round := 0
	for b.Loop() {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() {
				if _, err := c.Complete(context.Background(), user(fmt.Sprint(round, "/", i))); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		measured += time.Since(start)
		round++
	}
	per := measured / time.Duration(round)
	b.ReportMetric(ideal.Seconds()/per.Seconds(), "ideal/measured")
	b.ReportMetric(float64(calls)/per.Seconds(), "calls/s")
	b.ReportMetric(float64(srv.MaxConcurrent()), "max-concurrent")
}

// BenchmarkCacheHitTraced is BenchmarkCacheHit with tracing on: a chat
// span per call, exported in the background to an OTLP receiver on
// loopback (docs/telemetry.md).
func BenchmarkCacheHitTraced(b *testing.B) {
	srv := startServer(b, stubmodel.Echo)
	c := newClient(b, srv, func(cfg *llm.Config) { cfg.Cache = openCache(b) })
	rcv := otlptest.Start(b)
	tp, err := telemetry.New(telemetry.Config{Endpoint: rcv.URL(), Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	ctx, run := telemetry.StartRun(tp.Context(context.Background()), "bench")
	defer run.End()
	msgs := user("Queue: J1 J2 J3. Machine M2 is idle. Which job next?")
	if _, err := c.Complete(ctx, msgs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		resp, err := c.Complete(ctx, msgs)
		if err != nil || !resp.Cached {
			b.Fatal(resp, err)
		}
	}
}
