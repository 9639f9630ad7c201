package envsock_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/envsock"
)

// conn is a test client of the protocol.
type conn struct {
	t testing.TB
	c net.Conn
}

func dial(t testing.TB, path string) *conn {
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t, c}
}

// call sends a frame and returns the reply's status and body.
func (c *conn) call(op byte, body []byte) (byte, []byte) {
	c.t.Helper()
	frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)+1))
	frame = append(append(frame, op), body...)
	if _, err := c.c.Write(frame); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

func (c *conn) read() (byte, []byte) {
	c.t.Helper()
	var hdr [8]byte
	if _, err := io.ReadFull(c.c, hdr[:]); err != nil {
		c.t.Fatal(err)
	}
	b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c.c, b); err != nil {
		c.t.Fatal(err)
	}
	return hdr[4], b
}

func (c *conn) open(req envsock.OpenRequest) envsock.OpenReply {
	c.t.Helper()
	b, _ := json.Marshal(req)
	st, body := c.call(envsock.OpOpen, b)
	if st != 0 {
		c.t.Fatalf("open: %s", body)
	}
	var rep envsock.OpenReply
	if err := json.Unmarshal(body, &rep); err != nil {
		c.t.Fatal(err)
	}
	return rep
}

// stepBody is a step request: seeds, actions (n×a), commands.
func stepBody(seeds []uint64, acts []int32, cmds []byte) []byte {
	var b []byte
	for _, s := range seeds {
		b = binary.LittleEndian.AppendUint64(b, s)
	}
	for _, a := range acts {
		b = binary.LittleEndian.AppendUint32(b, uint32(a))
	}
	return append(b, cmds...)
}

// episode plays n centralized episodes to their ends, the plant taking its
// first legal action, and returns every reply.
func playAll(t *testing.T, c *conn, n int, seeds []uint64) [][]byte {
	rep := c.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: n, Reward: map[string]float64{"tardiness": -1, "overdue": -1}})
	if len(rep.Agents) != 1 || rep.Agents[0] != "plant" {
		t.Fatalf("agents %v", rep.Agents)
	}
	lv, m := rep.Lengths[0], rep.Actions[0]
	cmds := bytes.Repeat([]byte{envsock.CmdReset}, n)
	acts := make([]int32, n)
	var replies [][]byte
	for k := 0; k < 100000; k++ {
		st, body := c.call(envsock.OpStep, stepBody(seeds, acts, cmds))
		if st != 0 {
			t.Fatalf("step %d: %s", k, body)
		}
		replies = append(replies, body)
		// offsets of the reply (package comment): state and mask
		state := 8*n*3 + 8*n*lv + 8*n + 4*n*3
		mask := state + 3*n + n
		live := false
		for i := range n {
			cmds[i] = envsock.CmdNone
			if body[state+i] == envsock.StatePending {
				cmds[i], live = envsock.CmdAct, true
				acts[i] = int32(bytes.IndexByte(body[mask+i*m:mask+(i+1)*m], 1))
			}
		}
		if !live {
			return replies
		}
	}
	t.Fatal("the episodes did not end")
	return nil
}

// TestDeterministic: the same seeds and actions give byte-identical
// replies, over a fresh session and a reopened one.
func TestDeterministic(t *testing.T) {
	path := startSocket(t, envsock.Config{})
	seeds := []uint64{1, 2, 3}
	a := playAll(t, dial(t, path), 3, seeds)
	c := dial(t, path)
	playAll(t, c, 3, []uint64{9, 8, 7})
	b := playAll(t, c, 3, seeds)
	if len(a) != len(b) {
		t.Fatalf("%d replies, then %d", len(a), len(b))
	}
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Fatalf("reply %d differs", k)
		}
	}
	if len(a) < 10 {
		t.Fatalf("only %d steps", len(a))
	}
	last := a[len(a)-1]
	if !bytes.Contains(last, []byte(`"status":"done"`)) && !bytes.Contains(a[len(a)-2], []byte(`"status":"done"`)) {
		t.Errorf("no episode reported done in its last replies")
	}
}

