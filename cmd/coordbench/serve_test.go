package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/harness"
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
	// --plant-limit is des serve's own, over the server's limits.
	if _, err := run(t, "des", "serve", "--addr", "127.0.0.1:0", "--plant-limit", "cells=0"); err == nil || !strings.Contains(err.Error(), "areas=64,cells=256") {
		t.Errorf("--plant-limit cells=0: %v, want the server's limits named", err)
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

// callJSON sends body to url and decodes the answer into v; it fails the
// test unless the status is want.
func callJSON(t *testing.T, method, url, body string, want int, v any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

// TestServeSIGTERMStopsEpisodes: SIGTERM stops des serve although
// episodes are running, one waiting for its client and one a large plant
// the server plays itself: each is ended before its next decision
// (status interrupted), the process exits 0, and the artifacts of an
// episode that had ended are intact (their manifest hashes hold). Before,
// the shutdown waited for every running episode to be played to its end.
func TestServeSIGTERMStopsEpisodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := coordbenchBinary(t)
	data := t.TempDir()
	cmd := exec.Command(bin, "des", "serve", "--addr", "127.0.0.1:0", "--data", data, "--keep")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var out bytes.Buffer
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("no banner: %v\n%s", err, stderr.String())
	}
	go func() { io.Copy(&out, br); exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	url := regexp.MustCompile(`http://\S+`).FindString(line)

	type status struct {
		ID string `json:"id"`
	}
	var ended, waiting, big status
	callJSON(t, "POST", url+"/v1/episodes", `{"instance":"A3C9-1","paradigm":"centralized","seed":2,"play":[]}`, 201, &ended)
	var done struct {
		Done bool `json:"done"`
	}
	callJSON(t, "GET", url+"/v1/episodes/"+ended.ID+"/decision?wait=1", "", 200, &done)
	if !done.Done {
		t.Fatal("the episode the server plays did not end")
	}
	callJSON(t, "POST", url+"/v1/episodes", `{"instance":"gen:A16C64J2000","paradigm":"centralized","seed":1}`, 201, &waiting)
	callJSON(t, "GET", url+"/v1/episodes/"+waiting.ID+"/decision?wait=1", "", 200, nil)
	callJSON(t, "POST", url+"/v1/episodes", `{"instance":"gen:A64C256J5000","paradigm":"centralized","seed":1,"play":[]}`, 201, &big)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v (want 0)\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute): // a watchdog: no result depends on it
		t.Fatal("des serve did not stop on SIGTERM")
	}
	if !strings.Contains(out.String(), "server stopped") {
		t.Errorf("output: %s", out.String())
	}
	for _, id := range []string{waiting.ID, big.ID} {
		var m harness.Metrics
		b, err := os.ReadFile(filepath.Join(data, id, harness.FileMetrics))
		if err != nil || json.Unmarshal(b, &m) != nil || m.Status != "interrupted" {
			t.Errorf("episode %s: metrics.json %v, status %q, want interrupted", id, err, m.Status)
		}
	}
	var man harness.Manifest
	b, err := os.ReadFile(filepath.Join(data, ended.ID, harness.FileManifest))
	if err != nil || json.Unmarshal(b, &man) != nil || len(man.Files) == 0 {
		t.Fatalf("manifest of the ended episode: %v %s", err, b)
	}
	for name, want := range man.Files {
		f, err := os.ReadFile(filepath.Join(data, ended.ID, name))
		if sum := sha256.Sum256(f); err != nil || hex.EncodeToString(sum[:]) != want {
			t.Errorf("%s of the ended episode: %v, or its hash differs from the manifest's", name, err)
		}
	}
}
