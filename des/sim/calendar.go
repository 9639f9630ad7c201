package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Event is one scheduled occurrence. Kind and A/B/C are opaque to the kernel.
type Event struct {
	Time    float64 // simulation time, in the instance's time unit
	Seq     uint64  // insertion sequence, assigned by Schedule (1, 2, 3, ...)
	Class   uint8   // priority class: at equal Time, lower Class first
	Kind    uint8
	A, B, C int32
}

// Before reports whether e is ordered strictly before f in the calendar's
// total order (Time, Class, Seq).
func (e Event) Before(f Event) bool {
	if e.Time != f.Time {
		return e.Time < f.Time
	}
	if e.Class != f.Class {
		return e.Class < f.Class
	}
	return e.Seq < f.Seq
}

// Errors returned by Schedule, wrapped with details: test them with errors.Is.
var (
	ErrBadTime  = errors.New("sim: event time is NaN or infinite")
	ErrPast     = errors.New("sim: event time is before the current time")
	ErrSeqSpace = errors.New("sim: sequence numbers exhausted (2^56-1 events scheduled)")
	ErrFull     = errors.New("sim: too many pending events")
)

// Calendar orders pending events by (Time, Class, Seq) and owns the clock.
//
// It is a calendar queue (R. Brown, CACM 31(10), 1988): a power-of-two array
// of buckets, bucket i holding the events whose time falls in a slot
// [k*width, (k+1)*width) with k = i modulo the number of buckets, so the
// slots wrap around every "year" of nbuckets*width. Each bucket is a linked
// list sorted by (Time, Class, Seq) and made of tie groups: the events that
// share one (Time, Class) form a FIFO (a newer event always has the larger
// Seq), so many events at equal times cost O(1) each. Popping serves the
// buckets in turn; inserting walks only the tie groups of one bucket.
//
// The bucket count follows the number of pending events, and the width is
// re-estimated from the spacing of the earliest events whenever the bucket
// count changes or the measured work per operation (tie groups walked, empty
// buckets skipped) drifts too high. If re-estimating does not bring the work
// down (a distribution no single width suits, e.g. a dense burst of distinct
// times far ahead of a sparse present), the calendar falls back to a 4-ary
// heap, O(log n) per operation, and retries buckets later with exponential
// back-off. Whatever the layout, events pop in exactly (Time, Class, Seq)
// order, so results never depend on it.
//
// Memory is a slab of nodes recycled through a free list: Schedule and Next
// do not allocate in steady state.
type Calendar struct {
	nodes []node  // slab; nodes[0] is the sentinel, free nodes are chained through next
	data  []Event // the nodes' events, index for index
	free  int32   // head of the free list, or 0
	heads []int32 // first node of each bucket, or 0 (the sentinel)
	mask  uint64  // len(heads) - 1
	width float64 // bucket width, > 0
	invW  float64 // 1/width
	cur   uint64  // virtual bucket being served: every pending event has vb >= cur
	n     int     // pending events
	now   float64
	seq   uint64

	// Fallback heap; used instead of the buckets while heapMode is set.
	heapMode bool
	heap     []hent

	// Adaptation. Work is counted in tie groups walked by inserts and
	// buckets skipped by pops; it is checked every checkEvery pops, and over
	// epochs of window pops.
	ops, walk, skip     int
	epochOps, epochWork int
	window              int  // pops per epoch
	calibrated          bool // the width was estimated at least once
	reestimated         bool // the width was re-estimated for too much work
	probation           bool // buckets are being retried after a heap period
	heapWindow          int  // pops in heap mode before retrying buckets
	growAt, shrinkAt    int  // pending counts that trigger a resize
	workBudget          int  // work that triggers a check before checkEvery pops
	rebuilds, toHeaps   int  // statistics, for tests and tuning
	cqOps, cqWork       int  // pops and their work in bucket mode (checked windows)
	heapOps             int  // pops in heap mode (checked windows)

	scratch []int32 // rebuild buffers, kept to avoid allocation
	tails   []int32
}

