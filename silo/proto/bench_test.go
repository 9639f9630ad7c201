package proto

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// ring runs the scripted P2P exchange: every round each agent receives, sends
// one message to its right neighbour, and waits.
func ring(tb testing.TB, path string, n, rounds int) *Store {
	s, err := Open(path, P2P, n, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	args := make([]json.RawMessage, n)
	for a := range n {
		args[a] = json.RawMessage(fmt.Sprintf(`{"target_id":%d,"content":"partial sum from agent %d"}`, (a+1)%n, a))
	}
	for r := 1; r <= rounds; r++ {
		if err := s.BeginRound(r); err != nil {
			tb.Fatal(err)
		}
		for a := range n {
			s.Call(a, ToolReceive, nil)
			s.Call(a, ToolSend, args[a])
			s.Call(a, ToolWait, nil)
		}
		if err := s.EndRound(); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// TestP2PRing100x100 checks the outcome of the exchange that
// BenchmarkP2PRing100x100 times (tests never assert on time).
func TestP2PRing100x100(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const n, rounds = 100, 100
	s := ring(t, filepath.Join(t.TempDir(), "ring.db"), n, rounds)
	defer s.Close()
	c := s.Counts()
	if c.Total.M != n*rounds || c.Total.Received != n*(rounds-1) || c.Total.Errors != 0 {
		t.Fatalf("counts %+v", c.Total)
	}
	// After r rounds of ring passing, agent a has seen a-r+1..a (mod n).
	if got := len(s.Seen(0)); got != n {
		t.Fatalf("Seen(0) has %d shards", got)
	}
}

func BenchmarkP2PRing100x100(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		s := ring(b, filepath.Join(b.TempDir(), fmt.Sprintf("ring%d.db", i)), 100, 100)
		s.Close()
	}
}

// BenchmarkCalls measures tool calls per second per protocol, including the
// per-round database write (rounds of 16 agents x 8 calls).
func BenchmarkCalls(b *testing.B) {
	const n, per = 16, 8
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		b.Run(string(p), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "run.db"), p, n, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var write, read json.RawMessage
			var wtool, rtool string
			switch p {
			case P2P:
				wtool, rtool = ToolSend, ToolReceive
			case Broadcast:
				wtool, rtool = ToolBroadcast, ToolReceive
			case SFS:
				wtool, rtool = ToolWriteFile, ToolReadFile
			}
			calls, r := 0, 0
			b.ResetTimer()
			for calls < b.N {
				r++
				if err := s.BeginRound(r); err != nil {
					b.Fatal(err)
				}
				for a := range n {
					switch p {
					case P2P:
						write = json.RawMessage(fmt.Sprintf(`{"target_id":%d,"content":"some data 12345"}`, (a+1)%n))
					case Broadcast:
						write = json.RawMessage(`{"content":"some data 12345"}`)
					case SFS:
						write = json.RawMessage(fmt.Sprintf(`{"path":"agent_%d_data","content":[1,2,3,4,5]}`, a))
						read = json.RawMessage(fmt.Sprintf(`{"path":"agent_%d_data"}`, (a+1)%n))
					}
					for i := 0; i < per; i += 2 {
						s.Call(a, rtool, read)
						s.Call(a, wtool, write)
					}
					calls += per
				}
				if err := s.EndRound(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}
