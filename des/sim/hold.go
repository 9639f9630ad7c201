package sim

// HoldStats summarises a run of the hold model.
type HoldStats struct {
	Pending   int     // events pending throughout (N)
	Events    int     // events processed (M)
	FinalTime float64 // simulation time of the last processed event
}

// Hold runs the classic hold model on a Calendar: n events are scheduled at
// Exp(1) times, then m times the earliest is popped and one new event is
// scheduled at now + Exp(1), so n events stay pending. Increments are drawn
// from NewStream(seed, "hold"). It is the kernel's throughput benchmark
// (timed by `coordbench des bench`); for n <= 0 or m <= 0 it does nothing.
func Hold(n, m int, seed uint64) HoldStats {
	st := HoldStats{}
	if n <= 0 || m <= 0 {
		return st
	}
	c := NewCalendar(n)
	rng := NewStream(seed, "hold")
	for i := 0; i < n; i++ {
		c.Schedule(rng.Exp(1), 0, 0, int32(i), 0, 0) //nolint:errcheck // times are finite and >= 0
	}
	for k := 0; k < m; k++ {
		e, _ := c.Next()
		c.Schedule(e.Time+rng.Exp(1), 0, 0, e.A, 0, 0) //nolint:errcheck // e.Time == Now()
	}
	st.Pending = c.Len()
	st.Events = m
	st.FinalTime = c.Now()
	return st
}
