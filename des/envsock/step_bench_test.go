package envsock

import (
	"encoding/binary"
	"testing"
)

// BenchmarkSessionStep steps 32 centralized A3C9-1 episodes (first legal
// action, auto-reset) by calling the session directly: the server's work
// per decision without the socket (compare BenchmarkSocketSteps and
// BenchmarkInProcess).
func BenchmarkSessionStep(b *testing.B) {
	const n = 32
	cfg := Config{}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	s := session{cfg: &cfg}
	if _, err := s.openEpisodes(&OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: n}); err != nil {
		b.Fatal(err)
	}
	defer s.close()
	l := &s.lay
	body := make([]byte, l.requestSize())
	seeds, acts, cmds := body[:8*n], body[8*n:8*n+4*n*l.a], body[8*n+4*n*l.a:]
	next := uint64(1)
	for i := range n {
		binary.LittleEndian.PutUint64(seeds[8*i:], next)
		next++
		cmds[i] = CmdReset
	}
	var dst []byte
	var err error
	decisions := 0
	b.ResetTimer()
	for range b.N {
		if dst, err = s.step(body, dst); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if dst[l.state+i] != StatePending {
				cmds[i] = CmdReset
				binary.LittleEndian.PutUint64(seeds[8*i:], next)
				next++
				continue
			}
			cmds[i] = CmdAct
			for k, x := range dst[l.mask+i*l.m:][:l.m] {
				if x == 1 {
					binary.LittleEndian.PutUint32(acts[4*i:], uint32(k))
					break
				}
			}
			decisions++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(decisions), "ns/decision")
}

// TestF64s: the in-place float64 view is the wire's bytes, and refused
// where the address is not aligned (putF64 then writes them).
func TestF64s(t *testing.T) {
	b := make([]byte, 40)
	if f64s(b, 1, 2) != nil && littleEndian {
		t.Fatal("an unaligned view was given")
	}
	v := f64s(b, 8, 3)
	if littleEndian && v == nil {
		t.Fatal("no view of aligned memory on a little-endian machine")
	}
	if v == nil {
		return
	}
	v[0], v[2] = 1.5, -2.25
	want := make([]byte, 40)
	putF64(want, 8, 1.5)
	putF64(want, 24, -2.25)
	if string(b) != string(want) {
		t.Fatalf("in place %v, putF64 %v", b, want)
	}
}
