// Command holdcg runs the hold model on the calendar (des/sim), on a
// container/heap callback kernel or on a stripped calendar (internal/holdfloor:
// a floor, not a kernel), for instruction counting under valgrind, where
// `go test` binaries do not run (bench/callgrind.sh); the heap kernel is
// internal/heapkernel, the baseline of des/sim's benchmarks:
//
//	holdcg calendar|heap|stripped N M [skew]
//
// N events pending, M events processed, Exp(1) increments (with skew: the
// dense-ahead workload of the calendar's tests, three in four events in a
// dense burst of distinct times far ahead, which sends the calendar to
// its fallback heap). It prints the final time.
package main

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/coordbench/coordbench/des/sim"
	"github.com/coordbench/coordbench/internal/heapkernel"
	"github.com/coordbench/coordbench/internal/holdfloor"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: holdcg calendar|heap|stripped N M [skew]")
		os.Exit(2)
	}
	kind := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	m, _ := strconv.Atoi(os.Args[3])
	skew := len(os.Args) > 4
	rng := sim.NewStream(1, "hold")
	delay := func(now float64) float64 {
		if skew && rng.Intn(4) != 0 { // dense-ahead: a burst of distinct times far ahead
			return 1e4*(math.Floor(now/1e4)+1) + rng.Float64()*1e-3 - now
		}
		return rng.Exp(1)
	}
	if kind == "heap" {
		var k heapkernel.Kernel // the one des/sim's benchmarks run
		var proc func()
		proc = func() { k.At(k.Now()+delay(k.Now()), proc) }
		for i := 0; i < n; i++ {
			k.At(delay(0), proc)
		}
		for i := 0; i < m; i++ {
			k.Step()
		}
		fmt.Println(k.Now())
		return
	}
	if kind == "stripped" {
		if skew {
			fmt.Fprintln(os.Stderr, "holdcg: the stripped calendar has no fallback: no skew")
			os.Exit(2)
		}
		s := holdfloor.New(n)
		for i := 0; i < n; i++ {
			s.Schedule(delay(0), int32(i))
		}
		for k := 0; k < m; k++ {
			t, a := s.Next()
			s.Schedule(t+delay(t), a)
		}
		fmt.Println(s.Now())
		return
	}
	c := sim.NewCalendar(n)
	for i := 0; i < n; i++ {
		c.Schedule(delay(0), 0, 0, int32(i), 0, 0)
	}
	for k := 0; k < m; k++ {
		e, _ := c.Next()
		c.Schedule(e.Time+delay(e.Time), 0, 0, e.A, 0, 0)
	}
	fmt.Println(c.Now())
}
