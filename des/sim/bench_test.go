package sim

import (
	"testing"

	"github.com/coordbench/coordbench/internal/heapkernel"
	"github.com/coordbench/coordbench/internal/holdfloor"
)

// ---- Baseline: the typical Go simulator kernel, a container/heap of
// pointers to events carrying a func() callback (internal/heapkernel,
// which bench/holdcg runs under valgrind too).

type cbKernel = heapkernel.Kernel

// ---- Second reference: a typed 4-ary min-heap of Event values, with the
// same API as Calendar (what a careful non-calendar kernel would do).

type heap4 struct {
	h   []Event
	now float64
	seq uint64
}

func (q *heap4) Schedule(t float64, class, kind uint8, a, b, c int32) {
	q.seq++
	x := Event{Time: t, Seq: q.seq, Class: class, Kind: kind, A: a, B: b, C: c}
	q.h = append(q.h, x)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !x.Before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (q *heap4) Next() (Event, bool) {
	h := q.h
	if len(h) == 0 {
		return Event{}, false
	}
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	q.h = h
	i := 0
	for n > 0 {
		first := 4*i + 1
		if first >= n {
			break
		}
		m := first
		for j := first + 1; j < first+4 && j < n; j++ {
			if h[j].Before(h[m]) {
				m = j
			}
		}
		if !h[m].Before(x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = x
	}
	q.now = top.Time
	return top, true
}

// ---- Workloads. Each returns the delay of the next event given a stream.

// holdDelay is the classic hold model increment: Exp(1).
func holdDelay(s *Stream, now float64) (float64, uint8) { return s.Exp(1), 0 }

// clusteredDelay mimics the factory: integer durations (so many events
// share a time), zero-delay follow-ups, three classes, and rare far-future
// events such as breakdowns.
func clusteredDelay(s *Stream, now float64) (float64, uint8) {
	cl := uint8(s.Intn(3))
	switch u := s.Intn(10000); {
	case u < 1000:
		return 0, cl
	case u < 9995:
		return float64(1 + s.Intn(10)), cl
	default: // about 10% of the pending events end up far ahead
		return 500 + float64(s.Intn(1500)), cl
	}
}

const holdN = 1000

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "events/s")
	}
}

func benchHeap4(b *testing.B, delay func(*Stream, float64) (float64, uint8)) {
	q := &heap4{}
	rng := NewStream(1, "hold")
	for i := 0; i < holdN; i++ {
		d, cl := delay(&rng, 0)
		q.Schedule(d, cl, 0, int32(i), 0, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, _ := q.Next()
		d, cl := delay(&rng, e.Time)
		q.Schedule(e.Time+d, cl, 0, e.A, 0, 0)
	}
	reportRate(b)
}

// BenchmarkHold is the classic hold model with 1000 pending events and
// Exp(1) increments: each op pops the earliest event and schedules one.
func BenchmarkHold(b *testing.B) {
	b.Run("calendar", func(b *testing.B) { benchCalendarHold(b, holdN) })
	b.Run("container_heap", func(b *testing.B) { benchContainerHeapHold(b, holdN) })
	b.Run("typed_heap4", func(b *testing.B) { benchHeap4(b, holdDelay) })
}

// BenchmarkHoldClustered is the hold model with factory-like times: many
// ties, zero delays, classes and a few far-future events.
func BenchmarkHoldClustered(b *testing.B) {
	b.Run("calendar", func(b *testing.B) { benchCalendarN(b, holdN, clusteredDelay) })
	b.Run("container_heap", func(b *testing.B) { benchContainerHeapN(b, holdN, clusteredDelay) })
	b.Run("typed_heap4", func(b *testing.B) { benchHeap4(b, clusteredDelay) })
}

// BenchmarkHoldSize runs the hold model (Exp(1) increments) at pending-set
// sizes from 10 to 100,000 on the calendar and on the container/heap
// callback kernel, side by side: compare the two events/s of one size from
// the same run (docs/performance.md).
func BenchmarkHoldSize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000, 100000} {
		b.Run(itoa(n)+"/calendar", func(b *testing.B) { benchCalendarHold(b, n) })
		b.Run(itoa(n)+"/container_heap", func(b *testing.B) { benchContainerHeapHold(b, n) })
		b.Run(itoa(n)+"/floor", func(b *testing.B) { benchFloorN(b, n) })
	}
}

