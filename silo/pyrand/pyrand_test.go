package pyrand

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestMT19937Reference checks the core against the reference output of
// mt19937ar.c (init_by_array({0x123, 0x234, 0x345, 0x456})), independently of
// CPython's seeding.
func TestMT19937Reference(t *testing.T) {
	var r Random
	r.initByArray([]uint32{0x123, 0x234, 0x345, 0x456})
	want := []uint32{1067595299, 955945823, 477289528, 4107218783, 4228976476}
	for i, w := range want {
		if got := r.uint32(); got != w {
			t.Fatalf("output %d = %d, want %d", i, got, w)
		}
	}
}

func TestNegativeSeedUsesAbsoluteValue(t *testing.T) {
	for _, s := range []int64{7, 1 << 40, math.MaxInt64} {
		if New(-s).State() != New(s).State() {
			t.Errorf("New(%d) and New(%d) differ", -s, s)
		}
	}
	// |MinInt64| = 2^63 must not overflow: words 0 and 0x80000000.
	var want Random
	want.initByArray([]uint32{0, 0x80000000})
	if New(math.MinInt64).State() != want.State() {
		t.Error("New(MinInt64) is not seeded with 2**63")
	}
}

func TestSeedResets(t *testing.T) {
	r := New(42)
	first := []float64{r.Random(), r.Random()}
	for range 1000 {
		r.Random()
	}
	r.Seed(42)
	if got := []float64{r.Random(), r.Random()}; !slices.Equal(got, first) {
		t.Errorf("after Seed(42): %v, want %v", got, first)
	}
}

func TestZeroValueIsSeedZero(t *testing.T) {
	var z Random
	r := New(0)
	for i := range 2000 {
		if a, b := z.Random(), r.Random(); a != b {
			t.Fatalf("draw %d: zero value %v, New(0) %v", i, a, b)
		}
	}
	var z2 Random
	if z2.State() != New(0).State() {
		t.Error("zero value State() differs from New(0)")
	}
}

func TestStateRoundTrip(t *testing.T) {
	r := New(12345)
	for range 700 { // cross a refill boundary
		r.RandInt(0, 1000)
	}
	st := r.State()
	if st[624] > 624 {
		t.Fatalf("position %d", st[624])
	}
	var c Random
	if err := c.SetState(st); err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		if a, b := r.Random(), c.Random(); a != b {
			t.Fatalf("draw %d after SetState: %v vs %v", i, a, b)
		}
	}
	bad := st
	bad[624] = 625
	before := c.State()
	if err := c.SetState(bad); err == nil {
		t.Error("SetState accepted position 625")
	}
	if c.State() != before {
		t.Error("failed SetState changed the state")
	}
}

// TestInvalidArgumentsConsumeNothing checks the documented zero results and
// that the stream is left untouched.
func TestInvalidArgumentsConsumeNothing(t *testing.T) {
	r := New(42)
	before := r.State()
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"GetRandBits(0)", r.GetRandBits(0), uint64(0)},
		{"GetRandBits(-1)", r.GetRandBits(-1), uint64(0)},
		{"GetRandBits(65)", r.GetRandBits(65), uint64(0)},
		{"RandBelow(0)", r.RandBelow(0), 0},
		{"RandBelow(-3)", r.RandBelow(-3), 0},
		{"RandRange(5, 5)", r.RandRange(5, 5), 0},
		{"RandRange(5, 1)", r.RandRange(5, 1), 0},
		{"RandInt(2, 1)", r.RandInt(2, 1), 0},
		{"Choice(0)", r.Choice(0), 0},
		{"Choice(-1)", r.Choice(-1), 0},
		{"Sample(3, 4) == nil", r.Sample(3, 4) == nil, true},
		{"Sample(3, -1) == nil", r.Sample(3, -1) == nil, true},
		{"Sample(-1, 0) == nil", r.Sample(-1, 0) == nil, true},
		{"len(Sample(0, 0))", len(r.Sample(0, 0)), 0},
		{"Sample(10, 0) != nil", r.Sample(10, 0) != nil, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, n := range []int{-1, 0, 1} {
		r.Shuffle(n, func(i, j int) { t.Errorf("Shuffle(%d) called swap(%d, %d)", n, i, j) })
	}
	if r.State() != before {
		t.Error("invalid arguments consumed randomness")
	}
}

