package coord

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendTenthsMatchesStrconv(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		if got, want := string(appendTenths(nil, x)), strconv.FormatFloat(x, 'f', 1, 64); got != want {
			t.Fatalf("appendTenths(%v) = %q, want %q", x, got, want)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 0.05, 0.15, 0.25, 0.35, 0.45, 0.75, 1.25, 2.5, 0.95, 9.95, 99.95,
		1 << 40, 1<<40 - 0.05, -1, -0.05, math.Inf(1), math.NaN(), math.MaxFloat64, 5e-324, math.Nextafter(0.25, 1), math.Nextafter(0.25, 0)} {
		check(x)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		k := r.Int64N(1 << 30)
		check(float64(k) / 20)                                // ties and near-ties
		check(math.Nextafter(float64(k)/20, 0))               // just below
		check(math.Nextafter(float64(k)/20, math.Inf(1)))     // just above
		check(r.Float64() * math.Pow(2, float64(r.IntN(45)))) // arbitrary magnitudes
		check(math.Float64frombits(r.Uint64() >> 1))          // random bit patterns (non-negative)
	}
}

// TestAppendIntMatchesStrconv checks the memory lines' integer formatting
// (job and operation numbers, the whole part of a time) against strconv.
func TestAppendIntMatchesStrconv(t *testing.T) {
	check := func(v int) {
		if got, want := string(appendInt(nil, v)), strconv.Itoa(v); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
	for v := -1100; v <= 100000; v++ {
		check(v)
	}
	for _, v := range []int{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt32, 1 << 40} {
		check(v)
	}
}
