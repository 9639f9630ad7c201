package sim_test

import (
	"fmt"

	"github.com/coordbench/coordbench/des/sim"
)

// A tiny single-machine world: jobs arrive, wait in a queue and are processed
// one at a time. Completions (class 0) are handled before arrivals (class 1)
// at equal times.
func Example() {
	const (
		kindArrive = iota
		kindDone
	)
	const (
		classDone   = 0
		classArrive = 1
	)
	cal := sim.NewCalendar(16)
	arrivals := sim.NewStream(1, "arrivals")
	service := sim.NewStream(1, "service")

	queue, busy, finished := 0, false, 0
	start := func() {
		busy = true
		cal.Schedule(cal.Now()+service.Uniform(1, 2), classDone, kindDone, 0, 0, 0)
	}
	cal.Schedule(0, classArrive, kindArrive, 0, 0, 0)
	for {
		ev, ok := cal.Next()
		if !ok || ev.Time > 20 {
			break
		}
		switch ev.Kind {
		case kindArrive:
			if busy {
				queue++
			} else {
				start()
			}
			if _, err := cal.Schedule(cal.Now()+arrivals.Exp(1.5), classArrive, kindArrive, 0, 0, 0); err != nil {
				fmt.Println(err)
			}
		case kindDone:
			finished++
			busy = false
			if queue > 0 {
				queue--
				start()
			}
		}
	}
	fmt.Printf("finished %d jobs by t=%.2f, %d waiting\n", finished, cal.Now(), queue)

	// Scheduling in the past is an error, not a panic.
	_, err := cal.Schedule(1, 0, 0, 0, 0, 0)
	fmt.Println(err)
	// Output:
	// finished 11 jobs by t=20.39, 1 waiting
	// sim: event time is before the current time: 1 < now 20.38946554743905
}