func TestRanges(t *testing.T) {
	r := New(1)
	for range 5000 {
		if v := r.RandInt(-3, 3); v < -3 || v > 3 {
			t.Fatalf("RandInt(-3, 3) = %d", v)
		}
		if v := r.RandRange(10, 12); v < 10 || v >= 12 {
			t.Fatalf("RandRange(10, 12) = %d", v)
		}
		if v := r.RandRange(math.MinInt, math.MaxInt); v == math.MaxInt {
			t.Fatalf("RandRange(MinInt, MaxInt) = MaxInt")
		}
		if v := r.Random(); v < 0 || v >= 1 {
			t.Fatalf("Random() = %v", v)
		}
		if v := r.GetRandBits(5); v >= 32 {
			t.Fatalf("GetRandBits(5) = %d", v)
		}
		if v := r.Uniform(10, 0); v < 0 || v > 10 {
			t.Fatalf("Uniform(10, 0) = %v", v)
		}
		if v := r.RandInt(7, 7); v != 7 {
			t.Fatalf("RandInt(7, 7) = %d", v)
		}
	}
	// Whole int range: both signs must occur.
	var neg, pos bool
	for range 200 {
		v := r.RandInt(math.MinInt, math.MaxInt)
		neg = neg || v < 0
		pos = pos || v > 0
	}
	if !neg || !pos {
		t.Errorf("RandInt over the whole int range: negative %v, positive %v", neg, pos)
	}
}

func TestSampleIsPermutationPrefix(t *testing.T) {
	r := New(3)
	for _, c := range [][2]int{{5, 5}, {100, 10}, {85, 20}, {86, 20}, {1000, 300}, {10, 1}} {
		s := r.Sample(c[0], c[1])
		if len(s) != c[1] {
			t.Fatalf("Sample(%d, %d) has length %d", c[0], c[1], len(s))
		}
		seen := map[int]bool{}
		for _, v := range s {
			if v < 0 || v >= c[0] || seen[v] {
				t.Fatalf("Sample(%d, %d) = %v: bad or repeated element %d", c[0], c[1], s, v)
			}
			seen[v] = true
		}
	}
}

// TestSampleSetSize compares the integer computation with CPython's
// floating-point formula 21 + 4**ceil(log(3k)/log(4)).
func TestSampleSetSize(t *testing.T) {
	for k := 0; k <= 1_000_000; k++ {
		want := 21
		if k > 5 {
			want += int(math.Pow(4, math.Ceil(math.Log(float64(3*k))/math.Log(4))))
		}
		if got := sampleSetSize(k); got != want {
			t.Fatalf("sampleSetSize(%d) = %d, want %d", k, got, want)
		}
	}
	if got := sampleSetSize(math.MaxInt / 2); got != math.MaxInt {
		t.Errorf("sampleSetSize(MaxInt/2) = %d, want saturation", got)
	}
}

func BenchmarkRandom(b *testing.B) {
	r := New(42)
	var s float64
	for b.Loop() {
		s += r.Random()
	}
	_ = s
}

func BenchmarkRandInt(b *testing.B) {
	r := New(42)
	var s int
	for b.Loop() {
		s += r.RandInt(-1000, 1000)
	}
	_ = s
}

func ExampleRandom() {
	r := New(42)                   // random.seed(42)
	fmt.Println(r.Random())        // random.random()
	fmt.Println(r.RandInt(1, 100)) // random.randint(1, 100)
	fmt.Println(r.Choice(3))       // index of random.choice(["a", "b", "c"])
	fmt.Println(r.Uniform(0, 100)) // random.uniform(0, 100)
	fmt.Println(r.Sample(10, 3))   // random.sample(range(10), 3)
	// Output:
	// 0.6394267984578837
	// 4
	// 2
	// 27.502931836911927
	// [3 2 1]
}