// node is the hot part of one pending event in the slab: what inserting
// and popping read, its time and list links. The event itself is in the
// parallel slab data, read when it is copied out and to break a tie of
// times. Kept apart, the hot part of a thousand events and the buckets
// fit in a core's first-level cache.
type node struct {
	t     float64 // Event.Time
	vb    uint64  // virtual bucket of t under the current width (bucket mode)
	next  int32   // next node in the bucket (or in the free list), or 0
	glast int32   // on the first node of a tie group: the group's last node
}

// before reports whether the event of node i is ordered before that of j.
func (c *Calendar) before(i, j int32) bool {
	x, y := &c.nodes[i], &c.nodes[j]
	if x.t != y.t {
		return x.t < y.t
	}
	p, q := &c.data[i], &c.data[j]
	if p.Class != q.Class {
		return p.Class < q.Class
	}
	return p.Seq < q.Seq
}

// hent is an entry of the fallback heap: the event's (Time, Class, Seq)
// packed into two integers that order like it, so that comparing two
// entries takes no branch.
type hent struct {
	t   uint64 // math.Float64bits(Time): for Time >= 0, ordered like Time
	cs  uint64 // Class<<56 | Seq (Seq < 2^56, see maxSeq)
	idx int32
}

func newHent(e *Event, idx int32) hent {
	return hent{t: math.Float64bits(e.Time), cs: uint64(e.Class)<<56 | e.Seq, idx: idx}
}

// less is 1 if x is ordered before y, else 0, computed without branches.
func (x *hent) less(y *hent) uint64 {
	return b2u(x.t < y.t) | b2u(x.t == y.t)&b2u(x.cs < y.cs)
}

// b2u is 1 for true (compiled to a flag set, not a branch).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

const (
	minBuckets   = 16
	maxLoad      = 0.25    // pending events per bucket above which buckets double
	widthFactor  = 0.75    // width = widthFactor * mean separation of the earliest distinct times
	widthSample  = 64      // separations used for the estimate
	reestimateAt = 4       // work per pop, over an epoch, that triggers a width re-estimation
	checkEvery   = 256     // pops between adaptation checks
	maxWindow    = 1 << 26 // cap of the back-off
	vbClamp      = 1 << 62 // virtual bucket numbers saturate here (far-future times)
	vbClampFloat = float64(vbClamp)
	maxSeq       = 1<<56 - 1 // sequence numbers fit in 56 bits (see hent)
)

// NewCalendar returns an empty calendar at time 0 with room for about
// sizeHint pending events before its storage needs to grow.
func NewCalendar(sizeHint int) *Calendar {
	if sizeHint < minBuckets {
		sizeHint = minBuckets
	}
	if sizeHint > 1<<20 {
		sizeHint = 1 << 20
	}
	c := &Calendar{nodes: make([]node, 1, sizeHint+1), data: make([]Event, 1, sizeHint+1)}
	c.Reset()
	return c
}

// Now returns the time of the last popped event (0 at start).
func (c *Calendar) Now() float64 { return c.now }

// Len returns the number of pending events.
func (c *Calendar) Len() int { return c.n }

