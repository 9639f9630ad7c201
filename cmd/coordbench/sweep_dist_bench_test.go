package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// distSweep serves file and runs it on k in-process workers (one case at
// a time each) against a fresh embedded NATS server, and returns how long
// the sweep took.
func distSweep(b *testing.B, file string, k int) time.Duration {
	b.Helper()
	b.StopTimer()
	emb := startNATS(b)
	out := filepath.Join(b.TempDir(), "dist")
	ctx := context.Background()
	b.StartTimer()
	start := time.Now()
	serve := served(b, ctx, serveConfig{file: file, out: out, natsURL: emb.URL(), store: "object", ackWait: time.Minute})
	ws := workers(ctx, k, workerConfig{natsURL: emb.URL(), slots: 1, name: "b", scratch: b.TempDir(), experimentDir: "."}, nil)
	if err := wait(b, serve, "serve"); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	for range k {
		if err := wait(b, ws, "worker"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	emb.Close()
	b.StartTimer()
	return took
}

// BenchmarkSweepWorkers: model-bound cases (the llm controller against
// the stub model with 200 ms latency, about 8 calls a case, 16 cases) on
// 1, 2 and 4 workers; reports seconds per sweep (serve's start and end
// included), the speed-up over one worker and the parallel efficiency
// (speed-up / workers; target ≥ 0.8 at 4). Run with -benchtime=1x: one
// sweep of one worker takes about 30 s.
func BenchmarkSweepWorkers(b *testing.B) {
	stub := newSlowStub(b, 200*time.Millisecond)
	file := llmExperiment(b, b.TempDir(), stub.URL, "1-16", "")
	var one float64
	for _, k := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", k), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += distSweep(b, file, k)
			}
			sec := total.Seconds() / float64(b.N)
			if k == 1 {
				one = sec
			}
			b.ReportMetric(sec, "s/sweep")
			if one > 0 {
				b.ReportMetric(one/sec, "speedup")
				b.ReportMetric(one/sec/float64(k), "efficiency")
			}
		})
	}
}

// BenchmarkSweepWorkersRPM: 4 workers under a global limit of 600
// requests per minute (llm.rpm, which each worker would also enforce on
// its own): the stub's arrival times must never show more than the limit
// allows in any 1-second or 5-second window (10/s, plus the burst of 1
// and 2 of arrival jitter), where each worker's own limiter alone would
// let 4 times as many through. Reports the busiest windows and the rate
// over the sweep.
func BenchmarkSweepWorkersRPM(b *testing.B) {
	stub := newSlowStub(b, 200*time.Millisecond)
	file := llmExperiment(b, b.TempDir(), stub.URL, "1, 2, 3, 4, 5, 6, 7, 8", "  rpm: 600\n")
	for range b.N {
		stub.mu.Lock()
		stub.times = nil
		stub.mu.Unlock()
		took := distSweep(b, file, 4)
		stub.mu.Lock()
		times := stub.times
		stub.mu.Unlock()
		// Arrivals at the stub trail the permits by a varying network and
		// scheduling delay: allow two requests of jitter per window.
		busy1, busy5 := busiest(times, time.Second), busiest(times, 5*time.Second)
		if busy1 > 13 || busy5 > 53 {
			b.Errorf("%d requests within 1 s, %d within 5 s: the global limit of 600 rpm (10/s, burst 1) did not hold", busy1, busy5)
		}
		b.ReportMetric(float64(busy1), "max_req/1s")
		b.ReportMetric(float64(busy5), "max_req/5s")
		b.ReportMetric(float64(len(times))/took.Minutes(), "req/min")
	}
}

// busiest is the largest number of the sorted times within any window of
// length w.
func busiest(times []time.Time, w time.Duration) int {
	most, j := 0, 0
	for i := range times {
		for j < len(times) && times[j].Sub(times[i]) < w {
			j++
		}
		most = max(most, j-i)
	}
	return most
}
