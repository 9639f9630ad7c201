package sim

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// refQueue is the reference: a slice kept sorted by (Time, Class, Seq)
// with the standard library's binary search.
type refQueue struct{ evs []Event }

func cmpEvent(x, y Event) int {
	switch {
	case x.Before(y):
		return -1
	case y.Before(x):
		return 1
	}
	return 0
}

func (r *refQueue) push(e Event) {
	i, _ := slices.BinarySearchFunc(r.evs, e, cmpEvent)
	r.evs = slices.Insert(r.evs, i, e)
}

func (r *refQueue) pop() Event {
	e := r.evs[0]
	r.evs = r.evs[1:]
	return e
}

// timeGen draws event times for the ordering property tests.
type timeGen func(s *Stream, now float64, k int) float64

var timeGens = map[string]timeGen{
	"exp": func(s *Stream, now float64, k int) float64 { return now + s.Exp(1) },
	// integer times with many ties, including at now, and rare far-future events
	"clustered": func(s *Stream, now float64, k int) float64 {
		switch u := s.Intn(100); {
		case u < 30:
			return now
		case u < 97:
			return math.Floor(now) + float64(s.Intn(5))
		default:
			return now + 1000 + float64(s.Intn(3)*1000)
		}
	},
	"tiny-ties": func(s *Stream, now float64, k int) float64 { return now + float64(s.Intn(3))*1e-9 },
	"heavy-tail": func(s *Stream, now float64, k int) float64 {
		return now + math.Pow(1-s.Float64(), -1.5) - 1 // Pareto
	},
	"bimodal": func(s *Stream, now float64, k int) float64 {
		if s.Intn(2) == 0 {
			return now + s.Exp(0.001)
		}
		return now + 1e6 + s.Exp(1)
	},
	// a dense burst of distinct times far ahead of a sparse present: no
	// single bucket width suits both, the calendar falls back to its heap
	"dense-ahead": func(s *Stream, now float64, k int) float64 {
		if s.Intn(4) == 0 {
			return now + s.Exp(1)
		}
		return 1e4*(math.Floor(now/1e4)+1) + s.Float64()*1e-3
	},
	"scale-shift": func(s *Stream, now float64, k int) float64 {
		// the scale of increments changes, up to 10^6, every 20000 events
		return now + s.Exp(math.Pow(10, float64((k/20000)%7-3)))
	},
}

// checkOrdering schedules and pops events at random (interleaved), checking
// every pop against the reference, then drains both.
func checkOrdering(t *testing.T, seed uint64, gen timeGen, ops int, heap bool) {
	t.Helper()
	s := NewStream(seed, "ordering")
	c := NewCalendar(s.Intn(64))
	if heap {
		c.toHeap() // start in the fallback heap; buckets are retried later
	}
	var ref refQueue
	check := func(what string) bool {
		want := ref.pop()
		if p, ok := c.Peek(); !ok || p != want {
			t.Errorf("seed %d %s: Peek = %+v, %v; want %+v", seed, what, p, ok, want)
			return false
		}
		got, ok := c.Next()
		if !ok || got != want {
			t.Errorf("seed %d %s: Next = %+v, %v; want %+v", seed, what, got, ok, want)
			return false
		}
		if c.Now() != want.Time {
			t.Errorf("seed %d: Now = %v after popping %v", seed, c.Now(), want.Time)
			return false
		}
		return true
	}
	pushBias := 2 + s.Intn(4) // phases of growth and shrinkage
	for k := 0; k < ops; k++ {
		if k%500 == 0 {
			pushBias = 2 + s.Intn(5)
		}
		if len(ref.evs) == 0 || s.Intn(6) < pushBias {
			tm := gen(&s, c.Now(), k)
			e := Event{Time: tm, Class: uint8(s.Intn(3)), Kind: uint8(s.Intn(256)),
				A: int32(s.Uint64()), B: int32(s.Uint64()), C: int32(s.Uint64())}
			seq, err := c.Schedule(e.Time, e.Class, e.Kind, e.A, e.B, e.C)
			if err != nil {
				t.Fatalf("seed %d: Schedule(%v): %v", seed, tm, err)
			}
			e.Seq = seq
			ref.push(e)
		} else if !check("interleaved") {
			return
		}
		if c.Len() != len(ref.evs) {
			t.Fatalf("seed %d: Len = %d, want %d", seed, c.Len(), len(ref.evs))
		}
	}
	for len(ref.evs) > 0 {
		if !check("drain") {
			return
		}
	}
	if _, ok := c.Next(); ok {
		t.Fatalf("seed %d: Next on an empty calendar returned an event", seed)
	}
}