// Schedule adds an event at time t and returns its sequence number. It
// fails, leaving the calendar unchanged, if t is NaN or infinite or if
// t < Now().
func (c *Calendar) Schedule(t float64, class, kind uint8, a, b, cc int32) (uint64, error) {
	if !(t >= c.now) || t > math.MaxFloat64 || c.seq >= maxSeq {
		return 0, c.badSchedule(t)
	}
	i := c.free
	if i == 0 {
		if len(c.nodes) >= math.MaxInt32 {
			return 0, ErrFull
		}
		i = int32(len(c.nodes))
		c.nodes = append(c.nodes, node{})
		c.data = append(c.data, Event{})
	}
	c.seq++
	nodes := c.nodes
	x := &nodes[i]
	c.free = x.next // 0 for a new node
	t += 0          // -0 becomes +0
	x.t = t
	// Field by field: building a payload and copying it would make the
	// CPU reload small stores as one wide load (a store-forwarding stall).
	d := &c.data[i]
	d.Time = t
	d.Seq = c.seq
	d.Class = class
	d.Kind = kind
	d.A, d.B, d.C = a, b, cc
	c.n++
	if c.heapMode {
		c.heapPush(newHent(d, i))
		return c.seq, nil
	}

	// Link x into its bucket after every event that precedes it.
	v := c.vb(t)
	x.vb = v
	if v < c.cur {
		c.cur = v // only after a Peek that moved cur past an empty bucket
	}
	link := &c.heads[v&c.mask]
	steps := 0
	for {
		q := &nodes[*link] // the sentinel (Time +Inf) ends every list
		if q.t > t || (q.t == t && c.data[*link].Class > class) {
			x.next = *link
			x.glast = i
			*link = i
			break
		}
		if q.t == t && c.data[*link].Class == class {
			// Same (Time, Class): x has the largest Seq, it ends the group.
			g := &nodes[q.glast]
			x.next = g.next
			g.next = i
			q.glast = i
			break
		}
		link = &nodes[q.glast].next // skip the whole tie group
		steps++
	}
	if steps != 0 {
		if c.walk += steps; c.walk > c.workBudget {
			c.ops = checkEvery // check at the next pop
		}
	}
	if c.n > c.growAt {
		c.rebuild(2*len(c.heads), false)
	}
	return c.seq, nil
}

func (c *Calendar) badSchedule(t float64) error {
	switch {
	case math.IsNaN(t) || math.IsInf(t, 0):
		return fmt.Errorf("%w: %v", ErrBadTime, t)
	case t < c.now:
		return fmt.Errorf("%w: %v < now %v", ErrPast, t, c.now)
	}
	return ErrSeqSpace
}

// Next pops the earliest pending event and advances the clock to its time.
// It returns false if the calendar is empty.
func (c *Calendar) Next() (Event, bool) {
	// Small enough to be inlined: the event is copied once, from its node
	// (free again, but untouched until the next Schedule) to the caller.
	if h := c.pop(); h != 0 {
		return c.data[h], true
	}
	return Event{}, false
}

// Discard removes the earliest pending event without moving the clock (it
// returns false if the calendar is empty): for an event its owner knows to
// be void, such as a completion cancelled by a breakdown, whose time must
// not become the clock's, since the owner never reached it. Events may
// still be scheduled from Now() on, before the discarded one's time.
func (c *Calendar) Discard() bool {
	now := c.now
	if c.pop() == 0 {
		return false
	}
	c.now = now
	return true
}

// pop unlinks the earliest pending event, advances the clock to its time
// and returns its node, now on the free list (0 if the calendar is empty).
func (c *Calendar) pop() int32 {
	if c.n == 0 || c.heapMode {
		if c.n == 0 {
			return 0
		}
		return c.heapPop()
	}
	nodes, heads, mask := c.nodes, c.heads, c.mask
	// locate, written out: serve the buckets in turn from cur.
	cur := c.cur
	b := cur & mask
	h := heads[b]
	if nodes[h].vb != cur { // the sentinel's vb matches no bucket
		skipped := 0
		for {
			cur++
			if skipped++; skipped > len(heads) {
				h, b = c.searchHeads() // counts its own work
				skipped = 0
				break
			}
			b = cur & mask
			if h = heads[b]; nodes[h].vb == cur {
				c.cur = cur
				break
			}
		}
		c.skip += skipped
	}
	x := &nodes[h]
	nx := x.next
	c.heads[b] = nx
	if g := x.glast; g != h {
		nodes[nx].glast = g // the rest of x's tie group: nx now heads it
	}
	x.next = c.free
	c.free = h
	c.n--
	c.now = x.t
	if c.n < c.shrinkAt {
		c.rebuild(len(c.heads)/2, false)
	} else if c.ops++; c.ops >= checkEvery {
		c.adapt()
	}
	return h
}

