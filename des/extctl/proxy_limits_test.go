package extctl

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/httplimit"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A runner (or any local process with its token) that sends a chat
// request's body a byte at a time does not hold the proxy's connection:
// the body's read ends at the body timeout and the request is answered.
func TestProxySlowBodyCut(t *testing.T) {
	p, err := NewProxy(ProxyConfig{Upstream: llm.Spec{Endpoint: llm.Endpoint{BaseURL: "stub:generic"}},
		Options: llm.Options{Stubs: stubmodel.Policies{stubmodel.GenericPolicy()}, MaxAttempts: 1},
		HTTP:    httplimit.Config{BodyTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute)) // a failsafe: the test waits for the proxy, not a time
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{", p.Issue())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the proxy still waits for the body (the test's failsafe ended the wait)")
	}
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("status %s for a body that never came", resp.Status)
		}
	}
}