func TestOrderingMatchesReference(t *testing.T) {
	seeds := 40
	ops := 3000
	if testing.Short() {
		seeds, ops = 8, 1500
	}
	for name, gen := range timeGens {
		for _, heap := range []bool{false, true} {
			sub := name
			if heap {
				sub += "/heap-first"
			}
			t.Run(sub, func(t *testing.T) {
				for seed := uint64(1); seed <= uint64(seeds); seed++ {
					checkOrdering(t, seed, gen, ops, heap)
				}
			})
		}
	}
}

// TestOrderingLarge runs long enough for several resizes and re-estimations.
func TestOrderingLarge(t *testing.T) {
	for _, name := range []string{"exp", "clustered", "scale-shift", "dense-ahead"} {
		t.Run(name, func(t *testing.T) {
			checkOrderingFast(t, 7, timeGens[name], 200000)
		})
	}
}

// checkOrderingFast is checkOrdering with a sorted-order check instead of a
// reference queue (cheap enough for long runs): popped events must come in
// non-decreasing (Time, Class, Seq) order, except that an event scheduled at
// Now with a lower class legitimately pops after higher classes at Now.
func checkOrderingFast(t *testing.T, seed uint64, gen timeGen, ops int) {
	s := NewStream(seed, "ordering")
	c := NewCalendar(0)
	scheduled := map[uint64]Event{}
	var last Event
	popped := 0
	for k := 0; k < ops; k++ {
		bias := 3
		if (k/20000)%2 == 1 {
			bias = 2
		}
		if c.Len() == 0 || s.Intn(5) < bias {
			tm := gen(&s, c.Now(), k)
			cl := uint8(s.Intn(3))
			seq, err := c.Schedule(tm, cl, 0, 0, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			scheduled[seq] = Event{Time: tm, Seq: seq, Class: cl}
			continue
		}
		e, _ := c.Next()
		want, ok := scheduled[e.Seq]
		if !ok || want != e {
			t.Fatalf("popped %+v, scheduled %+v", e, want)
		}
		delete(scheduled, e.Seq)
		// Everything still pending must not precede e.
		if popped > 0 && e.Before(last) && !(e.Time == last.Time && e.Seq > last.Seq) {
			t.Fatalf("pop order: %+v after %+v", e, last)
		}
		last = e
		popped++
	}
	// Drain and compare with a full sort of what remains.
	rest := make([]Event, 0, len(scheduled))
	for _, e := range scheduled {
		rest = append(rest, e)
	}
	slices.SortFunc(rest, func(x, y Event) int {
		if x.Before(y) {
			return -1
		}
		return 1
	})
	for _, want := range rest {
		e, ok := c.Next()
		if !ok || e != want {
			t.Fatalf("drain: got %+v, want %+v", e, want)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("Len = %d after drain", c.Len())
	}
}

func TestClock(t *testing.T) {
	c := NewCalendar(4)
	if c.Now() != 0 || c.Len() != 0 {
		t.Fatalf("new calendar: Now %v Len %d", c.Now(), c.Len())
	}
	if _, ok := c.Next(); ok {
		t.Fatal("Next on empty calendar")
	}
	if _, ok := c.Peek(); ok {
		t.Fatal("Peek on empty calendar")
	}
	for i, tm := range []float64{5, 2, 2, 9} {
		seq, err := c.Schedule(tm, 0, 1, int32(i), 0, 0)
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("Schedule(%v) = %d, %v", tm, seq, err)
		}
	}
	e, _ := c.Next()
	if e.Time != 2 || e.Seq != 2 || c.Now() != 2 {
		t.Fatalf("first pop %+v, Now %v", e, c.Now())
	}
	if _, err := c.Schedule(1.5, 0, 0, 0, 0, 0); !errors.Is(err, ErrPast) {
		t.Fatalf("scheduling in the past: err = %v", err)
	}
	if _, err := c.Schedule(2, 0, 0, 0, 0, 0); err != nil {
		t.Fatalf("scheduling at Now: %v", err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := c.Schedule(bad, 0, 0, 0, 0, 0); !errors.Is(err, ErrBadTime) {
			t.Fatalf("Schedule(%v): err = %v", bad, err)
		}
	}
	seq := c.seq
	c.seq = maxSeq // as after 2^56-1 events: the fallback heap's packed keys hold 56 bits of Seq
	if _, err := c.Schedule(3, 0, 0, 0, 0, 0); !errors.Is(err, ErrSeqSpace) {
		t.Fatalf("Schedule with the sequence numbers exhausted: err = %v", err)
	}
	c.seq = seq
	if c.Len() != 4 {
		t.Fatalf("failed Schedules changed Len: %d", c.Len())
	}
	var times []float64
	for c.Len() > 0 {
		prev := c.Now()
		e, _ := c.Next()
		if c.Now() != e.Time || e.Time < prev {
			t.Fatalf("Now %v after popping %+v (previous %v)", c.Now(), e, prev)
		}
		times = append(times, e.Time)
	}
	if !slices.Equal(times, []float64{2, 2, 5, 9}) {
		t.Fatalf("pop times %v", times)
	}
	if c.Now() != 9 {
		t.Fatalf("Now %v, want 9", c.Now())
	}

	c.Schedule(10, 0, 0, 0, 0, 0)
	c.Reset()
	if c.Now() != 0 || c.Len() != 0 {
		t.Fatalf("after Reset: Now %v Len %d", c.Now(), c.Len())
	}
	if _, ok := c.Next(); ok {
		t.Fatal("Reset kept an event")
	}
	if seq, err := c.Schedule(0, 0, 0, 0, 0, 0); err != nil || seq != 1 {
		t.Fatalf("after Reset: Schedule(0) = %d, %v; want seq 1", seq, err)
	}
}

func TestClassAndSeqBreakTies(t *testing.T) {
	c := NewCalendar(0)
	c.Schedule(1, 2, 0, 0, 0, 0) // seq 1
	c.Schedule(1, 0, 0, 0, 0, 0) // seq 2
	c.Schedule(1, 1, 0, 0, 0, 0) // seq 3
	c.Schedule(1, 0, 0, 0, 0, 0) // seq 4
	c.Schedule(0.5, 9, 0, 0, 0, 0)
	var got []uint64
	for c.Len() > 0 {
		e, _ := c.Next()
		got = append(got, e.Seq)
	}
	if want := []uint64{5, 2, 4, 3, 1}; !slices.Equal(got, want) {
		t.Fatalf("pop order %v, want %v", got, want)
	}
}

func TestPeekThenScheduleEarlier(t *testing.T) {
	// Peek may look far ahead; a later Schedule at Now must still pop first.
	c := NewCalendar(0)
	c.Schedule(1, 0, 0, 0, 0, 0)
	c.Schedule(1e9, 0, 0, 0, 0, 0)
	c.Next()
	if e, _ := c.Peek(); e.Time != 1e9 {
		t.Fatalf("Peek %+v", e)
	}
	c.Schedule(1, 0, 0, 0, 0, 0)
	c.Schedule(3, 0, 0, 0, 0, 0)
	for _, want := range []float64{1, 3, 1e9} {
		if e, _ := c.Next(); e.Time != want {
			t.Fatalf("got %v, want %v", e.Time, want)
		}
	}
}

func TestDiscardKeepsTheClock(t *testing.T) {
	// A discarded event's time never becomes the clock's: events may still
	// be scheduled between Now and it, in both of the calendar's modes.
	for _, n := range []int{2, 5000} {
		c := NewCalendar(0)
		for i := range n {
			c.Schedule(float64(10+i), 0, 0, int32(i), 0, 0)
		}
		c.Next() // t = 10
		if !c.Discard() {
			t.Fatal("Discard of a pending event returned false")
		}
		if c.Now() != 10 || c.Len() != n-2 {
			t.Fatalf("n=%d: after Discard Now %v Len %d, want 10 and %d", n, c.Now(), c.Len(), n-2)
		}
		if _, err := c.Schedule(10.5, 0, 0, -1, 0, 0); err != nil {
			t.Fatalf("n=%d: schedule between Now and the discarded time: %v", n, err)
		}
		if e, _ := c.Next(); e.Time != 10.5 || e.A != -1 {
			t.Fatalf("n=%d: got %+v, want the event at 10.5", n, e)
		}
		if n == 2 {
			if c.Discard() || c.Len() != 0 {
				t.Fatal("Discard of an empty calendar returned true")
			}
		}
	}
}

func TestFarFutureAndHugeTimes(t *testing.T) {
	c := NewCalendar(0)
	times := []float64{math.MaxFloat64, 1e300, 1e300, 0, 1e-300, 5e-324, 1, 1e18, math.MaxFloat64 / 2}
	for _, tm := range times {
		if _, err := c.Schedule(tm, 0, 0, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(times)
	for _, want := range times {
		if e, _ := c.Next(); e.Time != want {
			t.Fatalf("got %v, want %v", e.Time, want)
		}
	}
}

func TestZeroAllocSteadyState(t *testing.T) {
	c := NewCalendar(1000)
	s := NewStream(3, "alloc")
	for i := 0; i < 1000; i++ {
		c.Schedule(s.Exp(1), 0, 0, 0, 0, 0)
	}
	for i := 0; i < 100000; i++ { // warm up: reach the steady bucket layout
		e, _ := c.Next()
		c.Schedule(e.Time+s.Exp(1), 0, 0, 0, 0, 0)
	}
	allocs := testing.AllocsPerRun(10000, func() {
		e, _ := c.Next()
		c.Schedule(e.Time+s.Exp(1), uint8(s.Intn(2)), 0, 0, 0, 0)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Next+Schedule", allocs)
	}
}

func TestHold(t *testing.T) {
	a := Hold(1000, 50000, 1)
	if a.Pending != 1000 || a.Events != 50000 {
		t.Fatalf("Hold stats %+v", a)
	}
	// Each pop advances time by about 1/N on average.
	if a.FinalTime < 30 || a.FinalTime > 70 {
		t.Fatalf("final time %v, want about 50", a.FinalTime)
	}
	if b := Hold(1000, 50000, 1); b != a {
		t.Fatalf("Hold not deterministic: %+v vs %+v", a, b)
	}
	if b := Hold(1000, 50000, 2); b.FinalTime == a.FinalTime {
		t.Fatalf("different seeds gave the same final time")
	}
	if z := Hold(0, 10, 1); z != (HoldStats{}) {
		t.Fatalf("Hold(0, 10) = %+v", z)
	}
}

// TestAdaptiveWorkBounded checks, with the calendar's own work counters
// (tie groups walked, buckets skipped) rather than wall-clock time, that no
// workload makes the buckets degrade: the work per pop stays small, and a
// distribution no bucket width suits is moved to the fallback heap.
func TestAdaptiveWorkBounded(t *testing.T) {
	for _, name := range []string{"exp", "clustered", "tiny-ties", "heavy-tail", "bimodal", "scale-shift", "dense-ahead"} {
		for _, n := range []int{100, 5000} {
			c := NewCalendar(n)
			s := NewStream(1, "work")
			gen := timeGens[name]
			for i := 0; i < n; i++ {
				c.Schedule(gen(&s, 0, 0), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			const ops = 300000
			for i := 0; i < ops; i++ {
				e, _ := c.Next()
				c.Schedule(gen(&s, e.Time, i), uint8(s.Intn(3)), 0, 0, 0, 0)
			}
			// Bucket work, amortized over all pops (heap-mode pops cost
			// about heapLimit(n) each).
			perPop := float64(c.cqWork) / float64(max(c.cqOps+c.heapOps, 1))
			t.Logf("%-11s n=%5d: %5.2f bucket work per pop, %6d pops in buckets, %6d in heap, %2d rebuilds, %d switches to heap",
				name, n, perPop, c.cqOps, c.heapOps, c.rebuilds, c.toHeaps)
			if limit := float64(heapLimit(n)); perPop > limit {
				t.Errorf("%s n=%d: %.1f bucket work per pop, over %v", name, n, perPop, limit)
			}
			if name == "dense-ahead" && c.toHeaps == 0 {
				t.Errorf("%s n=%d: never fell back to the heap", name, n)
			}
			if name == "exp" && (c.toHeaps != 0 || perPop > 3) {
				t.Errorf("exp n=%d: %.2f work/pop, %d switches to heap", n, perPop, c.toHeaps)
			}
		}
	}
}

// Growing, shrinking, re-estimating and switching to the heap and back reuse
// the calendar's buffers: once they have reached their size, nothing
// allocates, and neither does refilling after Reset.
func TestZeroAllocWithRebuilds(t *testing.T) {
	c := NewCalendar(0)
	s := NewStream(4, "alloc")
	cycle := func() {
		for i := 0; i < 3000; i++ { // grow: several rebuilds
			c.Schedule(c.Now()+s.Exp(1), uint8(s.Intn(3)), 0, 0, 0, 0)
		}
		for i := 0; i < 20000; i++ { // a phase no width suits: heap fallback
			e, _ := c.Next()
			c.Schedule(timeGens["dense-ahead"](&s, e.Time, i), 0, 0, 0, 0, 0)
		}
		for c.Len() > 0 { // shrink: more rebuilds
			c.Next()
		}
		c.Reset()
	}
	cycle()
	cycle()
	rebuilds, heaps := c.rebuilds, c.toHeaps
	if allocs := testing.AllocsPerRun(3, cycle); allocs != 0 {
		t.Fatalf("%v allocations per grow/shrink cycle", allocs)
	}
	if c.rebuilds == rebuilds || c.toHeaps == heaps {
		t.Fatalf("the cycle did not exercise rebuilds (%d) and the heap (%d)", c.rebuilds-rebuilds, c.toHeaps-heaps)
	}
}
