package harness

import (
	"bytes"
	"context"
	"runtime"
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

// episodeRefs are the plants of the scaling table (docs/performance.md):
// A5C12-1 and generated plants 5.3× and 21× its size, with
// proportionally more jobs (gen: scales jobs with cells).
var episodeRefs = []string{"A5C12-1", "gen:A16C64", "gen:A64C256"}

// BenchmarkEpisode measures full episodes with the rule controller and
// the trace written to memory: episodes/s, events/s, decisions per
// episode and allocations per decision, for the centralized paradigm
// (every decision is the plant's, over the whole plant) and the holonic
// one (area and cell agents decide on their local views). The episodes
// run one after the other on one Scratch, as `coordbench des bench` runs
// them; BenchmarkEpisodeFresh lets every episode allocate its own.
//
//	go test ./des/harness -run XXX -bench 'Episode$/A5C12-1/centralized' -benchtime 300x -count 5
func BenchmarkEpisode(b *testing.B) {
	for _, ref := range episodeRefs {
		for _, mode := range []coord.AuthorityMode{coord.Centralized(), coord.HolonicHybrid()} {
			b.Run(ref+"/"+mode.ID, func(b *testing.B) { benchEpisodes(b, ref, mode, &Scratch{}) })
		}
	}
}

// BenchmarkEpisodeFresh is BenchmarkEpisode without a Scratch: every
// episode allocates its engine, interpreter and trace writer.
func BenchmarkEpisodeFresh(b *testing.B) {
	for _, ref := range episodeRefs {
		for _, mode := range []coord.AuthorityMode{coord.Centralized(), coord.HolonicHybrid()} {
			b.Run(ref+"/"+mode.ID, func(b *testing.B) { benchEpisodes(b, ref, mode, nil) })
		}
	}
}

func benchEpisodes(b *testing.B, ref string, mode coord.AuthorityMode, sc *Scratch) {
	p := benchPlant(b, ref)
	var trace bytes.Buffer
	events, decisions := 0, 0
	var ms0, ms1 runtime.MemStats
	b.ReportAllocs()
	runtime.ReadMemStats(&ms0)
	for i := 0; b.Loop(); i++ {
		trace.Reset()
		r := Run(context.Background(), Episode{Plant: p, Seed: uint64(i%10 + 1), Mode: mode, Controller: policy.Rule{}, Trace: &trace, Scratch: sc})
		events += r.Metrics.Secondary.Events
		decisions += r.Metrics.GDs
	}
	runtime.ReadMemStats(&ms1)
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/s, "episodes/s")
	b.ReportMetric(float64(events)/s, "events/s")
	b.ReportMetric(float64(decisions)/float64(b.N), "decisions/episode")
	if decisions > 0 {
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(decisions), "allocs/decision")
	}
}