// TestBadRequests: malformed requests get an error reply, never a crash,
// and the session stays usable; an oversized frame closes the connection.
func TestBadRequests(t *testing.T) {
	path := startSocket(t, envsock.Config{MaxEnvs: 4, MaxFrame: 4096})
	c := dial(t, path)
	for _, tc := range []struct {
		op   byte
		body string
		want string
	}{
		{envsock.OpOpen, `{`, "invalid JSON"},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"centralized","n":5}`, "want 1 to 4"},
		{envsock.OpOpen, `{"instance":"/etc/passwd","paradigm":"centralized","n":1}`, "unknown instance"},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"nope","n":1}`, "nope"},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"centralized","n":1,"reward":{"speed":1}}`, "unknown reward terms speed"},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"centralized","n":1,"play":["plant"]}`, "no built-in controllers"},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"centralized","n":1,"play":["ghost"]}`, `no agent "ghost"`},
		{envsock.OpOpen, `{"instance":"A3C9-1","paradigm":"centralized","n":1,"others":"rule"}`, `give "play" too`},
		{envsock.OpStep, ``, "open the session first"},
		{9, ``, "unknown op 9"},
	} {
		st, body := c.call(tc.op, []byte(tc.body))
		if st != 1 || !strings.Contains(string(body), tc.want) {
			t.Errorf("op %d %s: status %d %q, want an error with %q", tc.op, tc.body, st, body, tc.want)
		}
	}
	c.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: 2})
	for _, tc := range []struct {
		body []byte
		want string
	}{
		{[]byte{1, 2, 3}, "has 3 bytes"},
		{stepBody([]uint64{0, 0}, []int32{0, 0}, []byte{envsock.CmdAct, 0}), "no pending decision"},
		{stepBody([]uint64{0, 0}, []int32{0, 0}, []byte{7, 0}), "unknown command 7"},
	} {
		st, body := c.call(envsock.OpStep, tc.body)
		if st != 1 || !strings.Contains(string(body), tc.want) {
			t.Errorf("step %v: status %d %q, want an error with %q", tc.body, st, body, tc.want)
		}
	}
	// Still usable: an episode starts, and an illegal action is a problem.
	st, body := c.call(envsock.OpStep, stepBody([]uint64{4, 0}, []int32{0, 0}, []byte{envsock.CmdReset, 0}))
	if st != 0 {
		t.Fatalf("reset: %s", body)
	}
	st, body = c.call(envsock.OpStep, stepBody([]uint64{0, 0}, []int32{1 << 30, 0}, []byte{envsock.CmdAct, 0}))
	if st != 0 || !bytes.Contains(body, []byte(`"problem":"action 1073741824 is not legal; it falls back"`)) {
		t.Fatalf("illegal action: %d %s", st, body)
	}
	st, body = c.call(envsock.OpStep, stepBody([]uint64{0, 0}, []int32{envsock.NoAction, 0}, []byte{envsock.CmdAct, 0}))
	if st != 0 || !bytes.Contains(body, []byte(`"problem":"no action for this agent; it falls back"`)) {
		t.Fatalf("no action: %d %s", st, body)
	}
	// A frame over the limit: an error, then the connection closes.
	st, body = c.call(envsock.OpStep, make([]byte, 5000))
	if st != 1 || !strings.Contains(string(body), "want 1 to 4096") {
		t.Fatalf("oversized frame: %d %q", st, body)
	}
	if _, err := c.c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after an oversized frame: %v, want EOF", err)
	}
}

// TestBench: the in-process baseline plays the episodes asked for.
func TestBench(t *testing.T) {
	c := dial(t, startSocket(t, envsock.Config{}))
	st, body := c.call(envsock.OpBench, []byte(`{"instance":"A3C9-1","paradigm":"centralized","seeds":[1,2,3]}`))
	if st != 0 {
		t.Fatalf("bench: %s", body)
	}
	var rep envsock.BenchReply
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Episodes != 3 || rep.Decisions < 3 || rep.Nanos <= 0 {
		t.Fatalf("bench: %+v", rep)
	}
	if st, body := c.call(envsock.OpBench, []byte(`{"instance":"A3C9-1","paradigm":"centralized","seeds":[]}`)); st != 1 || !strings.Contains(string(body), "0 seeds") {
		t.Fatalf("bench without seeds: %d %s", st, body)
	}
}

// TestCloseThenReset: after OpClose the slots are idle and a reset plays
// again, as a Python env's close then reset does.
func TestCloseThenReset(t *testing.T) {
	c := dial(t, startSocket(t, envsock.Config{}))
	c.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: 1})
	reset := stepBody([]uint64{5}, []int32{0}, []byte{envsock.CmdReset})
	if st, body := c.call(envsock.OpStep, reset); st != 0 {
		t.Fatalf("reset: %s", body)
	}
	if st, body := c.call(envsock.OpClose, nil); st != 0 {
		t.Fatalf("close: %s", body)
	}
	if st, body := c.call(envsock.OpStep, stepBody([]uint64{0}, []int32{0}, []byte{envsock.CmdAct})); st != 1 || !strings.Contains(string(body), "no pending decision") {
		t.Fatalf("act after close: %d %s", st, body)
	}
	if st, body := c.call(envsock.OpStep, reset); st != 0 {
		t.Fatalf("reset after close: %s", body)
	}
}

// slotEntries concatenates slot i's entries of a step reply's fixed part
// (n slots, a agents, lv vector floats and m mask entries per slot).
func slotEntries(body []byte, n, a, lv, m, i int) []byte {
	var out []byte
	off := 0
	take := func(width int) { // one array of n entries of width bytes
		out = append(out, body[off+i*width:off+(i+1)*width]...)
		off += n * width
	}
	for _, w := range []int{8, 8, 8, 8 * lv, 8, 4, 4, 4, 1, 1, 1, a, m} {
		take(w)
	}
	return out
}

// TestSkipPipelined: requests sent back to back are answered in order; a
// skipped slot is neither advanced nor written (its entries keep the last
// reply's), and stepping two slots in turn, each request skipping the
// other, gives each slot the entries of stepping both at once.
func TestSkipPipelined(t *testing.T) {
	path := startSocket(t, envsock.Config{})
	const n = 2
	seeds := []uint64{5, 6}
	var lockstep, piped [][]byte // replies
	var lv, m int
	for _, pipelined := range []bool{false, true} {
		c := dial(t, path)
		rep := c.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: n})
		lv, m = rep.Lengths[0], rep.Actions[0]
		acts := make([]int32, n)
		st, r0 := c.call(envsock.OpStep, stepBody(seeds, acts, []byte{envsock.CmdReset, envsock.CmdReset}))
		if st != 0 {
			t.Fatalf("reset: %s", r0)
		}
		mask := 8*n*3 + 8*n*lv + 8*n + 4*n*3 + 3*n + n
		for i := range n {
			acts[i] = int32(bytes.IndexByte(r0[mask+i*m:mask+(i+1)*m], 1))
		}
		if !pipelined {
			st, r1 := c.call(envsock.OpStep, stepBody(seeds, acts, []byte{envsock.CmdAct, envsock.CmdAct}))
			if st != 0 {
				t.Fatalf("step: %s", r1)
			}
			lockstep = [][]byte{r0, r1}
			continue
		}
		var frames []byte
		for _, cmds := range [][]byte{{envsock.CmdAct, envsock.CmdSkip}, {envsock.CmdSkip, envsock.CmdAct}} {
			body := stepBody(seeds, acts, cmds)
			frames = binary.LittleEndian.AppendUint32(frames, uint32(len(body)+1))
			frames = append(append(frames, envsock.OpStep), body...)
		}
		if _, err := c.c.Write(frames); err != nil { // both requests before either reply
			t.Fatal(err)
		}
		piped = [][]byte{r0}
		for range 2 {
			st, r := c.read()
			if st != 0 {
				t.Fatalf("pipelined step: %s", r)
			}
			piped = append(piped, r)
		}
	}
	a := 1
	if !bytes.Equal(slotEntries(piped[1], n, a, lv, m, 1), slotEntries(piped[0], n, a, lv, m, 1)) {
		t.Error("the skipped slot 1 was written by the first pipelined step")
	}
	if !bytes.Equal(slotEntries(piped[2], n, a, lv, m, 0), slotEntries(piped[1], n, a, lv, m, 0)) {
		t.Error("the skipped slot 0 was written by the second pipelined step")
	}
	if !bytes.Equal(slotEntries(piped[1], n, a, lv, m, 0), slotEntries(lockstep[1], n, a, lv, m, 0)) {
		t.Error("slot 0 stepped alone differs from slot 0 stepped with slot 1")
	}
	if !bytes.Equal(slotEntries(piped[2], n, a, lv, m, 1), slotEntries(lockstep[1], n, a, lv, m, 1)) {
		t.Error("slot 1 stepped alone differs from slot 1 stepped with slot 0")
	}
	if bytes.Equal(slotEntries(piped[1], n, a, lv, m, 0), slotEntries(piped[0], n, a, lv, m, 0)) {
		t.Error("the acting slot 0 did not change")
	}
}

// TestIdleSessionsFreed: with one session at a time, a client that sends
// nothing, and one that sends requests and reads none of the replies
// (pipelined until the socket is full), lose their session after
// IdleTimeout, and the next client gets it.
func TestIdleSessionsFreed(t *testing.T) {
	path := startSocket(t, envsock.Config{MaxSessions: 1, IdleTimeout: 300 * time.Millisecond})
	for _, flood := range []bool{false, true} {
		a := dial(t, path)
		rep := a.open(envsock.OpenRequest{Instance: "A5C12-1", Paradigm: "centralized", N: 64})
		if flood {
			n := 64
			body := stepBody(make([]uint64, n), make([]int32, n*len(rep.Agents)), make([]byte, n)) // every slot left alone
			frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)+1))
			frame = append(append(frame, envsock.OpStep), body...)
			a.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			for range 2000 { // far more replies than the socket holds
				if _, err := a.c.Write(frame); err != nil {
					break // the server closed the session
				}
			}
		}
		b := dial(t, path)
		b.c.SetDeadline(time.Now().Add(20 * time.Second))
		b.open(envsock.OpenRequest{Instance: "A3C9-1", Paradigm: "centralized", N: 1})
		b.c.Close()
	}
}
