//go:build unix

package envserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// TestStalledReaderIsReleased: a client that asks for a large artifact
// and never reads the response has its connection closed by the server
// once a write makes no progress for WriteTimeout (unix: the test shrinks
// the client's receive buffer with setsockopt). Before, the handler
// blocked in its write for as long as the client kept the connection.
func TestStalledReaderIsReleased(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), WriteTimeout: 200 * time.Millisecond, Builtins: policy.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan string, 64) // the remote address of every connection the server closes
	hs := s.HTTPServer()
	// Small socket buffers on both sides, so that they fill within the
	// artifact (Linux grows a send buffer to 4 MiB otherwise).
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		c.(*net.TCPConn).SetWriteBuffer(4096)
		return ctx
	}
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			select {
			case gone <- c.RemoteAddr().String():
			default: // the test's few connections never fill it
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln) // not s.Listener: its connections hide the TCP socket
	t.Cleanup(func() { hs.Close(); s.Close() })
	base := "http://" + ln.Addr().String()
	c := &client{t: t, base: base}
	id := c.createBody(`{"instance":"A3C9-1","paradigm":"centralized","seed":2,"play":[]}`).ID
	c.next(id)
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/episodes/%s/artifacts/%s HTTP/1.1\r\nHost: x\r\n\r\n", id, harness.FileDecisions)
	fi, err := os.Stat(filepath.Join(s.cfg.DataDir, id, harness.FileDecisions))
	if err != nil || fi.Size() < 256<<10 {
		t.Fatalf("decisions.jsonl: %v; want more than the socket buffers hold", err)
	}
	timer := time.NewTimer(watchdog)
	defer timer.Stop()
	for {
		select {
		case addr := <-gone:
			if addr == conn.LocalAddr().String() {
				return
			}
		case <-timer.C:
			t.Fatal("the server still holds the connection of a client that stopped reading")
		}
	}
}
