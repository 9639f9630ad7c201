package envsock

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
)

// MaxBenchEpisodes bounds the episodes of one OpBench request.
const MaxBenchEpisodes = 100000

// BenchRequest is the body of OpBench: the episodes to play in process.
type BenchRequest struct {
	Instance string   `json:"instance"`
	Paradigm string   `json:"paradigm"`
	Seeds    []uint64 `json:"seeds"`
	// Trace writes each episode's trace.jsonl to memory, as des bench
	// does; without, none is written (as over the socket).
	Trace bool `json:"trace,omitempty"`
}

// BenchReply answers OpBench.
type BenchReply struct {
	Episodes  int   `json:"episodes"`
	Decisions int   `json:"decisions"`
	Nanos     int64 `json:"nanos"`
	// CPUNanos is the CPU time the server process used meanwhile (-1:
	// unknown).
	CPUNanos int64 `json:"cpu_nanos"`
}

// Bench plays one episode per seed in process, one after the other on
// one goroutine, every active agent choosing its first legal action (the
// policy of python/examples/throughput.py), with no trace unless asked:
// the simulator's own decision rate on the same episodes a learner plays
// through the socket.
func Bench(cfg *Config, req *BenchRequest) (*BenchReply, error) {
	if len(req.Seeds) == 0 || len(req.Seeds) > MaxBenchEpisodes {
		return nil, fmt.Errorf("%d seeds: want 1 to %d", len(req.Seeds), MaxBenchEpisodes)
	}
	s := session{cfg: cfg}
	if _, err := s.openEpisodes(&OpenRequest{Instance: req.Instance, Paradigm: req.Paradigm, N: 1}); err != nil {
		return nil, err
	}
	s.close()
	var sc harness.Scratch
	var trace bytes.Buffer
	out := &BenchReply{}
	cpu, start := ProcessCPU(), time.Now()
	for _, seed := range req.Seeds {
		ep := harness.Episode{Plant: s.plant, Seed: seed, Mode: s.mode, Controller: FirstLegal{}, Scratch: &sc}
		if req.Trace {
			trace.Reset()
			ep.Trace = &trace
		}
		res := harness.Run(context.Background(), ep)
		if res.Err != nil {
			return nil, res.Err
		}
		out.Episodes++
		out.Decisions += res.Metrics.GDs
	}
	out.Nanos = time.Since(start).Nanoseconds()
	out.CPUNanos = -1
	if cpu >= 0 {
		out.CPUNanos = ProcessCPU() - cpu
	}
	return out, nil
}

// FirstLegal is a built-in controller that answers every agent with its
// first legal action (the lowest index its mask allows).
type FirstLegal struct{}

func (FirstLegal) Name() string                { return "first_legal" }
func (FirstLegal) Source() coord.Source        { return coord.SourceBuiltin }
func (c FirstLegal) Chooser() coord.Controller { return c }

// ChooseView implements coord.ViewChooser.
func (FirstLegal) ChooseView(v *coord.View) int {
	for i, ok := range v.ActionMask {
		if ok {
			return i
		}
	}
	return 0
}

// Act implements coord.Controller.
func (c FirstLegal) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	ans := d.Answer()
	for id, v := range d.Agents() {
		ans[id] = c.ChooseView(v)
	}
	return ans, nil
}
