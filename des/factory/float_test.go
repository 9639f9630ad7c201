package factory

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refFloat is AppendFloat without its fast path: encoding/json's format.
func refFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func checkFloat(t *testing.T, f float64) {
	t.Helper()
	if got, want := string(AppendFloat(nil, f)), refFloat(f); got != want {
		t.Fatalf("AppendFloat(%v) (bits %#x) = %q, want %q", f, math.Float64bits(f), got, want)
	}
}

// TestAppendFloatMatchesStrconv checks the trace's float formatting, fast
// path included, byte for byte against strconv on edge values, short
// decimals (the trace's usual times and durations), sums of such
// decimals (inexact binary values), and random bit patterns.
func TestAppendFloatMatchesStrconv(t *testing.T) {
	edges := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 0.3, 1e-6, 1e-7, 9.999999e-7, 1.0000001e-6,
		1 << 52, 1<<52 - 1, 1<<52 - 0.5, 1 << 53, 1e15, 1e16, 1e21, 1e20, 123456789.123456789, 0.000123,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(),
		4503599627370495.5, 450359962737049.55, 2.5, 0.05, 0.15, 1.005, 100.25, 7.000000000000001}
	for _, f := range edges {
		checkFloat(t, f)
		checkFloat(t, -f)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		k := r.IntN(12)
		m := r.Int64N(int64(1) << uint(1+r.IntN(53)))
		f := float64(m) / math.Pow(10, float64(k))
		checkFloat(t, f)
		checkFloat(t, f+float64(r.IntN(100))/10) // an inexact sum, as simulation times are
		checkFloat(t, math.Float64frombits(r.Uint64()))
		checkFloat(t, math.Nextafter(f, math.Inf(1)))
		checkFloat(t, r.ExpFloat64()*100)
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1.5, 0.1, 12.34, 1e-6, 1 << 52, 123.456789} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) { checkFloat(t, x) })
}

var sinkBytes []byte

// BenchmarkAppendFloat formats typical trace values (times with two
// decimals and inexact sums).
func BenchmarkAppendFloat(b *testing.B) {
	vals := make([]float64, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range vals {
		vals[i] = float64(r.IntN(100000))/100 + float64(i%3)*0.1
	}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendFloat(buf[:0], vals[i&1023])
	}
	sinkBytes = buf
}

// TestTraceEncoderMatchesAppendJSON checks that the time-caching encoder
// writes what AppendJSON writes, over runs of equal and changing times.
func TestTraceEncoderMatchesAppendJSON(t *testing.T) {
	in, err := Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	p := Compile(in)
	var enc TraceEncoder
	r := rand.New(rand.NewPCG(3, 4))
	times := []float64{0, math.Copysign(0, -1), 1.5, 1.5, 466.4564446445338, 466.4564446445338, 1e-7, math.NaN(), math.NaN(), 2}
	for i := 0; i < 2000; i++ {
		rec := Record{T: times[i%len(times)], Ev: EventType(r.IntN(int(EvEpisodeEnd))), Job: int32(r.IntN(3)) - 1, Op: -1,
			Cell: int32(r.IntN(len(p.Cells)+1)) - 1, Machine: -1, From: -1, KW: r.Float64(), Dur: r.ExpFloat64()}
		if i%7 == 0 {
			rec.T = r.ExpFloat64() * 1000
		}
		if got, want := string(enc.Append(nil, &rec, p)), string(rec.AppendJSON(nil, p)); got != want {
			t.Fatalf("record %d: encoder %s, AppendJSON %s", i, got, want)
		}
	}
}

func TestAppendIntMatchesStrconv(t *testing.T) {
	check := func(v int32) {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(int64(v), 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
	for v := int32(-2000); v <= 2000; v++ {
		check(v)
	}
	for _, v := range []int32{math.MinInt32, math.MinInt32 + 1, math.MaxInt32, 9999, 10000, 123456} {
		check(v)
	}
}

func checkShortest(t *testing.T, f float64) {
	t.Helper()
	got, ok := appendShortest(nil, f)
	if a := math.Abs(f); a >= 1 && a < 1<<53 && a != math.Trunc(a) && !ok {
		t.Fatalf("appendShortest(%v) (bits %#x) declined a value of its range", f, math.Float64bits(f))
	}
	if ok {
		if want := strconv.FormatFloat(f, 'f', -1, 64); string(got) != want {
			t.Fatalf("appendShortest(%v) (bits %#x) = %q, want %q", f, math.Float64bits(f), got, want)
		}
	}
}

// TestAppendShortestMatchesStrconv checks the exact shortest-digits path
// against strconv on every kind of value of its range: random bit
// patterns, simulation-like times (sums of exponential draws and integer
// durations), powers of two and their neighbours, values next to short
// decimals (the candidates' ties and interval bounds), and the ends of
// the range.
func TestAppendShortestMatchesStrconv(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	r := rand.New(rand.NewPCG(5, 6))
	for e := -1; e <= 54; e++ {
		p := math.Ldexp(1, e)
		for _, f := range []float64{p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), p * 1.5, p + 0.5, p - 0.5, p - 0.25} {
			checkShortest(t, f)
			checkShortest(t, -f)
		}
	}
	for _, f := range []float64{1, 1 << 53, math.Nextafter(1<<53, 0), 4503599627370495.5, 1.0000000000000002, 9.999999999999998, 10.000000000000002,
		99.99999999999999, 0.1 + 0.2 + 1, 38.61076394652249, 43.441364317292724, 466.4564446445338} {
		checkShortest(t, f)
		checkShortest(t, -f)
	}
	tm := 0.0
	for i := 0; i < n; i++ {
		// random bit patterns in [1, 2^53)
		f := math.Float64frombits(uint64(1023+r.IntN(53))<<52 | r.Uint64()&(1<<52-1))
		checkShortest(t, f)
		// times: sums of exponential draws, plus integer durations
		tm += r.ExpFloat64() * 10
		if tm > 1e6 {
			tm = r.Float64()
		}
		checkShortest(t, tm)
		checkShortest(t, tm+float64(r.IntN(60)))
		// next to a short decimal
		k := r.IntN(16)
		d := float64(1+r.Int64N(int64(1)<<uint(1+r.IntN(52)))) / math.Pow(10, float64(k))
		checkShortest(t, d)
		checkShortest(t, math.Nextafter(d, 0))
		checkShortest(t, math.Nextafter(d, math.Inf(1)))
	}
}

// BenchmarkAppendFloatTimes formats simulation-like times (long binary
// tails), the trace's most expensive floats.
func BenchmarkAppendFloatTimes(b *testing.B) {
	vals := make([]float64, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	t := 0.0
	for i := range vals {
		t += r.ExpFloat64() * 10
		vals[i] = t
	}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendFloat(buf[:0], vals[i&1023])
	}
	sinkBytes = buf
}