// Peek returns the earliest pending event without popping it.
func (c *Calendar) Peek() (Event, bool) {
	if c.n == 0 {
		return Event{}, false
	}
	if c.heapMode {
		return c.data[c.heap[0].idx], true
	}
	h, _ := c.locate()
	return c.data[h], true
}

// Reset empties the calendar and sets the clock and the sequence counter to
// 0, keeping its memory.
func (c *Calendar) Reset() {
	c.nodes, c.data = c.nodes[:1], c.data[:1]
	// The sentinel: after every event, and in no virtual bucket (cur never
	// exceeds vbClamp), so that an empty bucket's head never matches cur.
	c.nodes[0] = node{t: math.Inf(1), vb: math.MaxUint64}
	c.data[0] = Event{Time: math.Inf(1), Class: math.MaxUint8}
	c.free = 0
	if cap(c.heads) < minBuckets {
		c.heads = make([]int32, minBuckets)
	}
	c.heads = c.heads[:minBuckets]
	clear(c.heads)
	c.mask = minBuckets - 1
	c.setWidth(1)
	c.cur = 0
	c.n = 0
	c.now = 0
	c.seq = 0
	c.heapMode = false
	c.heap = c.heap[:0]
	c.ops, c.walk, c.skip = 0, 0, 0
	c.epochOps, c.epochWork = 0, 0
	c.window = checkEvery
	c.calibrated, c.reestimated, c.probation = false, false, false
	c.heapWindow = 0
	c.setThresholds()
}

func (c *Calendar) setWidth(w float64) {
	c.width = w
	c.invW = 1 / w
}

func (c *Calendar) setThresholds() {
	nb := len(c.heads)
	c.growAt = int(float64(nb) * maxLoad)
	if nb >= 1<<30 {
		c.growAt = math.MaxInt
	}
	c.shrinkAt = int(float64(nb) * maxLoad / 4)
	if nb <= minBuckets {
		c.shrinkAt = -1
	}
	c.workBudget = heapLimit(nb) * checkEvery
}

// vb returns the virtual bucket of time t: floor(t/width), saturated. It is
// monotone in t, so sorting by time also sorts by virtual bucket.
func (c *Calendar) vb(t float64) uint64 {
	x := t * c.invW
	if x < vbClampFloat {
		return uint64(int64(x)) // x in [0, 2^62): one signed conversion
	}
	return vbClamp
}

// locate finds the earliest pending event (c.n > 0), returning its node and
// bucket, and moves cur to its virtual bucket.
func (c *Calendar) locate() (int32, uint64) {
	nodes, heads, mask := c.nodes, c.heads, c.mask
	cur := c.cur
	for skipped := 0; skipped <= len(heads); skipped++ {
		b := cur & mask
		if h := heads[b]; nodes[h].vb == cur {
			c.cur = cur
			c.skip += skipped
			return h, b
		}
		cur++
	}
	return c.searchHeads()
}

// searchHeads finds the earliest pending event among the bucket heads
// after a whole year of buckets without one, and moves cur to it.
func (c *Calendar) searchHeads() (int32, uint64) {
	nodes, heads := c.nodes, c.heads
	best, bb := int32(0), uint64(0)
	for b, h := range heads {
		if h != 0 && (best == 0 || c.before(h, best)) {
			best, bb = h, uint64(b)
		}
	}
	c.cur = nodes[best].vb
	if c.skip += 2 * len(heads); c.skip > c.workBudget {
		c.ops = checkEvery - 1 // check at the end of this pop
	}
	return best, bb
}

// heapLimit is the work per pop beyond which the heap is the better choice:
// a 4-ary heap of n entries compares about 4*log4(n) = 2*log2(n) per pop.
func heapLimit(n int) int {
	return max(2*reestimateAt, 2*bits.Len(uint(n)))
}

