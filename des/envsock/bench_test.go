package envsock_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coordbench/coordbench/des/envsock"
)

// BenchmarkSocketSteps steps 32 centralized A3C9-1 episodes per request
// through the socket from a Go client (first legal action, auto-reset):
// the transport's own cost without Python. BenchmarkInProcess plays the
// same kind of episodes in process (OpBench): compare their decisions/s.
func BenchmarkSocketSteps(b *testing.B) {
	const n = 32
	c := dial(b, startSocket(b, envsock.Config{}))
	rep := c.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: n})
	lv, m := rep.Lengths[0], rep.Actions[0]
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	cmds := bytes.Repeat([]byte{envsock.CmdReset}, n)
	acts := make([]int32, n)
	next := uint64(n + 1)
	decisions := 0
	cpu0 := cpuNanos(b)
	b.ResetTimer()
	for range b.N {
		st, body := c.call(envsock.OpStep, stepBody(seeds, acts, cmds))
		if st != 0 {
			b.Fatalf("step: %s", body)
		}
		state := 8*n*3 + 8*n*lv + 8*n + 4*n*3
		mask := state + 3*n + n
		for i := range n {
			switch body[state+i] {
			case envsock.StatePending:
				cmds[i] = envsock.CmdAct
				acts[i] = int32(bytes.IndexByte(body[mask+i*m:mask+(i+1)*m], 1))
				decisions++
			default:
				cmds[i], seeds[i] = envsock.CmdReset, next
				next++
			}
		}
	}
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(cpuNanos(b)-cpu0)/float64(decisions), "cpu-ns/decision")
}

func cpuNanos(b *testing.B) int64 {
	n := envsock.ProcessCPU()
	if n < 0 {
		b.Skip("no process CPU time on this system")
	}
	return n
}

func BenchmarkInProcess(b *testing.B) {
	c := dial(b, startSocket(b, envsock.Config{}))
	seeds := make([]uint64, 0, b.N)
	for i := range b.N {
		seeds = append(seeds, uint64(i+1))
	}
	req, _ := json.Marshal(envsock.BenchRequest{Instance: "A3C9-1", Paradigm: "centralized", Seeds: seeds})
	cpu0 := cpuNanos(b)
	b.ResetTimer()
	st, body := c.call(envsock.OpBench, req)
	if st != 0 {
		b.Fatalf("bench: %s", body)
	}
	var rep envsock.BenchReply
	json.Unmarshal(body, &rep)
	b.ReportMetric(float64(rep.Decisions)/(float64(rep.Nanos)/1e9), "decisions/s")
	b.ReportMetric(float64(cpuNanos(b)-cpu0)/float64(rep.Decisions), "cpu-ns/decision")
}
