package httplimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts h within cfg on a loopback port and returns its address.
func serve(t *testing.T, h http.Handler, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(h, cfg)
	go srv.Serve(Listener(ln, cfg))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// echoBody answers with the length of the body it read, or the error.
var echoBody = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	case err != nil:
		http.Error(w, err.Error(), http.StatusRequestTimeout)
	default:
		fmt.Fprintf(w, "%d", len(b))
	}
})

// dial opens a raw connection, with a deadline as a failsafe only (the
// tests wait for what the server does, not for a time).
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(time.Minute))
	t.Cleanup(func() { c.Close() })
	return c
}

// A client that sends its body a byte and then nothing more does not
// hold the connection: the body read fails once BodyTimeout has passed,
// and the connection is closed.
func TestSlowBodyCut(t *testing.T) {
	addr := serve(t, echoBody, Config{BodyTimeout: 50 * time.Millisecond})
	c := dial(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("status %s for a body that never came", resp.Status)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server still waits for the body (the test's failsafe ended the wait)")
	}
}

// A request the check refuses is answered 401 on its headers: its body,
// which never comes, is not waited for, and the handler never runs.
func TestAuthorizedBeforeBody(t *testing.T) {
	var ran atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran.Add(1); echoBody(w, r) })
	addr := serve(t, h, Config{Authorized: Bearer("s3cret-token-0123")})
	for _, auth := range []string{"", "Authorization: Bearer wrong\r\n", "Authorization: Bearer s3cret-token-012\r\n"} {
		c := dial(t, addr)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\n%sContent-Length: 1000000\r\n\r\n", auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", auth, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Errorf("%q: status %s, close %v: want 401 and the connection closed", auth, resp.Status, resp.Close)
		}
	}
	c := dial(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token-0123\r\nContent-Length: 3\r\n\r\nabc")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "3" || ran.Load() != 1 {
		t.Errorf("authorized: %s %q, handler ran %d times: want 200 \"3\", once", resp.Status, b, ran.Load())
	}
}

// A body over MaxBody is refused; one within it is read.
func TestBodyBound(t *testing.T) {
	addr := serve(t, echoBody, Config{MaxBody: 10})
	for _, c := range []struct {
		body string
		want int
	}{{strings.Repeat("x", 11), http.StatusRequestEntityTooLarge}, {strings.Repeat("x", 10), http.StatusOK}} {
		resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("a body of %d bytes: %s, want %d", len(c.body), resp.Status, c.want)
		}
	}
}
