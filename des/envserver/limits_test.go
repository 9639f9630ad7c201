package envserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// watchdog bounds a test's wait for something that must happen; it is
// generous, and no result depends on it.
const watchdog = 30 * time.Second

// dial opens a raw connection to the test server.
func dial(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one response from c, then requires the server to
// close the connection.
func readResponse(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(watchdog))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the server kept the connection open after the response (%v)", err)
	}
	return resp, string(body)
}

// TestUnauthenticatedBodyIsNotRead: a request without the token is
// refused from its headers alone, and its connection closed, although its
// body never comes. Before, the server waited for the body (to drain it
// for reuse) before even answering, with no time limit.
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	_, hs := newServer(t, Config{Token: "s3cret"})
	c := dial(t, hs.URL)
	fmt.Fprintf(c, "POST /v1/episodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	resp, body := readResponse(t, c)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "bearer token") {
		t.Errorf("got %d %s, want 401", resp.StatusCode, body)
	}
}

// TestSlowBodyIsCut: a client that sends its headers and then its body a
// byte at a time, or not at all, is answered 408 and cut after
// BodyTimeout. Before, it held its connection indefinitely.
func TestSlowBodyIsCut(t *testing.T) {
	_, hs := newServer(t, Config{Token: "s3cret", BodyTimeout: 200 * time.Millisecond})
	c := dial(t, hs.URL)
	fmt.Fprintf(c, "POST /v1/episodes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Length: 100\r\n\r\n{")
	resp, body := readResponse(t, c)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive within 200ms") {
		t.Errorf("got %d %s, want 408", resp.StatusCode, body)
	}
	// A body that does arrive is served as before, and the deadline does
	// not outlive it: the same connection serves a later request.
	cl := &client{t: t, base: hs.URL, token: "s3cret"}
	id := cl.create("centralized", 1)
	if code, b := cl.do("GET", "/v1/episodes/"+id, nil); code != http.StatusOK {
		t.Errorf("status after a create: %d %s", code, b)
	}
}

// TestConnectionCap: with MaxConns connections open, another is not
// served until one closes. Before, every connection was accepted.
func TestConnectionCap(t *testing.T) {
	_, hs := newServer(t, Config{MaxConns: 2})
	first := dial(t, hs.URL)
	dial(t, hs.URL)
	third := dial(t, hs.URL)
	fmt.Fprintf(third, "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	// A negative check: a slow machine can only make it pass.
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := third.Read(make([]byte, 1)); n > 0 || err == nil {
		t.Fatal("a third connection was served while two were open")
	}
	first.Close()
	resp, body := readResponse(t, third)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("once a slot was free: %d %s", resp.StatusCode, body)
	}
}

// TestPlantLimitsAreFixed: an instance over the plant limits is refused,
// and no request can raise them (only des serve's --plant-limit). Before,
// gen:A16C64J10000000 was built and three such requests exhausted the
// server's memory.
func TestPlantLimitsAreFixed(t *testing.T) {
	_, hs := newServer(t, Config{})
	cl := &client{t: t, base: hs.URL}
	for _, inst := range []string{"gen:A2C5J5001", "gen:A16C64J10000000", "gen:A100000C100000"} {
		code, b := cl.do("POST", "/v1/episodes", fmt.Appendf(nil, `{"instance":%q,"paradigm":"centralized"}`, inst))
		if code != http.StatusBadRequest || !strings.Contains(string(b), "over the limit") || !strings.Contains(string(b), "raise it with des serve --plant-limit") {
			t.Errorf("%s: got %d %s, want 400 naming the limit and the flag", inst, code, b)
		}
	}
}
