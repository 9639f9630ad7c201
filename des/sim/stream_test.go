package sim

import (
	"hash/fnv"
	"math"
	"testing"
)

// The values of NewStream(1, "arrivals") are part of the reproducibility
// contract: if this test fails, a change altered every simulation result.
// Do not update the constants; fix the change.
func TestStreamGolden(t *testing.T) {
	s := NewStream(1, "arrivals")
	want := []uint64{0xccb2111582ce4671, 0x5c84349602683c4b, 0x52bfef01ba8a6760, 0x284a28630fbeb0fc}
	for i, w := range want {
		if got := s.Uint64(); got != w {
			t.Fatalf("NewStream(1, \"arrivals\") output %d = %#x, want %#x", i, got, w)
		}
	}
	s = NewStream(1, "arrivals")
	if got := s.Float64(); got != 0.7995920827404968 {
		t.Errorf("Float64 = %v", got)
	}
	if got := s.Exp(2); got != 0.8969298651481399 {
		t.Errorf("Exp(2) = %v", got)
	}
	if got := s.Intn(1000); got != 323 {
		t.Errorf("Intn(1000) = %v", got)
	}
	if got := s.Uniform(5, 7); got != 5.31476311528194 {
		t.Errorf("Uniform(5, 7) = %v", got)
	}
	if got := s.Weighted([]float64{1, 2, 3}); got != 2 {
		t.Errorf("Weighted = %v", got)
	}
	if got := Hold(1000, 100000, 1); got != (HoldStats{Pending: 1000, Events: 100000, FinalTime: 99.86914568055029}) {
		t.Errorf("Hold(1000, 100000, 1) = %+v", got)
	}
}

// The building blocks match their published reference values.
func TestStreamReferenceVectors(t *testing.T) {
	// xoshiro256** from state {1, 2, 3, 4} (reference C implementation).
	s := Stream{1, 2, 3, 4}
	for i, w := range []uint64{11520, 0, 1509978240, 1215971899390074240, 1216172134540287360, 607988272756665600} {
		if got := s.Uint64(); got != w {
			t.Fatalf("xoshiro256** output %d = %d, want %d", i, got, w)
		}
	}
	x := uint64(0)
	if got := splitmix64(&x); got != 0xe220a8397b1dcdaf {
		t.Fatalf("splitmix64(0) = %#x", got)
	}
	for _, name := range []string{"", "a", "arrivals", "breakdowns/machine-7"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		if got, want := fnv1a64(name), h.Sum64(); got != want {
			t.Fatalf("fnv1a64(%q) = %#x, want %#x", name, got, want)
		}
	}
}

func TestStreamDeterminismAndIndependence(t *testing.T) {
	a, b := NewStream(42, "arrivals"), NewStream(42, "arrivals")
	for i := 0; i < 1000; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("same (seed, name) diverged at %d: %#x vs %#x", i, x, y)
		}
	}
	// Copying a Stream forks it.
	c := a
	if a.Uint64() != c.Uint64() {
		t.Fatal("a copied Stream does not repeat the original")
	}
	// Different names, or seeds, give different sequences.
	streams := []Stream{
		NewStream(42, "arrivals"), NewStream(42, "breakdowns"), NewStream(42, "arrival"),
		NewStream(43, "arrivals"), NewStream(0, ""), NewStream(0, "x"),
	}
	seen := map[uint64]int{}
	for i := range streams {
		for k := 0; k < 100; k++ {
			v := streams[i].Uint64()
			if j, dup := seen[v]; dup {
				t.Fatalf("streams %d and %d share the value %#x", j, i, v)
			}
			seen[v] = i
		}
	}
}

func TestFloat64Range(t *testing.T) {
	s := NewStream(7, "f")
	sum := 0.0
	const n = 200000
	for i := 0; i < n; i++ {
		u := s.Float64()
		if u < 0 || u >= 1 || u != math.Ldexp(math.Floor(math.Ldexp(u, 53)), -53) {
			t.Fatalf("Float64 = %v: not a multiple of 2^-53 in [0, 1)", u)
		}
		sum += u
	}
	if m := sum / n; math.Abs(m-0.5) > 0.005 {
		t.Fatalf("mean of Float64 = %v", m)
	}
}

func TestIntn(t *testing.T) {
	s := NewStream(7, "intn")
	for _, n := range []int{1, 2, 3, 7, 10, 1000, 1<<31 + 11, math.MaxInt} {
		for i := 0; i < 2000; i++ {
			if v := s.Intn(n); v < 0 || v >= n {
				t.Fatalf("Intn(%d) = %d", n, v)
			}
		}
	}
	for _, n := range []int{0, -1, math.MinInt} {
		if v := s.Intn(n); v != 0 {
			t.Fatalf("Intn(%d) = %d, want 0", n, v)
		}
	}
	// Uniformity: chi-square over 6 cells.
	const draws = 60000
	var counts [6]int
	for i := 0; i < draws; i++ {
		counts[s.Intn(6)]++
	}
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - draws/6.0
		chi += d * d / (draws / 6.0)
	}
	if chi > 25 { // 5 degrees of freedom: P(chi2 > 25) < 2e-4
		t.Fatalf("Intn(6) counts %v, chi2 %.1f", counts, chi)
	}
}

