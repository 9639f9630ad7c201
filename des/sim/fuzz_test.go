package sim

import (
	"container/heap"
	"encoding/binary"
	"math"
	"testing"
)

// evHeap is the fuzz test's reference: container/heap ordered by Before.
type evHeap []Event

func (h evHeap) Len() int           { return len(h) }
func (h evHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h evHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)        { *h = append(*h, x.(Event)) }
func (h *evHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FuzzCalendarOrder drives a calendar with an operation script read from
// the input (schedule at a delay drawn from a random or skewed family,
// pop, peek, bulk phases) and checks every pop, peek, clock and length
// against a container/heap reference; invalid times must fail cleanly,
// never panic, and leave the calendar unchanged.
func FuzzCalendarOrder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("\x07\xff\x00\x10\x80\x01\x02\x03\xfe\xfd\x11\x22\x33\x44\x55\x66\x77\x88"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, script []byte) {
		c := NewCalendar(len(script) % 100)
		var ref evHeap
		s := NewStream(uint64(len(script)), "fuzz")
		pop := func() {
			if len(ref) == 0 {
				if _, ok := c.Next(); ok {
					t.Fatal("Next on an empty calendar returned an event")
				}
				return
			}
			want := heap.Pop(&ref).(Event)
			if p, ok := c.Peek(); !ok || p != want {
				t.Fatalf("Peek = %+v, %v; want %+v", p, ok, want)
			}
			if got, ok := c.Next(); !ok || got != want || c.Now() != want.Time {
				t.Fatalf("Next = %+v, %v (now %v); want %+v", got, ok, c.Now(), want)
			}
		}
		push := func(op byte, arg uint16) {
			now := c.Now()
			var tm float64
			switch op % 8 {
			case 0: // exponential
				tm = now + s.Exp(1)
			case 1: // ties at now and at small integers
				tm = math.Floor(now) + float64(arg%4)
			case 2: // far future
				tm = now + 1e6*float64(arg)
			case 3: // tiny increments
				tm = now + float64(arg)*1e-12
			case 4: // heavy tail
				tm = now + math.Pow(1-s.Float64(), -2) - 1
			case 5: // dense burst ahead
				tm = 1e4*(math.Floor(now/1e4)+1) + float64(arg%64)*1e-6
			case 6: // huge and invalid times: must be refused or accepted without panicking
				tm = [...]float64{math.MaxFloat64, math.Inf(1), math.NaN(), now - 1, 1e300, math.Nextafter(now, 0)}[arg%6]
			default: // a fixed delay in the argument
				tm = now + float64(arg)/16
			}
			cl := uint8(arg >> 8 % 3)
			seq, err := c.Schedule(tm, cl, op, int32(arg), 0, 0)
			if err != nil {
				if tm >= now && tm <= math.MaxFloat64 {
					t.Fatalf("Schedule(%v) at now %v: %v", tm, now, err)
				}
				return
			}
			heap.Push(&ref, Event{Time: tm + 0, Seq: seq, Class: cl, Kind: op, A: int32(arg)})
		}
		for i := 0; i+3 <= len(script); i += 3 {
			op, arg := script[i], binary.LittleEndian.Uint16(script[i+1:])
			switch {
			case op < 150:
				push(op, arg)
			case op < 240:
				pop()
			case op < 250: // a bulk phase: many schedules, growing the bucket array
				for k := 0; k < int(arg%2048); k++ {
					push(byte(k)^op, uint16(s.Uint64()))
				}
			default: // drain a part
				for k := 0; k < int(arg%2048) && len(ref) > 0; k++ {
					pop()
				}
			}
			if c.Len() != len(ref) {
				t.Fatalf("Len = %d, want %d", c.Len(), len(ref))
			}
		}
		for len(ref) > 0 {
			pop()
		}
		pop()
	})
}
