package report

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Paired statistics of a scheduling suite. Every paradigm of a suite runs
// on the same seeds, and a seed fixes the exogenous trajectory (arrivals,
// breakdowns) whatever the paradigm: common random numbers. The
// difference between two paradigms is therefore measured seed by seed,
// and the intervals are those of the mean of the paired differences.

// Level is the confidence level of every interval.
const Level = 0.95

// Resamples is the number of bootstrap resamples.
const Resamples = 10000

// The bootstrap's random stream: a PCG (math/rand/v2) seeded afresh with
// these two words for every comparison, so that an interval depends on its
// differences alone, not on which other comparisons the report holds.
const (
	BootstrapSeed1 = 0x636f6f7264626e63 // "coordbnc"
	BootstrapSeed2 = 0x7061697265643935 // "paired95"
)

// Interval is a two-sided interval; NaN bounds where it is undefined
// (fewer than two differences).
type Interval struct{ Lo, Hi float64 }

// Excludes0 reports whether 0 lies outside the interval.
func (iv Interval) Excludes0() bool { return iv.Lo > 0 || iv.Hi < 0 }

// PairedStats summarise the paired differences d_i = a_i − b_i over seeds.
type PairedStats struct {
	N    int     // pairs (seeds where both cases finished)
	Mean float64 // mean difference
	SD   float64 // sample standard deviation of the differences
	// T is the 95% Student t interval, mean ± t(0.975, N−1)·SD/√N; TQuantile
	// is t(0.975, N−1).
	T         Interval
	TQuantile float64
	// Boot is the 95% percentile bootstrap interval: the 2.5% and 97.5%
	// empirical quantiles of the means of Resamples resamples of the
	// differences drawn with replacement.
	Boot Interval
	// P is the two-sided p-value of the paired t test of mean 0 (NaN for
	// fewer than two differences; 0 when every difference is the same
	// non-zero value, 1 when every difference is 0).
	P float64
}

// FewPairs is the number of pairs below which an interval is flagged as
// rough: t(0.975, n−1) is 2.78 or more and the bootstrap has few distinct
// resamples.
const FewPairs = 5

// Few reports whether the statistics rest on fewer than FewPairs pairs.
func (p *PairedStats) Few() bool { return p.N < FewPairs }

// ZeroWidth reports whether every difference was the same (SD 0) and not
// all 0: the interval is one point, a certainty the seeds cannot give.
func (p *PairedStats) ZeroWidth() bool {
	return p.N >= 2 && p.Mean != 0 && p.T.Hi-p.T.Lo <= 1e-12*math.Abs(p.Mean)
}

// Holm returns Holm's step-down adjustment of the p-values p (the family
// is every non-NaN entry; NaN stays NaN): sorted ascending, the i-th
// smallest (from 0) is multiplied by m−i, made non-decreasing, capped at
// 1. A comparison is distinguishable after the correction when its
// adjusted p-value is below 1 − Level; this controls the family-wise
// error rate at that level without assuming independence.
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	m, run := len(idx), 0.0
	for r, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-r)*p[i]))
		out[i] = run
	}
	return out
}

// Distinguishable reports whether the t interval excludes 0: the two
// paradigms differ on this metric beyond what the seeds' spread explains.
func (p *PairedStats) Distinguishable() bool { return p.N >= 2 && p.T.Excludes0() }

// Paired computes the statistics of the differences d.
func Paired(d []float64) PairedStats {
	nan := Interval{math.NaN(), math.NaN()}
	p := PairedStats{N: len(d), Mean: math.NaN(), SD: math.NaN(), T: nan, TQuantile: math.NaN(), Boot: nan, P: math.NaN()}
	if len(d) == 0 {
		return p
	}
	if len(d) == 1 {
		p.Mean = d[0]
		return p
	}
	p.Mean, p.SD = stat.MeanStdDev(d, nil)
	n := float64(len(d))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	p.TQuantile = t.Quantile(1 - (1-Level)/2)
	switch {
	case p.SD > 0:
		p.P = 2 * t.Survival(math.Abs(p.Mean)/(p.SD/math.Sqrt(n)))
	case p.Mean != 0:
		p.P = 0
	default:
		p.P = 1
	}
	half := p.TQuantile * p.SD / math.Sqrt(n)
	p.T = Interval{p.Mean - half, p.Mean + half}
	p.Boot = bootstrap(d)
	return p
}

// pairedAll is Paired of each list of differences, computed on every core
// (the bootstrap is most of a large suite's report time). Each result
// depends on its own differences alone, so the order of work does not
// change any number.
func pairedAll(ds [][]float64) []PairedStats {
	out := make([]PairedStats, len(ds))
	workers := min(runtime.GOMAXPROCS(0), len(ds))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ds) {
					return
				}
				out[i] = Paired(ds[i])
			}
		})
	}
	wg.Wait()
	return out
}

// bootstrap is the percentile bootstrap interval of the mean of d. When
// every difference is 0 every resample mean is 0: the interval is [0, 0]
// without drawing.
func bootstrap(d []float64) Interval {
	if !slices.ContainsFunc(d, func(x float64) bool { return x != 0 }) {
		return Interval{0, 0}
	}
	rng := rand.NewPCG(BootstrapSeed1, BootstrapSeed2)
	n := uint64(len(d))
	means := make([]float64, Resamples)
	for r := range means {
		var s float64
		for range d {
			// a uniform index in [0, n), Lemire's method (indexReject)
			hi, lo := bits.Mul64(rng.Uint64(), n)
			if lo < n {
				hi = indexReject(rng, n, hi, lo)
			}
			s += d[hi]
		}
		means[r] = s / float64(n)
	}
	slices.Sort(means)
	a := (1 - Level) / 2
	return Interval{stat.Quantile(a, stat.Empirical, means, nil), stat.Quantile(1-a, stat.Empirical, means, nil)}
}

// The bootstrap draws a uniform index in [0, n) from the PCG's output by
// Lemire's multiply-and-reject method: the high word of the 128-bit
// product of a draw and n, drawing again while the low word is below
// 2^64 mod n. It is what rand.Rand.Uint64N does on 64-bit machines for
// an n that is not a power of two (Uint64N masks those),
// written out so that the stream is the same on every machine and can be
// replayed elsewhere (testdata/paired_check.py). The common case (low word
// ≥ n) is inlined in bootstrap; indexReject finishes the rare other one.
func indexReject(src *rand.PCG, n, hi, lo uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(src.Uint64(), n)
	}
	return hi
}