// benchCalendarHold runs the hold model with Exp(1) increments on the
// calendar, drawing the increment directly as benchFloorN does: the three
// loops of BenchmarkHoldSize differ only in the queue they call (the
// generic benchCalendarN's call through a delay function value costs
// about 8% of the calendar's time per event, which is the harness's, not
// the kernel's).
func benchCalendarHold(b *testing.B, n int) {
	c := NewCalendar(n)
	rng := NewStream(1, "hold")
	for i := 0; i < n; i++ {
		c.Schedule(rng.Exp(1), 0, 0, int32(i), 0, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, _ := c.Next()
		c.Schedule(e.Time+rng.Exp(1), 0, 0, e.A, 0, 0)
	}
	reportRate(b)
}

// benchContainerHeapHold is benchCalendarHold on the container/heap
// callback kernel: its callback draws the increment directly too.
func benchContainerHeapHold(b *testing.B, n int) {
	k := &cbKernel{}
	rng := NewStream(1, "hold")
	var proc func()
	proc = func() { k.At(k.Now()+rng.Exp(1), proc) }
	for i := 0; i < n; i++ {
		k.At(rng.Exp(1), proc)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k.Step()
	}
	reportRate(b)
}

// benchFloorN runs the hold model on the stripped calendar of
// internal/holdfloor: a floor under the calendar's time per event with
// the same draws and loop, not a contender.
func benchFloorN(b *testing.B, n int) {
	f := holdfloor.New(n)
	rng := NewStream(1, "hold")
	for i := 0; i < n; i++ {
		d, _ := holdDelay(&rng, 0)
		f.Schedule(d, int32(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, a := f.Next()
		d, _ := holdDelay(&rng, t)
		f.Schedule(t+d, a)
	}
	reportRate(b)
}

// BenchmarkHoldSkewed runs the hold model (1000 pending) on the skewed
// increments of the ordering tests, on the calendar and the container/heap
// kernel: heavy-tail and bimodal defeat any single bucket width, and
// dense-ahead sends the calendar to its fallback heap, so that path is
// measured too.
func BenchmarkHoldSkewed(b *testing.B) {
	for _, name := range []string{"clustered", "heavy-tail", "bimodal", "dense-ahead", "scale-shift"} {
		gen := timeGens[name]
		k := 0
		delay := func(s *Stream, now float64) (float64, uint8) {
			k++
			return gen(s, now, k) - now, 0
		}
		b.Run(name+"/calendar", func(b *testing.B) { k = 0; benchCalendarN(b, holdN, delay) })
		b.Run(name+"/container_heap", func(b *testing.B) { k = 0; benchContainerHeapN(b, holdN, delay) })
	}
}

func benchCalendarN(b *testing.B, n int, delay func(*Stream, float64) (float64, uint8)) {
	c := NewCalendar(n)
	rng := NewStream(1, "hold")
	for i := 0; i < n; i++ {
		d, cl := delay(&rng, 0)
		c.Schedule(d, cl, 0, int32(i), 0, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, _ := c.Next()
		d, cl := delay(&rng, e.Time)
		c.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0)
	}
	reportRate(b)
}

func benchContainerHeapN(b *testing.B, n int, delay func(*Stream, float64) (float64, uint8)) {
	k := &cbKernel{}
	rng := NewStream(1, "hold")
	var proc func()
	proc = func() {
		d, _ := delay(&rng, k.Now())
		k.At(max(k.Now(), k.Now()+d), proc)
	}
	for i := 0; i < n; i++ {
		d, _ := delay(&rng, 0)
		k.At(d, proc)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k.Step()
	}
	reportRate(b)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// BenchmarkScheduleDrain fills an empty calendar with 1000 events at random
// times then drains it; ns/op is per event (one Schedule and one Next).
func BenchmarkScheduleDrain(b *testing.B) {
	c := NewCalendar(holdN)
	rng := NewStream(1, "fill")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		c.Reset()
		for k := 0; k < holdN && i+k < b.N; k++ {
			c.Schedule(rng.Uniform(0, 100), 0, 0, 0, 0, 0)
		}
		for c.Len() > 0 {
			c.Next()
			i++
		}
	}
	reportRate(b)
}

func BenchmarkHoldFunc(b *testing.B) {
	// Hold as timed by `coordbench des bench`, including setup.
	for i := 0; i < b.N; i++ {
		Hold(holdN, 100000, uint64(i))
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)*100000/s, "events/s")
	}
}

var (
	sinkU uint64
	sinkF float64
	sinkI int
)

// BenchmarkStream measures the generator and its distributions (each loop
// accumulates into a local, so ns/op is throughput).
func BenchmarkStream(b *testing.B) {
	b.Run("Uint64", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), uint64(0)
		for i := 0; i < b.N; i++ {
			acc += s.Uint64()
		}
		sinkU = acc
	})
	b.Run("Float64", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), 0.0
		for i := 0; i < b.N; i++ {
			acc += s.Float64()
		}
		sinkF = acc
	})
	b.Run("Intn", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), 0
		for i := 0; i < b.N; i++ {
			acc += s.Intn(1000)
		}
		sinkI = acc
	})
	b.Run("Exp", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), 0.0
		for i := 0; i < b.N; i++ {
			acc += s.Exp(1)
		}
		sinkF = acc
	})
	b.Run("Uniform", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), 0.0
		for i := 0; i < b.N; i++ {
			acc += s.Uniform(2, 5)
		}
		sinkF = acc
	})
	b.Run("Weighted4", func(b *testing.B) {
		s, acc := NewStream(1, "bench"), 0
		w := []float64{1, 2, 3, 4}
		for i := 0; i < b.N; i++ {
			acc += s.Weighted(w)
		}
		sinkI = acc
	})
	b.Run("NewStream", func(b *testing.B) {
		acc := uint64(0)
		for i := 0; i < b.N; i++ {
			s := NewStream(uint64(i), "arrivals")
			acc += s.s0
		}
		sinkU = acc
	})
}

// BenchmarkWorkloads runs the hold model (1000 pending) on the skewed time
// distributions of the ordering tests, on the calendar and on the typed
// heap: the calendar should never be much slower than the heap, since it
// falls back to one when buckets do not suit the distribution.
func BenchmarkWorkloads(b *testing.B) {
	for _, name := range []string{"exp", "clustered", "tiny-ties", "heavy-tail", "bimodal", "scale-shift", "dense-ahead"} {
		gen := timeGens[name]
		b.Run(name+"/calendar", func(b *testing.B) {
			c := NewCalendar(holdN)
			s := NewStream(1, "work")
			for i := 0; i < holdN; i++ {
				c.Schedule(gen(&s, 0, 0), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, _ := c.Next()
				c.Schedule(gen(&s, e.Time, i), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			reportRate(b)
		})
		b.Run(name+"/typed_heap4", func(b *testing.B) {
			q := &heap4{}
			s := NewStream(1, "work")
			for i := 0; i < holdN; i++ {
				q.Schedule(gen(&s, 0, 0), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, _ := q.Next()
				q.Schedule(gen(&s, e.Time, i), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			reportRate(b)
		})
	}
}
