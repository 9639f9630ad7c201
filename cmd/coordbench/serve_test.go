package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCheckServeAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8765": true, "[::1]:80": true, "localhost:1": true,
		":8765": false, "0.0.0.0:8765": false, "10.1.2.3:80": false, "nohost": false} {
		if err := checkServeAddr(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := checkServeAddr("0.0.0.0:1", true); err != nil {
		t.Error(err)
	}
	if _, err := run(t, "des", "serve", "--addr", "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "allow-remote") {
		t.Errorf("remote address accepted: %v", err)
	}
	t.Setenv("CB_EMPTY_TOKEN", "")
	if _, err := run(t, "des", "serve", "--addr", "127.0.0.1:0", "--token-env", "CB_EMPTY_TOKEN"); err == nil {
		t.Error("empty token accepted")
	}
}

func TestServeCommand(t *testing.T) {
	t.Setenv("CB_TEST_TOKEN", "tok")
	pr, pw := io.Pipe()
	root := rootCmd()
	root.SetOut(pw)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"des", "serve", "--addr", "127.0.0.1:0", "--token-env", "CB_TEST_TOKEN"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	for tok, want := range map[string]int{"": 401, "tok": 200} {
		req, _ := http.NewRequest("GET", url+"/v1/health", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: %d, want %d", tok, resp.StatusCode, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}