// adapt runs every checkEvery pops. It re-estimates the width when the work
// per pop is too high, over a short window if it is far too high, over an
// epoch otherwise; it falls back to the heap when re-estimating did not
// help, and returns to buckets after a heap period (doubled on each failure).
func (c *Calendar) adapt() {
	ops, work := c.ops, c.walk+c.skip
	c.ops, c.walk, c.skip = 0, 0, 0
	if c.heapMode {
		c.heapOps += ops
		if c.epochOps += ops; c.epochOps >= c.heapWindow {
			c.rebuild(nbFor(c.n), true)
			c.reestimated = false
			c.probation = true
		}
		return
	}
	c.cqOps += ops
	c.cqWork += work
	if !c.calibrated {
		c.rebuild(len(c.heads), true) // the first width was a guess
		c.reestimated = false
		return
	}
	if work > heapLimit(c.n)*ops {
		if c.probation || c.reestimated {
			c.toHeap()
		} else {
			c.rebuild(len(c.heads), true)
		}
		return
	}
	c.epochOps += ops
	c.epochWork += work
	if c.epochOps < c.window {
		return
	}
	switch {
	case c.epochWork <= reestimateAt*c.epochOps:
		c.reestimated, c.probation = false, false
		c.heapWindow = 0
		c.window = max(checkEvery, 2*len(c.heads))
	case c.reestimated:
		// Still too much work, but not enough for the heap: back off so
		// that rebuilds stay a small cost.
		c.window = min(2*c.window, maxWindow)
	default:
		c.rebuild(len(c.heads), true)
		return
	}
	c.epochOps, c.epochWork = 0, 0
}

// nbFor returns the bucket count for n pending events.
func nbFor(n int) int {
	nb := minBuckets
	for float64(nb)*maxLoad < float64(n) && nb < 1<<30 {
		nb *= 2
	}
	return nb
}

// gather collects the pending nodes into c.scratch, sorted in pop order.
func (c *Calendar) gather() []int32 {
	s := c.scratch[:0]
	nodes := c.nodes
	if c.heapMode {
		for i := range c.heap {
			s = append(s, c.heap[i].idx)
		}
	} else {
		for _, h := range c.heads {
			for p := h; p != 0; p = nodes[p].next {
				s = append(s, p)
			}
		}
	}
	slices.SortFunc(s, func(i, j int32) int {
		switch {
		case c.before(i, j):
			return -1
		case c.before(j, i):
			return 1
		}
		return 0
	})
	c.scratch = s
	return s
}

// estimateWidth sets the width from the earliest pending events (s sorted):
// widthFactor times the mean separation of consecutive distinct times near
// the head, ignoring separations over twice the mean (Brown's estimator).
// Ties are skipped since tie groups cost O(1); the sample stays within the
// earliest eighth of the events unless that holds too few distinct times,
// so that a far-future population does not inflate the estimate.
func (c *Calendar) estimateWidth(s []int32) {
	nodes := c.nodes
	var gaps [widthSample]float64
	ng := 0
	limit := max(widthSample+1, len(s)/8)
	for k := 1; k < len(s) && ng < widthSample && (k < limit || ng < 8); k++ {
		if d := nodes[s[k]].t - nodes[s[k-1]].t; d > 0 {
			gaps[ng] = d
			ng++
		}
	}
	if ng == 0 {
		return // all equal times: any width does
	}
	sum := 0.0
	for _, d := range gaps[:ng] {
		sum += d
	}
	mean := sum / float64(ng)
	sum2, n2 := 0.0, 0
	for _, d := range gaps[:ng] {
		if d <= 2*mean {
			sum2 += d
			n2++
		}
	}
	if w := widthFactor * sum2 / float64(n2); w > 0 && w < math.MaxFloat64 && 1/w < math.MaxFloat64 {
		c.setWidth(w)
	}
}

