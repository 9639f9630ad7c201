package envsock

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// States of a slot in a step's reply.
const (
	StatePending = 0 // a decision is pending
	StateEnded   = 1 // the episode ended at this step
	StateIdle    = 2 // nothing happened (no episode, or it ended before)
)

// Commands of a step request, per slot.
const (
	CmdNone  = 0 // leave the slot alone
	CmdAct   = 1 // answer the pending decision with the slot's actions
	CmdReset = 2 // start a new episode with the slot's seed
	CmdSkip  = 3 // neither advance nor write the slot (a pipelined client's other group)
)

// replyLayout is where each array of a step's reply starts (Reply in the
// package comment), for n slots, a agents, lv vector floats and m mask
// entries per slot.
type replyLayout struct {
	n, a, lv, m                                int
	time, reward, tardiness, obs               int
	seed                                       int
	step, completed, released                  int
	state, terminated, truncated, active, mask int
	fixed                                      int // the length of the fixed part
}

func newReplyLayout(n, a, lv, m int) replyLayout {
	l := replyLayout{n: n, a: a, lv: lv, m: m}
	off := 0
	next := func(size int) int { o := off; off += size; return o }
	l.time, l.reward, l.tardiness, l.obs = next(8*n), next(8*n), next(8*n), next(8*n*lv)
	l.seed = next(8 * n)
	l.step, l.completed, l.released = next(4*n), next(4*n), next(4*n)
	l.state, l.terminated, l.truncated, l.active, l.mask = next(n), next(n), next(n), next(n*a), next(n*m)
	l.fixed = off
	return l
}

// requestSize is the length of a step request's body.
func (l *replyLayout) requestSize() int { return 8*l.n + 4*l.n*l.a + l.n }

// littleEndian: the machine's float64s are the wire's (set once, never
// changed).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f64s returns the n float64s at b[off:] as a slice of the same memory
// when the machine is little-endian and the address 8-aligned (as the
// reply's arrays are), so that they are written in wire order directly;
// nil otherwise (write them with putF64).
func f64s(b []byte, off, n int) []float64 {
	if !littleEndian || n == 0 {
		return nil
	}
	_ = b[off+8*n-1] // in bounds
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%8 != 0 {
		return nil
	}
	return unsafe.Slice((*float64)(p), n)
}

func putF64(b []byte, off int, x float64) {
	binary.LittleEndian.PutUint64(b[off:], math.Float64bits(x))
}
func putI32(b []byte, off int, x int)    { binary.LittleEndian.PutUint32(b[off:], uint32(int32(x))) }
func putU64(b []byte, off int, x uint64) { binary.LittleEndian.PutUint64(b[off:], x) }
