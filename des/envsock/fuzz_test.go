package envsock

import (
	"bytes"
	"testing"
)

// FuzzRequest: any request body, under any op, gets a reply or an error,
// never a panic, and a session that took it is closed cleanly.
func FuzzRequest(f *testing.F) {
	open := []byte(`{"instance":"A3C9-1","paradigm":"holonic_hybrid","n":2}`)
	f.Add(byte(OpOpen), open, []byte{})
	f.Add(byte(OpStep), open, bytes.Repeat([]byte{0}, 2*8+2*4*16+2))
	f.Add(byte(OpStep), open, append(bytes.Repeat([]byte{1}, 2*8+2*4*16), CmdReset, CmdReset))
	f.Add(byte(OpBench), []byte(`{}`), []byte(`{"instance":"A3C9-1","paradigm":"centralized","seeds":[1]}`))
	f.Add(byte(OpClose), open, []byte{})
	f.Fuzz(func(t *testing.T, op byte, openBody, body []byte) {
		s, err := New(Config{MaxEnvs: 4})
		if err != nil {
			t.Fatal(err)
		}
		sess := &session{cfg: &s.cfg}
		defer sess.close()
		if _, err, broken := s.handleSafely(sess, OpOpen, openBody, nil); broken {
			t.Fatalf("open %q: %v", openBody, err)
		}
		for range 3 { // a reset body may start episodes: act on them next
			if _, err, broken := s.handleSafely(sess, op, body, nil); broken {
				t.Fatalf("op %d %q: %v", op, body, err)
			}
		}
	})
}
