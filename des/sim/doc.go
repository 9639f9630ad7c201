// Package sim is coordbench's discrete-event kernel: an event calendar that
// owns the simulation clock, and named random streams. It knows nothing of
// factories; the world that uses it (package factory) gives meaning to
// event kinds and arguments.
//
// # The usage loop
//
// A simulation creates one Calendar, schedules its initial events, then pops
// events in time order until the calendar is empty or a horizon is reached.
// Handling an event may schedule new ones, at the current time or later:
//
//	cal := sim.NewCalendar(1024)
//	arrivals := sim.NewStream(seed, "arrivals")
//	cal.Schedule(arrivals.Exp(meanGap), classArrival, kindArrival, 0, 0, 0)
//	for {
//		ev, ok := cal.Next() // earliest event; cal.Now() == ev.Time from here
//		if !ok || ev.Time > horizon {
//			break
//		}
//		switch ev.Kind {
//		case kindArrival:
//			w.arrive(ev.A)
//			cal.Schedule(cal.Now()+arrivals.Exp(meanGap), classArrival, kindArrival, 0, 0, 0)
//		case kindDone:
//			w.finish(ev.A, ev.B)
//		}
//	}
//
// Events are plain values (Event): a time, a priority class, a kind and three
// int32 arguments, typically indices into the world's own tables (a machine,
// a job, an operation). There are no callbacks and no per-event allocation:
// the kernel stays fast and a pending event is fully described by its data,
// which makes runs easy to log, compare and replay.
//
// # Ordering
//
// Events pop in the total order (Time, Class, Seq): earlier time first; at
// equal times lower Class first; then the order in which they were
// scheduled (Seq, assigned 1, 2, 3, ... by Schedule). Classes let a world
// decide, for instance, that completions at time t are handled before the
// dispatching decisions at t. The order is exact and does not depend on the
// calendar's internal layout, so a run is a pure function of its inputs.
//
// Now is the time of the last popped event. Scheduling before Now, or at a
// NaN or infinite time, returns an error (ErrPast, ErrBadTime) and changes
// nothing; the kernel never panics on bad input. Reset empties a calendar for
// another run and keeps its memory.
//
// The calendar is a calendar queue (Brown 1988) with tie groups, an adaptive
// bucket width and a heap fallback; see Calendar. Hold runs the classic hold
// model on it, the kernel's throughput benchmark.
//
// # Random streams
//
// Each exogenous process (arrivals, breakdowns, each machine's processing
// times, ...) draws from its own Stream, derived from the run's seed and the
// process's name with NewStream(seed, name). Adding a draw to one process
// therefore never shifts the values another one sees, and a scenario can be
// varied in one place while the rest stays common (common random numbers).
//
// The generator is our own (xoshiro256** seeded by splitmix64 from the seed
// mixed with the 64-bit FNV-1a hash of the name), and so are the derived
// distributions, including the logarithm behind Exp; math/rand and math.Log
// are not used. The value streams are part of coordbench's reproducibility
// contract: for a given (seed, name), Uint64, Float64, Intn, Exp, Uniform and
// Weighted must return the same values on every platform, with every Go
// release, forever. They must never change; the golden values in the tests
// guard that. A new distribution may be added, but an existing one may not be
// altered, not even to fix a bias; add a new method instead.
//
// Neither a Calendar nor a Stream is safe for concurrent use; run one
// simulation per goroutine.
package sim
