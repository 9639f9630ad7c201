package holdfloor

import (
	"testing"

	"github.com/coordbench/coordbench/des/sim"
)

// The floor pops the hold model's events in the calendar's order (Exp(1)
// times have no ties), so the two measure the same work.
func TestSameOrderAsCalendar(t *testing.T) {
	for _, n := range []int{10, 1000, 20000} {
		f, c := New(n), sim.NewCalendar(n)
		r1, r2 := sim.NewStream(1, "hold"), sim.NewStream(1, "hold")
		for i := range n {
			f.Schedule(r1.Exp(1), int32(i))
			c.Schedule(r2.Exp(1), 0, 0, int32(i), 0, 0)
		}
		for k := range 200000 {
			ft, fa := f.Next()
			e, _ := c.Next()
			if ft != e.Time || fa != e.A {
				t.Fatalf("n=%d, event %d: floor (%v, %d), calendar (%v, %d)", n, k, ft, fa, e.Time, e.A)
			}
			f.Schedule(ft+r1.Exp(1), fa)
			c.Schedule(e.Time+r2.Exp(1), 0, 0, e.A, 0, 0)
		}
	}
}