// rebuild lays the pending events out again over nb buckets (a power of
// two), leaving heap mode, with a freshly estimated width if estimate or if
// the bucket count changes.
func (c *Calendar) rebuild(nb int, estimate bool) {
	c.rebuilds++
	s := c.gather()
	if estimate || nb != len(c.heads) || c.heapMode {
		c.estimateWidth(s)
		c.calibrated = true
	}
	c.reestimated = estimate
	c.heapMode = false
	c.heap = c.heap[:0]

	if cap(c.heads) >= nb {
		c.heads = c.heads[:nb]
	} else {
		c.heads = make([]int32, nb)
	}
	if cap(c.tails) >= nb {
		c.tails = c.tails[:nb]
	} else {
		c.tails = make([]int32, nb)
	}
	heads, tails, nodes := c.heads, c.tails, c.nodes
	clear(heads)
	clear(tails)
	c.mask = uint64(nb - 1)
	// Append every node, in order, at its bucket's tail; a node with the
	// (Time, Class) of the one before it joins that one's tie group.
	gfirst := int32(0)
	for _, i := range s {
		x := &nodes[i]
		x.vb = c.vb(x.t)
		b := x.vb & c.mask
		if tails[b] == 0 {
			heads[b] = i
		} else {
			nodes[tails[b]].next = i
		}
		tails[b] = i
		x.next = 0
		if g := &nodes[gfirst]; g.t == x.t && c.data[gfirst].Class == c.data[i].Class {
			g.glast = i // gfirst is never the sentinel here: its Time is +Inf
		} else {
			gfirst = i
			x.glast = i
		}
	}
	if len(s) > 0 {
		c.cur = nodes[s[0]].vb
	} else {
		c.cur = c.vb(c.now)
	}
	c.ops, c.walk, c.skip = 0, 0, 0
	c.epochOps, c.epochWork = 0, 0
	c.window = max(checkEvery, 2*nb)
	c.setThresholds()
}

// toHeap switches to the fallback heap for a while.
func (c *Calendar) toHeap() {
	c.toHeaps++
	s := c.gather() // sorted: already a valid heap
	c.heap = c.heap[:0]
	for _, i := range s {
		c.heap = append(c.heap, newHent(&c.data[i], i))
	}
	c.heapMode = true
	c.probation = false
	c.reestimated = false
	if c.heapWindow == 0 {
		c.heapWindow = max(checkEvery, 8*c.n)
	} else {
		c.heapWindow = min(2*c.heapWindow, maxWindow)
	}
	c.ops, c.walk, c.skip = 0, 0, 0
	c.epochOps, c.epochWork = 0, 0
}

func (c *Calendar) heapPush(x hent) {
	c.heap = append(c.heap, x)
	siftUp(c.heap, len(c.heap)-1, x)
}

// siftUp puts x at position i of the heap h, or above it while it is
// ordered before its parent.
func siftUp(h []hent, i int, x hent) {
	for i > 0 {
		p := (i - 1) >> 2
		if x.less(&h[p]) == 0 {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (c *Calendar) heapPop() int32 {
	h := c.heap
	top := h[0].idx
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	c.heap = h
	if n > 0 {
		// Bottom-up: the hole at the root goes down along the smaller
		// children to a leaf, then x (from the bottom, so usually large)
		// rises from there. Choosing among four children takes no branch;
		// where x stops, the one data-dependent exit, is usually at once.
		i := 0
		for {
			first := 4*i + 1
			if first >= n {
				break
			}
			m := first
			if first+3 < n {
				// A tournament: the two first rounds are independent.
				q := h[first : first+4 : first+4]
				a := int(q[1].less(&q[0]))
				b := 2 + int(q[3].less(&q[2]))
				m += a + int(q[b].less(&q[a]))*(b-a)
			} else {
				for j := first + 1; j < n; j++ {
					m += int(h[j].less(&h[m])) * (j - m)
				}
			}
			h[i] = h[m]
			i = m
		}
		siftUp(h, i, x)
	}
	c.nodes[top].next = c.free
	c.free = top
	c.n--
	c.now = c.nodes[top].t
	if c.ops++; c.ops >= checkEvery {
		c.adapt()
	}
	return top
}
