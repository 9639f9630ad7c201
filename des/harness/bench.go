package harness

import (
	"bytes"
	"context"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/sim"
)

// Throughput is the simulator's own speed on one instance, measured by
// `coordbench des bench` (wall-clock: for humans, never for tests).
type Throughput struct {
	Instance        string  `json:"instance"`
	Paradigm        string  `json:"paradigm"`
	Controller      string  `json:"controller"`
	Episodes        int     `json:"episodes"`
	Seconds         float64 `json:"seconds"`
	EpisodesPerSec  float64 `json:"episodes_per_s"`
	EventsPerSec    float64 `json:"events_per_s"`
	DecisionsPerSec float64 `json:"decisions_per_s"`
	TraceBytes      int64   `json:"trace_bytes_per_episode"`
	Decisions       bool    `json:"decisions_log"`
}

// MeasureEpisodes runs k episodes (seeds 1..k) on one goroutine, writing
// each trace to memory (and, with decisions set, the decision log too),
// and reports the throughput. newCtrl makes the controller for a seed.
// The episodes share one Scratch, as a runner of many episodes would.
func MeasureEpisodes(ctx context.Context, p *factory.Plant, mode coord.AuthorityMode, newCtrl func(seed uint64) coord.Controller, k int, decisions bool) Throughput {
	var trace, dec bytes.Buffer
	events, steps := 0, 0
	var traceBytes int64
	name := ""
	var sc Scratch
	start := time.Now()
	for i := 1; i <= k; i++ {
		trace.Reset()
		dec.Reset()
		ctrl := newCtrl(uint64(i))
		name = ctrl.Name()
		ep := Episode{Plant: p, Seed: uint64(i), Mode: mode, Controller: ctrl, Trace: &trace, Scratch: &sc}
		if decisions {
			ep.Decisions = &dec
		}
		r := Run(ctx, ep)
		events += r.Metrics.Secondary.Events
		steps += r.Metrics.GDs
		traceBytes += int64(trace.Len())
	}
	s := time.Since(start).Seconds()
	return Throughput{
		Instance: p.Inst.Name, Paradigm: mode.ID, Controller: name, Episodes: k, Seconds: s,
		EpisodesPerSec: float64(k) / s, EventsPerSec: float64(events) / s, DecisionsPerSec: float64(steps) / s,
		TraceBytes: traceBytes / int64(max(k, 1)), Decisions: decisions,
	}
}

// HoldThroughput is the kernel's speed on the classic hold model.
type HoldThroughput struct {
	Model        string  `json:"model"`
	Pending      int     `json:"pending"`
	Events       int     `json:"events"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_s"`
}

// MeasureHold times sim.Hold(n, m).
func MeasureHold(n, m int) HoldThroughput {
	start := time.Now()
	st := sim.Hold(n, m, 1)
	s := time.Since(start).Seconds()
	return HoldThroughput{Model: "hold (exponential increments, mean 1)", Pending: st.Pending, Events: st.Events,
		Seconds: s, EventsPerSec: float64(st.Events) / s}
}
