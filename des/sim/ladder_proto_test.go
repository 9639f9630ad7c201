//go:build ladderproto

package sim

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ladderProto is a measurement prototype, not production code: a
// ladder-style queue with one rung of unsorted buckets (events appended by
// value) and a sorted bottom array popped from its end. Every event in the
// bottom has a virtual bucket below cur, every event in the buckets one at
// or above cur, so the bottom precedes the buckets in (Time, Class, Seq)
// order. It has no width adaptation, no fallback and no error handling: it
// exists to measure what the design costs on the hold model next to the
// Calendar (TestLadderProtoOrder, BenchmarkLadderProto).
type ladderProto struct {
	bot  []Event   // sorted descending: the next event is the last one
	bk   [][]Event // bucket vb&mask holds events of virtual bucket vb >= cur
	mask uint64
	invW float64
	cur  uint64 // every bucketed event has vb >= cur; every bottom one < cur
	n    int
	now  float64
	seq  uint64
}

func newLadderProto(nb int, width float64) *ladderProto {
	return &ladderProto{bk: make([][]Event, nb), mask: uint64(nb - 1), invW: 1 / width}
}

func (q *ladderProto) vb(t float64) uint64 {
	if x := t * q.invW; x < vbClampFloat {
		return uint64(x)
	}
	return vbClamp
}

func (q *ladderProto) Schedule(t float64, class, kind uint8, a, b, c int32) uint64 {
	q.seq++
	q.n++
	e := Event{Time: t + 0, Seq: q.seq, Class: class, Kind: kind, A: a, B: b, C: c}
	v := q.vb(t)
	if v >= q.cur {
		p := &q.bk[v&q.mask]
		*p = append(*p, e)
		return q.seq
	}
	// Into the bottom, after every event that precedes it (all of them
	// have a smaller Seq, so (Time, Class) <= (t, class) means before).
	bot := append(q.bot, Event{})
	j := len(bot) - 1
	for j > 0 && (bot[j-1].Time < t || (bot[j-1].Time == t && bot[j-1].Class <= class)) {
		bot[j] = bot[j-1]
		j--
	}
	bot[j] = e
	q.bot = bot
	return q.seq
}

func (q *ladderProto) Next() (Event, bool) {
	if len(q.bot) == 0 {
		if q.n == 0 {
			return Event{}, false
		}
		q.refill()
	}
	k := len(q.bot) - 1
	e := q.bot[k]
	q.bot = q.bot[:k]
	q.n--
	q.now = e.Time
	return e, true
}

// refill moves the events of the earliest non-empty virtual bucket into the
// bottom and sorts it.
func (q *ladderProto) refill() {
	for skipped := 0; ; skipped++ {
		if skipped > len(q.bk) {
			// A year without events: jump to the earliest one.
			best := uint64(math.MaxUint64)
			for _, s := range q.bk {
				for i := range s {
					best = min(best, q.vb(s[i].Time))
				}
			}
			q.cur = best
			skipped = 0
		}
		b := q.cur & q.mask
		s := q.bk[b]
		cur := q.cur
		q.cur++
		if len(s) == 0 {
			continue
		}
		bot := q.bot[:0]
		k := 0
		for i := range s {
			if q.vb(s[i].Time) == cur {
				bot = append(bot, s[i])
			} else {
				s[k] = s[i]
				k++
			}
		}
		q.bk[b] = s[:k]
		if len(bot) == 0 {
			continue
		}
		// Insertion sort, descending; the bucket is in Seq order, so only
		// (Time, Class) is compared and equal keys keep their order
		// reversed (the larger Seq nearer the start).
		for i := 1; i < len(bot); i++ {
			x := bot[i]
			j := i
			for j > 0 && (bot[j-1].Time < x.Time || (bot[j-1].Time == x.Time && bot[j-1].Class <= x.Class)) {
				bot[j] = bot[j-1]
				j--
			}
			bot[j] = x
		}
		q.bot = bot
		return
	}
}

func TestLadderProtoOrder(t *testing.T) {
	for _, name := range []string{"exp", "clustered"} {
		c := NewCalendar(100)
		q := newLadderProto(256, 0.004)
		rng := NewStream(7, "proto")
		delay := holdDelay
		if name == "clustered" {
			delay = clusteredDelay
		}
		for i := 0; i < 1000; i++ {
			d, cl := delay(&rng, 0)
			c.Schedule(d, cl, 0, int32(i), 0, 0) //nolint:errcheck
			q.Schedule(d, cl, 0, int32(i), 0, 0)
		}
		for k := 0; k < 200000; k++ {
			e, _ := c.Next()
			f, _ := q.Next()
			if e != f {
				t.Fatalf("%s: pop %d: calendar %+v, prototype %+v", name, k, e, f)
			}
			d, cl := delay(&rng, e.Time)
			c.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0) //nolint:errcheck
			q.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0)
		}
	}
}

// BenchmarkLadderProto runs the hold model (Exp(1), 1000 pending) on the
// prototype beside the Calendar, for side-by-side ratios.
func BenchmarkLadderProto(b *testing.B) {
	for _, per := range []float64{2, 4, 8} {
		b.Run("proto-"+itoa(int(per)), func(b *testing.B) {
			n := holdN
			nb := 1
			for nb*int(per) < 8*n {
				nb *= 2
			}
			q := newLadderProto(nb, per/float64(n))
			rng := NewStream(1, "hold")
			delay := holdDelay
			for i := 0; i < n; i++ {
				d, _ := delay(&rng, 0)
				q.Schedule(d, 0, 0, int32(i), 0, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, _ := q.Next()
				d, cl := delay(&rng, e.Time)
				q.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0)
			}
			reportRate(b)
		})
	}
	b.Run("calendar", func(b *testing.B) { benchCalendarN(b, holdN, holdDelay) })
}

// TestLadderProtoCallgrind runs LADDER_CG_EVENTS hold events on the
// LADDER_CG_KERNEL ("proto-K" or "calendar") at 1000 pending, for
// instruction counts under valgrind; it is skipped unless both are set.
func TestLadderProtoCallgrind(t *testing.T) {
	kernel, events := os.Getenv("LADDER_CG_KERNEL"), os.Getenv("LADDER_CG_EVENTS")
	if kernel == "" || events == "" {
		t.Skip("LADDER_CG_KERNEL and LADDER_CG_EVENTS not set")
	}
	m, err := strconv.Atoi(events)
	if err != nil {
		t.Fatal(err)
	}
	n := holdN
	rng := NewStream(1, "hold")
	delay := holdDelay
	if kernel == "calendar" {
		c := NewCalendar(n)
		for i := 0; i < n; i++ {
			d, _ := delay(&rng, 0)
			c.Schedule(d, 0, 0, int32(i), 0, 0) //nolint:errcheck
		}
		for i := 0; i < m; i++ {
			e, _ := c.Next()
			d, cl := delay(&rng, e.Time)
			c.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0) //nolint:errcheck
		}
		return
	}
	per, _ := strconv.Atoi(strings.TrimPrefix(kernel, "proto-"))
	nb := 1
	for nb*per < 8*n {
		nb *= 2
	}
	q := newLadderProto(nb, float64(per)/float64(n))
	for i := 0; i < n; i++ {
		d, _ := delay(&rng, 0)
		q.Schedule(d, 0, 0, int32(i), 0, 0)
	}
	for i := 0; i < m; i++ {
		e, _ := q.Next()
		d, cl := delay(&rng, e.Time)
		q.Schedule(max(e.Time, e.Time+d), cl, 0, e.A, 0, 0)
	}
}
