package llmagent_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
)

// turnOf is the 0-based turn of a request: the assistant messages so far.
func turnOf(req stubmodel.ChatRequest) int {
	k := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			k++
		}
	}
	return k
}

// BenchmarkRound50x20 is the speed case: 50 agents, 20 rounds, the
// test server adding 300 ms to every call, endpoint concurrency 64. Every
// agent broadcasts and waits each round and submits in round 20, so every
// round has 50 active agents and one model call per turn. The ideal wall
// time is rounds × calls per turn × ⌈active agents / 64⌉ × 300 ms = 6 s;
// the benchmark reports the measured ratio to it (x_ideal).
func BenchmarkRound50x20(b *testing.B) { benchRounds(b, 300*time.Millisecond) }

// BenchmarkRound50x20Instant is the same run with a server that answers at
// once: its time is the whole overhead of harness, client and (in-process)
// test server, which the 300 ms case adds to the ideal.
func BenchmarkRound50x20Instant(b *testing.B) { benchRounds(b, 0) }

func benchRounds(b *testing.B, delay time.Duration) {
	const (
		n, rounds   = 50, 20
		concurrency = 64
	)
	h := func(req stubmodel.ChatRequest) stubmodel.Reply {
		body := "<tool_call><tool>broadcast_message</tool><parameters><content>progress report</content></parameters></tool_call>" +
			"<tool_call><tool>receive_messages</tool></tool_call><tool_call><tool>wait</tool></tool_call>"
		if turnOf(req) == rounds-1 {
			body = "<tool_call><tool>submit_result</tool><parameters><answer>1</answer></parameters></tool_call>"
		}
		return stubmodel.WithDelay(stubmodel.Text(body), delay)
	}
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "bench", Concurrency: concurrency})
	if err != nil {
		b.Fatal(err)
	}
	in := seeded(b, "I-01", n)
	ideal := float64(rounds) * 1 * math.Ceil(float64(n)/concurrency) * delay.Seconds()
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		team, err := llmagent.NewTeam(in, proto.Broadcast, llmagent.Config{Model: c})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.Broadcast, MaxRounds: rounds}, team.Agents())
		total += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if res.Rounds != rounds || !res.AllSubmitted || res.Usage.ModelCalls != n*rounds {
			b.Fatalf("rounds %d, all submitted %v, calls %d", res.Rounds, res.AllSubmitted, res.Usage.ModelCalls)
		}
	}
	wall := total.Seconds() / float64(b.N)
	b.ReportMetric(wall, "s/run")
	if ideal > 0 {
		b.ReportMetric(wall/ideal, "x_ideal")
	}
}
