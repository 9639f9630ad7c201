// Package holdfloor is a calendar queue with everything but the hold
// model's bare work taken out: a fixed bucket count and width (sized for
// Exp(1) increments at N pending), no time checks, no (Class, Seq) tie
// order, no adaptation or fallback, an event of a time and one integer. It
// is a measurement, not a kernel anyone should use: the time and the
// instructions per event it takes are a floor under what the calendar of
// des/sim can take with the same draws and loop (docs/performance-history.md,
// "Kernel: a floor under the calendar"). des/sim's hold benchmarks and
// bench/holdcg run it beside the calendar.
package holdfloor

// Queue is the floor calendar. The zero value is not usable: use New.
type Queue struct {
	nodes []snode // nodes[0] is the sentinel (time +Inf in effect)
	heads []int32
	mask  uint64
	invW  float64
	cur   uint64
	free  int32
	now   float64
}

type snode struct {
	t    float64
	vb   uint64
	next int32
	a    int32
}

// New returns an empty floor queue sized for n pending events with Exp(1)
// increments.
func New(n int) *Queue {
	nb := 16
	for nb < 4*n {
		nb *= 2
	}
	s := &Queue{nodes: make([]snode, n+2), heads: make([]int32, nb), mask: uint64(nb - 1), invW: float64(n) / 0.75}
	s.nodes[0].t = 1e308
	for i := 1; i < n+1; i++ {
		s.nodes[i].next = int32(i + 1)
	}
	s.free = 1
	return s
}

// Schedule adds an event at t (no check: t >= Now() and finite).
func (s *Queue) Schedule(t float64, a int32) {
	i := s.free
	x := &s.nodes[i]
	s.free = x.next
	x.t, x.a = t, a
	v := uint64(int64(t * s.invW))
	x.vb = v
	link := &s.heads[v&s.mask]
	for {
		q := &s.nodes[*link]
		if q.t > t {
			x.next = *link
			*link = i
			return
		}
		link = &q.next
	}
}

// Next pops the earliest event (the queue must not be empty).
func (s *Queue) Next() (float64, int32) {
	for cur := s.cur; ; cur++ {
		b := cur & s.mask
		if h := s.heads[b]; h != 0 && s.nodes[h].vb == cur {
			x := &s.nodes[h]
			s.heads[b] = x.next
			x.next = s.free
			s.free = h
			s.cur = cur
			s.now = x.t
			return x.t, x.a
		}
	}
}

// Now is the time of the last event popped.
func (s *Queue) Now() float64 { return s.now }
