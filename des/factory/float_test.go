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
