package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

var permitsRE = regexp.MustCompile(`(\d+) model-call permits handed out`)

var tokenRE = regexp.MustCompile(jetstream.TokenEnv + `=(\S+)`)

// TestDistServeBeyondLoopbackRequiresToken: sweep serve on a second
// loopback address (as on an address other machines reach) starts its
// server with credentials and prints the workers' token once; a client
// without it is refused, and so is a worker (saying where the token
// goes); workers with it run the experiment to the end, storing cases
// as objects (silo-small) or in the shared directory and asking for
// model-call permits (a des experiment of a model with limits).
func TestDistServeBeyondLoopbackRequiresToken(t *testing.T) {
	stub := newSlowStub(t, 0)
	llmFile := llmExperiment(t, t.TempDir(), stub.URL, "1, 2", "  concurrency: 1\n")
	for _, c := range []struct{ file, store string }{{experiments[1].file, jetstream.StoreObject}, {llmFile, jetstream.StoreFS}} {
		t.Run(c.store, func(t *testing.T) { testServeRequiresToken(t, c.file, c.store) })
	}
}

func testServeRequiresToken(t *testing.T, file, store string) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "dist")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout testenv.Buffer
	urlc := make(chan string, 1)
	serve := make(chan error, 1)
	ended := make(chan struct{})
	t.Cleanup(func() { cancel(); <-ended }) // before the directories are removed
	cfg := serveConfig{file: file, out: out, listen: "127.0.0.2:0", store: store,
		ackWait: 2 * time.Second, maxDeliver: 3, maxCaseBytes: jetstream.DefaultMaxCaseBytes}
	go func() {
		defer close(ended)
		serve <- runServe(ctx, cfg, &stdout, func(url string) { urlc <- url })
	}()
	var url string
	select {
	case url = <-urlc:
	case err := <-serve:
		t.Fatalf("serve: %v", err)
	}
	if !strings.Contains(url, "127.0.0.2") {
		t.Fatalf("serve listens on %s, want 127.0.0.2", url)
	}
	m := tokenRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("serve printed no token:\n%s", stdout.String())
	}
	token := m[1]
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("a client without credentials was let in")
	}
	wcfg := workerConfig{natsURL: url, slots: 1, name: "anon", scratch: t.TempDir(), experimentDir: "."}
	if _, err := runWorker(ctx, ctx, wcfg, &testenv.Buffer{}, nil); err == nil || !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), jetstream.TokenEnv) {
		t.Errorf("a worker without the token: %v; want refused, naming %s", err, jetstream.TokenEnv)
	}
	wcfg.token = token + "-wrong"
	if _, err := runWorker(ctx, ctx, wcfg, &testenv.Buffer{}, nil); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("a worker with a wrong token: %v; want refused", err)
	}
	wcfg.name, wcfg.token = "w", token
	if store == jetstream.StoreFS {
		wcfg.out = out
	}
	ws := workers(ctx, 2, wcfg, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := wait(t, ws, "worker"); err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	if st, err := jetstream.ReadStatus(out); err != nil || st.Done != st.Cases || st.Cases == 0 {
		t.Errorf("status: %+v, %v; want every case done", st, err)
	}
	if m := permitsRE.FindStringSubmatch(stdout.String()); store == jetstream.StoreFS && (m == nil || m[1] == "0") {
		t.Errorf("no model-call permits handed out under credentials:\n%s", stdout.String())
	}
	if n := strings.Count(stdout.String(), token); n != 1 {
		t.Errorf("the token appears %d times in serve's output, want once", n)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(token)) {
				t.Errorf("%s holds the token", p)
			}
		}
		return nil
	})
}

// llm stub --token-env refuses a request without the token on its
// headers (a body announced and never sent is not waited for), and
// answers one with it.
func TestStubRequiresToken(t *testing.T) {
	const env = "COORDBENCH_TEST_STUB_TOKEN"
	t.Setenv(env, "stub-token-0123456789")
	ctx, cancel := context.WithCancel(context.Background())
	url, _, done := startStub(t, ctx, "--policy", "generic", "--token-env", env)
	defer func() { cancel(); <-done }()
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute)) // a failsafe: the test waits for the stub, not a time
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Length: 1000\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a request with a wrong token: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request with a wrong token: %s, want 401", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer stub-token-0123456789")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a request with the token: %s, want 200", resp.Status)
	}
}