func TestExpMean(t *testing.T) {
	s := NewStream(11, "exp")
	for _, mean := range []float64{1, 0.25, 30} {
		const n = 100000
		sum, sq := 0.0, 0.0
		for i := 0; i < n; i++ {
			x := s.Exp(mean)
			if x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				t.Fatalf("Exp(%v) = %v", mean, x)
			}
			sum += x
			sq += x * x
		}
		m := sum / n
		// The standard error of the mean is mean/sqrt(n) ~ 0.3% of mean.
		if math.Abs(m-mean) > 0.015*mean {
			t.Errorf("Exp(%v): sample mean %v", mean, m)
		}
		if v := sq/n - m*m; math.Abs(v-mean*mean) > 0.05*mean*mean {
			t.Errorf("Exp(%v): sample variance %v, want %v", mean, v, mean*mean)
		}
	}
	if x := s.Exp(0); x != 0 {
		t.Errorf("Exp(0) = %v", x)
	}
	if x := s.Exp(math.NaN()); x != 0 {
		t.Errorf("Exp(NaN) = %v", x)
	}
	if x := s.Exp(math.Inf(1)); !math.IsInf(x, 1) {
		t.Errorf("Exp(+Inf) = %v", x)
	}
}

func TestUniform(t *testing.T) {
	s := NewStream(3, "uniform")
	sum := 0.0
	for i := 0; i < 100000; i++ {
		x := s.Uniform(-2, 6)
		if x < -2 || x >= 6 {
			t.Fatalf("Uniform(-2, 6) = %v", x)
		}
		sum += x
	}
	if m := sum / 100000; math.Abs(m-2) > 0.03 {
		t.Fatalf("Uniform(-2, 6) mean %v", m)
	}
	if x := s.Uniform(4, 4); x != 4 {
		t.Fatalf("Uniform(4, 4) = %v", x)
	}
}

func TestWeighted(t *testing.T) {
	s := NewStream(5, "weighted")
	w := []float64{1, 0, 3, 6}
	const n = 100000
	counts := make([]int, len(w))
	for i := 0; i < n; i++ {
		counts[s.Weighted(w)]++
	}
	if counts[1] != 0 {
		t.Fatalf("zero weight drawn %d times", counts[1])
	}
	for i, x := range w {
		p := float64(counts[i]) / n
		if math.Abs(p-x/10) > 0.01 {
			t.Errorf("Weighted: index %d frequency %.4f, want %.2f", i, p, x/10)
		}
	}
	for _, bad := range [][]float64{nil, {}, {0, 0}, {1, -1}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		before := s
		if got := s.Weighted(bad); got != 0 {
			t.Errorf("Weighted(%v) = %d, want 0", bad, got)
		}
		// Still consumes exactly one draw.
		before.Uint64()
		if before != s {
			t.Errorf("Weighted(%v) did not consume exactly one draw", bad)
		}
	}
	if got := s.Weighted([]float64{0, 0, 5}); got != 2 {
		t.Errorf("Weighted single positive weight = %d", got)
	}
}

// detLog agrees with math.Log to within an ulp on normal numbers, and has
// the right special cases.
func TestDetLog(t *testing.T) {
	s := NewStream(9, "log")
	for i := 0; i < 300000; i++ {
		var x float64
		switch i % 3 {
		case 0:
			x = 1 - s.Float64() // what Exp uses
		case 1:
			x = math.Float64frombits(s.Uint64() >> 1) // any positive float
		default:
			x = 1 + (s.Float64()-0.5)*1e-6 // near 1
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0x1p-1022 {
			continue
		}
		got, want := detLog(x), math.Log(x)
		if got != want {
			ulp := math.Abs(math.Nextafter(want, 0) - want)
			if math.Abs(got-want) > ulp {
				t.Fatalf("detLog(%v) = %v, math.Log = %v", x, got, want)
			}
		}
	}
	// Subnormals: checked against an identity, since some math.Log
	// implementations are inexact there.
	for _, x := range []float64{5e-324, 1e-310, 2.2e-308} {
		if got, want := detLog(x), detLog(x*0x1p100)-100*math.Ln2; math.Abs(got-want) > 1e-12 {
			t.Errorf("detLog(%v) = %v, want %v", x, got, want)
		}
	}
	if v := detLog(1); v != 0 {
		t.Errorf("detLog(1) = %v", v)
	}
	if v := detLog(0); !math.IsInf(v, -1) {
		t.Errorf("detLog(0) = %v", v)
	}
	if v := detLog(-1); !math.IsNaN(v) {
		t.Errorf("detLog(-1) = %v", v)
	}
	if v := detLog(math.Inf(1)); !math.IsInf(v, 1) {
		t.Errorf("detLog(+Inf) = %v", v)
	}
	if v := detLog(math.NaN()); !math.IsNaN(v) {
		t.Errorf("detLog(NaN) = %v", v)
	}
}
