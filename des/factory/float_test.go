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

// TestTraceEncoderMatchesAppendJSON checks that the time-caching,
// word-storing encoder writes what AppendJSON writes, over runs of equal
// and changing times, every event type (an unknown one included), field
// values in and out of the small-integer table, a cell id too long for
// the words, and buffers with and without spare capacity (a record
// after others, as the trace writer's buffer holds them).
func TestTraceEncoderMatchesAppendJSON(t *testing.T) {
	in, err := Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	p := Compile(in)
	p.Cells[0].ID = "a-cell-id-longer-than-the-words-hold"
	p.cellField[0] = `,"cell":"` + p.Cells[0].ID + `"`
	if p.cellWords[0] = makeTextWords(p.cellField[0]); p.cellWords[0].ok {
		t.Fatal("a long cell field fits in the words")
	}
	var enc TraceEncoder
	r := rand.New(rand.NewPCG(3, 4))
	times := []float64{0, math.Copysign(0, -1), 1.5, 1.5, 466.4564446445338, 466.4564446445338, 1e-7, math.NaN(), math.NaN(), 2,
		-3.25, 1e300, 123456789012.5, 4503599627370495.5}
	small := func() int32 { return int32(r.IntN(3)) - 1 }
	wide := func() int32 {
		switch r.IntN(4) {
		case 0:
			return -1
		case 1:
			return int32(r.IntN(10))
		case 2:
			return int32(r.IntN(2000))
		}
		return int32(r.Uint32())
	}
	var buf []byte
	tm := 0.0
	for i := 0; i < 20000; i++ {
		rec := Record{T: times[i%len(times)], Ev: EventType(r.IntN(int(NumEventTypes) + 1)), Job: small(), Op: -1,
			Cell: int32(r.IntN(len(p.Cells)+1)) - 1, Machine: -1, From: int32(r.IntN(len(p.Cells)+1)) - 1,
			KW: float64(r.IntN(40000)) / 1000, Dur: r.ExpFloat64(), Due: float64(r.IntN(1000)) / 4, Phase: MachineState(r.IntN(5)),
			Status: Status([]string{"", "complete", "horizon"}[r.IntN(3)]), Product: int32(r.IntN(len(p.Products))),
			Ops: wide(), Seed: r.Uint64()}
		if i%2 == 0 {
			rec.Job, rec.Op, rec.Machine = wide(), wide(), wide()
		}
		if i%3 == 0 {
			rec.KW, rec.Dur, rec.Due = r.Float64(), float64(r.IntN(100))/4, r.ExpFloat64()*100
		}
		if i%7 == 0 {
			tm += r.ExpFloat64() * 10
			rec.T = tm
		}
		want := string(rec.AppendJSON(nil, p))
		if got := string(enc.Append(nil, &rec, p)); got != want {
			t.Fatalf("record %d: encoder %s, AppendJSON %s", i, got, want)
		}
		if i%50 == 0 {
			buf = make([]byte, 0, r.IntN(300))
		}
		n := len(buf)
		buf = enc.AppendLine(buf, &rec, p)
		if got := string(buf[n:]); got != want+"\n" {
			t.Fatalf("record %d after %d bytes: encoder %s, AppendJSON %s", i, n, got, want)
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
	// The trace encoder's times: no short-decimal try, after a prefix.
	c, k, ok2 := shortestDigits(f, false)
	if ok2 != ok {
		t.Fatalf("shortestDigits(%v, false) ok = %v, appendShortest's %v", f, ok2, ok)
	}
	if ok2 {
		var buf [decimalBuf]byte
		n := putDecimal(&buf, 5, f < 0, c, k)
		if got, want := string(buf[5:n]), string(got); got != want {
			t.Fatalf("shortestDigits(%v, false) (bits %#x) = %q, want %q", f, math.Float64bits(f), got, want)
		}
	}
}

// TestAppendMilliMatchesAppendFloat checks the power draws' and
// durations' path: thousandths as the engine makes them (float64(w)/1000)
// over every w below 2*10^6 and random ones up to 10^11, values next to
// them, and values outside its case.
func TestAppendMilliMatchesAppendFloat(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		if got, want := string(appendMilli(nil, f)), string(AppendFloat(nil, f)); got != want {
			t.Fatalf("appendMilli(%v) (bits %#x) = %q, want %q", f, math.Float64bits(f), got, want)
		}
	}
	for w := 0; w < 2_000_000; w++ {
		check(float64(w) / 1000)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 1_000_000; i++ {
		f := float64(r.Int64N(1e11)) / 1000
		check(f)
		check(-f)
		check(math.Nextafter(f, 0))
		check(math.Nextafter(f, math.Inf(1)))
		check(float64(r.IntN(100000)) / 10)
		check(r.ExpFloat64() * 10)
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-7, 0.0005, 0.001, 99999999.999, 1e8, 1e8 + 0.5, 1e300, math.NaN(), math.Inf(1), math.Inf(-1)} {
		check(f)
		check(-f)
	}
	for i := 0; i < 200_000; i++ { // appendLong, its fallback: due dates (times plus work), short decimals, anything
		check(r.ExpFloat64()*1000 + r.Float64()*100)
		check(float64(r.Int64N(1e9)) / 1e4)
		check(math.Float64frombits(r.Uint64()))
	}
}

// TestLog10Of2 checks shortestDigits's integer floor(q*log10(2)) over
// its range of q.
func TestLog10Of2(t *testing.T) {
	for q := uint(0); q <= 64; q++ {
		if got, want := int(q*78913>>18), int(math.Floor(float64(q)*math.Log10(2))); got != want {
			t.Fatalf("q=%d: %d, want %d", q, got, want)
		}
	}
}

// TestDigits8 checks digits8 on every value below 10^8 (every 7th with
// -short), against digits counted up one at a time.
func TestDigits8(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 7
	}
	var d [8]uint64 // the digits of x, most significant first
	for x := 0; x < 1e8; x++ {
		if x%step == 0 {
			want := d[0] | d[1]<<8 | d[2]<<16 | d[3]<<24 | d[4]<<32 | d[5]<<40 | d[6]<<48 | d[7]<<56
			if got := digits8(uint64(x)); got != want {
				t.Fatalf("digits8(%d) = %#x, want %#x", x, got, want)
			}
		}
		for i := 7; i >= 0; i-- { // x+1
			if d[i]++; d[i] < 10 {
				break
			}
			d[i] = 0
		}
	}
}

// TestPutDecimal checks putDecimal's general path (integer parts from
// 10^8, more than 16 fraction digits) and its short ones against strconv.
func TestPutDecimal(t *testing.T) {
	for _, tc := range []struct {
		c   uint64
		k   int
		neg bool
	}{{1, 0, false}, {12345678, 0, true}, {123456789, 0, false}, {1234567890123456, 8, false}, {99999999999999999, 16, false},
		{12345678901234567, 17, true}, {10000000000000001, 17, false}, {5, 1, false}, {1000000005, 9, true}, {100000000, 8, false}} {
		want := strconv.FormatUint(tc.c/pow10u64[tc.k], 10)
		if tc.k > 0 {
			f := strconv.FormatUint(tc.c%pow10u64[tc.k]+pow10u64[tc.k], 10) // a leading 1 keeps the fraction's zeros
			want += "." + f[1:]
		}
		if tc.neg {
			want = "-" + want
		}
		var buf [decimalBuf]byte
		n := putDecimal(&buf, 6, tc.neg, tc.c, tc.k)
		if got := string(buf[6:n]); got != want {
			t.Errorf("putDecimal(%d, %d, %v) = %q, want %q", tc.c, tc.k, tc.neg, got, want)
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
