package harness

import (
	"bytes"
	"context"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// TestCoordinationCostFollowsProtocol: with the built-in controller on
// every reported instance, the mean message count orders the paradigms as
// their protocols do (the seed's finding for message burden):
// heterarchical_cnp > hierarchical > centralized and
// heterarchical_cnp > holonic_hybrid > centralized.
func TestCoordinationCostFollowsProtocol(t *testing.T) {
	for _, ref := range factory.BuiltinNames() {
		p := plantOf(t, ref)
		mean := map[string]float64{}
		for _, m := range coord.Builtins() {
			for _, s := range p.Inst.Seeds.Test {
				r := Run(context.Background(), Episode{Plant: p, Seed: s, Mode: m, Controller: policy.Rule{}})
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				mean[m.ID] += float64(r.Metrics.GCm) / float64(len(p.Inst.Seeds.Test))
			}
		}
		t.Logf("%s mean G_cm: %v", ref, mean)
		cen, hie, het, hol := mean["centralized"], mean["hierarchical"], mean["heterarchical_cnp"], mean["holonic_hybrid"]
		if !(het > hie && hie > cen && het > hol && hol > cen) {
			t.Errorf("%s: G_cm order broken: centralized %.1f hierarchical %.1f heterarchical_cnp %.1f holonic_hybrid %.1f", ref, cen, hie, het, hol)
		}
	}
}

// BenchmarkDecisionSteps measures decision steps per second with the
// payload built, per paradigm (A5C12-1, rule controller, no artifacts).
func BenchmarkDecisionSteps(b *testing.B) {
	p := benchPlant(b, "A5C12-1")
	for _, m := range coord.Builtins() {
		b.Run(m.ID, func(b *testing.B) {
			steps := 0
			for i := 0; b.Loop(); i++ {
				r := Run(context.Background(), Episode{Plant: p, Seed: uint64(i%10 + 1), Mode: m, Controller: policy.Rule{}})
				steps += r.Metrics.GDs
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}

// BenchmarkEpisodeArtifacts: an episode with trace and decision log
// (payloads as JSON) written to memory, per paradigm.
func BenchmarkEpisodeArtifacts(b *testing.B) {
	p := benchPlant(b, "A5C12-1")
	for _, m := range coord.Builtins() {
		b.Run(m.ID, func(b *testing.B) {
			var tr, dec, msg bytes.Buffer
			for i := 0; b.Loop(); i++ {
				tr.Reset()
				dec.Reset()
				msg.Reset()
				Run(context.Background(), Episode{Plant: p, Seed: uint64(i%10 + 1), Mode: m, Controller: policy.Rule{}, Trace: &tr, Decisions: &dec, Messages: &msg})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}
