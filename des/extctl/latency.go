package extctl

import (
	"math"
	"slices"
	"time"
)

// Latency sums up reply round trips, in milliseconds.
type Latency struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// LatencyOf computes nearest-rank percentiles of ds.
func LatencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(0, min(i, len(s)-1))])
	}
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return Latency{N: len(s), Mean: ms(total / time.Duration(len(s))), P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: ms(s[len(s)-1])}
}
