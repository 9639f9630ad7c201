// Package heapkernel is the baseline the event calendar (des/sim) is
// measured against: the typical Go simulator kernel, a container/heap of
// pointers to events carrying a func() callback, ties broken by the order
// of scheduling. des/sim's benchmarks and bench/holdcg (the same
// workloads under valgrind) run this one copy of it.
package heapkernel

import "container/heap"

type event struct {
	t   float64
	seq uint64
	fn  func()
}

type events []*event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *events) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return x
}

// Kernel is the event loop; its zero value is empty, at time 0.
type Kernel struct {
	h   events
	now float64
	seq uint64
}

// At schedules fn at time t.
func (k *Kernel) At(t float64, fn func()) {
	k.seq++
	heap.Push(&k.h, &event{t: t, seq: k.seq, fn: fn})
}

// Step runs the next event, if any, after advancing the time to it.
func (k *Kernel) Step() bool {
	if len(k.h) == 0 {
		return false
	}
	e := heap.Pop(&k.h).(*event)
	k.now = e.t
	e.fn()
	return true
}

// Now is the time of the last event run.
func (k *Kernel) Now() float64 { return k.now }

// Len is the number of events pending.
func (k *Kernel) Len() int { return len(k.h) }
