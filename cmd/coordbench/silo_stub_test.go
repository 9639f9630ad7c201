package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/silo/analyze"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// startStub starts coordbench llm stub in-process with args and returns
// the URL its banner gives, its further output lines and its end.
func startStub(t *testing.T, ctx context.Context, args ...string) (url string, lines <-chan string, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	root := rootCmd()
	root.SetOut(pw)
	root.SetErr(pw)
	root.SetArgs(append([]string{"llm", "stub"}, args...))
	end := make(chan error, 1)
	go func() {
		end <- root.ExecuteContext(ctx)
		pw.Close()
	}()
	out := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	select {
	case l := <-out:
		url = regexp.MustCompile(`http://127\.0\.0\.1:\d+/v1`).FindString(l)
		if url == "" || !strings.Contains(l, "stub model") {
			t.Fatalf("stub banner: %q", l)
		}
	case err := <-end:
		t.Fatalf("stub ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("stub did not start")
	}
	return url, out, end
}

// Without --addr, each stub listens on a free loopback port of its own and
// prints its URL: a second stub never leaves a run talking to the first
// (issue 14).
func TestStubDefaultsToAFreePort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, _, doneA := startStub(t, ctx)
	b, _, doneB := startStub(t, ctx, "--policy", "random")
	if a == b {
		t.Errorf("two stubs on %s", a)
	}
	cancel()
	for _, d := range []<-chan error{doneA, doneB} {
		if err := <-d; err != nil {
			t.Error(err)
		}
	}
}

// TestSiloRunAgainstGatherStub: coordbench llm stub --policy silo-gather,
// started in-process on a free loopback port, serves an LLM team that
// solves a task through silo run; the stub stops on cancel and reports
// what it served.
func TestSiloRunAgainstGatherStub(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, lines, done := startStub(t, ctx, "--policy", "silo-gather", "--addr", "127.0.0.1:0")

	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "silo", "run", "--agent", "llm", "--llm-model", "stub", "--llm-base-url", url,
		"--task", "I-01", "--agents", "3", "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "S 1.000") {
		t.Errorf("run did not succeed:\n%s", out)
	}
	if st, err := os.Stat(filepath.Join(dir, llmagent.FileTurns)); err != nil || st.Size() == 0 {
		t.Errorf("%s missing or empty: %v", llmagent.FileTurns, err)
	}
	// silo analyze reads the prompt tokens of each model call from the
	// turn log (the paper's appendix D).
	if out, err := run(t, "silo", "analyze", dir); err != nil {
		t.Fatalf("analyze: %v\n%s", err, out)
	}
	if csv := string(mustRead(t, filepath.Join(dir, analyze.DefaultOutDir, analyze.FileContext))); !regexp.MustCompile(`\n-,1,[1-9]\d*,[1-9]`).MatchString(csv) {
		t.Errorf("context.csv has no row of counted calls:\n%s", csv)
	}
	// The run's page has each agent's model use.
	page := filepath.Join(t.TempDir(), "report.html")
	if out, err := run(t, "report", dir, "--out", page); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if html := mustRead(t, page); !bytes.Contains(html, []byte("Model use by agent")) {
		t.Error("the run's page has no model use by agent")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stub did not stop")
	}
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if !regexp.MustCompile(`served: [1-9]\d* requests`).MatchString(strings.Join(rest, "\n")) {
		t.Errorf("stub summary: %q", rest)
	}
}

func TestStubPolicyUnknown(t *testing.T) {
	if _, err := run(t, "llm", "stub", "--policy", "oracle", "--addr", "127.0.0.1:0"); err == nil ||
		!strings.Contains(err.Error(), "silo-gather") {
		t.Fatalf("err = %v", err)
	}
}
