package harness

import (
	"bytes"
	"context"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

func benchPlant(b *testing.B, ref string) *factory.Plant {
	in, err := factory.Resolve(ref)
	if err != nil {
		b.Fatal(err)
	}
	return factory.Compile(in)
}

// BenchmarkEpisode measures full episodes with the rule controller and
// the trace written to memory (the issue's ≥ 500 episodes/s/core target on
// A5C12-1), and how time per episode grows to a 16-area, 64-cell plant.
func BenchmarkEpisode(b *testing.B) {
	for _, ref := range []string{"A5C12-1", "gen:A16C64"} {
		b.Run(ref, func(b *testing.B) {
			p := benchPlant(b, ref)
			var trace bytes.Buffer
			events := 0
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				trace.Reset()
				r := Run(context.Background(), Episode{Plant: p, Seed: uint64(i%10 + 1), Mode: coord.Centralized, Controller: policy.Rule{}, Trace: &trace})
				events += r.Metrics.Secondary.Events
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/s, "episodes/s")
			b.ReportMetric(float64(events)/s, "events/s")
		})
	}
}
