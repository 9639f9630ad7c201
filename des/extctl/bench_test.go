//go:build unix

package extctl_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// recorder keeps a copy of every payload it is asked about.
type recorder struct {
	coord.Controller
	ds []*coord.Decision
}

func (r *recorder) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	b, _ := json.Marshal(d)
	var c coord.Decision
	json.Unmarshal(b, &c)
	r.ds = append(r.ds, &c)
	return r.Controller.Act(ctx, d)
}

// payloads are the decisions of a real contract-net episode on A3C9-1
// (1357 agent decisions in 793 steps, release views with 8 jobs, bid
// rounds with up to 9 active cells).
func payloads(b *testing.B) []*coord.Decision {
	r := &recorder{Controller: policy.GreedyPy{}}
	if res := harness.Run(context.Background(), harness.Episode{Plant: plantOf(b, faultInstance), Seed: faultSeed, Mode: coord.HeterarchicalCNP(), Controller: r}); res.Err != nil {
		b.Fatal(res.Err)
	}
	return r.ds
}

func benchRoundTrip(b *testing.B, command string) {
	ds := payloads(b)
	c, err := extctl.Start(context.Background(), extctl.Config{Command: command,
		Episode: extctl.EpisodeOf(plantOf(b, faultInstance), coord.HeterarchicalCNP(), faultSeed)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Failed(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := ds[i%len(ds)]
		acts, _ := c.Act(context.Background(), d)
		if len(acts) != len(d.ActiveAgents) {
			b.Fatalf("step %d: %v %v", d.Step, acts, c.Notes())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/decision")
}

// BenchmarkRoundTrip is the protocol's overhead per decision step with a
// trivial runner in Go (the test binary): encode the payload, write it,
// the runner decodes it and answers, read and validate the reply.
func BenchmarkRoundTrip(b *testing.B) { benchRoundTrip(b, helperCommand(b, "first")) }

// BenchmarkRoundTripPython is the same with a trivial Python runner
// (testdata/first_legal.py): what a Python system pays per decision
// before it thinks.
func BenchmarkRoundTripPython(b *testing.B) {
	benchRoundTrip(b, pythonRunner(b, "testdata/first_legal.py"))
}

// BenchmarkEncodePayload is the part of the round trip spent encoding the
// payload to JSON.
func BenchmarkEncodePayload(b *testing.B) {
	ds := payloads(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := json.Marshal(ds[i%len(ds)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEpisode compares a whole episode (A3C9-1, contract net) played
// by the Go twin in-process and by the Python example over the protocol,
// process start and stop included.
func BenchmarkEpisode(b *testing.B) {
	p := plantOf(b, faultInstance)
	b.Run("go_twin", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			harness.Run(context.Background(), harness.Episode{Plant: p, Seed: faultSeed, Mode: coord.HeterarchicalCNP(), Controller: policy.GreedyPy{}})
		}
	})
	b.Run("python_runner", func(b *testing.B) {
		command := pythonRunner(b, greedyRunner)
		for i := 0; i < b.N; i++ {
			c, err := extctl.Start(context.Background(), extctl.Config{Command: command, Episode: extctl.EpisodeOf(p, coord.HeterarchicalCNP(), faultSeed)})
			if err != nil {
				b.Fatal(err)
			}
			res := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: faultSeed, Mode: coord.HeterarchicalCNP(), Controller: c})
			if c.End(res.Metrics) != nil || res.Metrics.GFb != 0 {
				b.Fatalf("failed %v, %d fallbacks", c.Failed(), res.Metrics.GFb)
			}
		}
	})
}
