package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// tempsIn lists the temporary run directories left in dir.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmps []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			tmps = append(tmps, e.Name())
		}
	}
	return tmps
}

// builtinStub is the stub model that answers as the rule controller.
func builtinStub(t *testing.T) http.Handler {
	t.Helper()
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	return stub
}

// A run into an --out that holds anything is refused and leaves it as it
// was; --force replaces it whole (no file of the old directory stays); an
// empty directory is used as is. Both benchmarks (issue 14).
func TestRunOutRefusedUnlessForce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		result string
	}{
		{"des run", []string{"des", "run", "--instance", "A3C9-1", "--seed", "3"}, harness.FileMetrics},
		{"des case", []string{"des", "case", "--case-id", "A3C9-1__centralized__rule__s3"}, harness.FileMetrics},
		{"silo run", []string{"silo", "run", "--task", "I-01", "--agents", "2"}, "result.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "run")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append(tc.args, "--out", dir)
			if out, err := run(t, args...); err != nil {
				t.Fatalf("into an empty directory: %v\n%s", err, out)
			}
			notes := filepath.Join(dir, "notes.txt")
			if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := mustRead(t, filepath.Join(dir, tc.result))
			_, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), "--out "+dir+" already exists and is not empty: give another --out, or --force to replace it") {
				t.Fatalf("second run into %s: %v", dir, err)
			}
			if b := mustRead(t, filepath.Join(dir, tc.result)); !bytes.Equal(b, before) || string(mustRead(t, notes)) != "mine" {
				t.Error("the refused run changed --out")
			}
			if out, err := run(t, append(args, "--force")...); err != nil {
				t.Fatalf("--force: %v\n%s", err, out)
			}
			if _, err := os.Stat(notes); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--force kept a file of the old directory (%v): it must replace it, not merge", err)
			}
			if _, err := os.Stat(filepath.Join(dir, tc.result)); err != nil {
				t.Error(err)
			}
			if tmps := tempsIn(t, parent); len(tmps) != 0 {
				t.Errorf("temporaries left: %v", tmps)
			}
		})
	}
	// The working directory is never an --out: it would be renamed away.
	t.Chdir(t.TempDir())
	if _, err := run(t, "des", "run", "--out", ".", "--force"); err == nil || !strings.Contains(err.Error(), "is the working directory") {
		t.Errorf("--out .: %v", err)
	}
}

// The default directory of an LLM run names the model (and framework), so
// runs of two models do not overwrite each other; a second run of the
// same configuration is refused rather than overwriting the first.
func TestRunDefaultOutNamesTheModel(t *testing.T) {
	srv := httptest.NewServer(builtinStub(t))
	defer srv.Close()
	t.Chdir(t.TempDir())
	llm := func(model string, extra ...string) (string, error) {
		return run(t, append([]string{"des", "run", "--instance", "A3C9-1", "--seed", "1", "--controller", "llm",
			"--llm-model", model, "--llm-base-url", srv.URL + "/v1"}, extra...)...)
	}
	for _, model := range []string{"model-a", "model-b"} {
		if out, err := llm(model); err != nil {
			t.Fatalf("%s: %v\n%s", model, err, out)
		}
	}
	if out, err := llm("model-a", "--framework", "relay"); err != nil {
		t.Fatalf("relay: %v\n%s", err, out)
	}
	for _, name := range []string{"A3C9-1_centralized_llm_model-a-graph_s1", "A3C9-1_centralized_llm_model-b-graph_s1", "A3C9-1_centralized_llm_model-a-relay_s1"} {
		if m := metricsIn(t, filepath.Join("runs", name)); m.Model == "" {
			t.Errorf("%s: metrics name no model", name)
		}
	}
	if _, err := llm("model-a"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a second run of the same configuration: %v", err)
	}
	if out, err := run(t, "silo", "run", "--task", "I-01", "--agents", "2", "--max-rounds", "7"); err != nil || !strings.Contains(out, "silo_I-01_n2_p2p_reference_seeded_s1_r7") {
		t.Errorf("silo run with a non-default round cap: %v\n%s", err, out)
	}
}

// Ctrl-C in des run (the real binary, a real SIGINT while the episode
// waits on the model): a message on stderr, exit code 1, --out holds every
// artifact with status interrupted, no temporary is left, and des validate
// re-checks the run and says it was interrupted (issue 14).
func TestRunInterrupted(t *testing.T) {
	stub := builtinStub(t)
	const at = 5 // the model call during which the user presses Ctrl-C
	var mu sync.Mutex
	calls := 0
	called, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == at {
			close(called)
			<-release // answer only once the signal was sent
		}
		stub.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	cmd := exec.Command(coordbenchBinary(t), llmRun(srv.URL+"/v1", dir)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-called:
	case err := <-exited:
		t.Fatalf("the run ended before model call %d: %v\n%s%s", at, err, stdout.String(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	close(release)
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"interrupted: stopping the episode before its next decision", "coordbench: interrupted: the episode stopped after", "status interrupted, are in " + dir} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if m := metricsIn(t, dir); m.Status != "interrupted" || m.GTr != 1 {
		t.Errorf("metrics.json: status %q, G_tr %d", m.Status, m.GTr)
	}
	if tmps := tempsIn(t, parent); len(tmps) != 0 {
		t.Errorf("temporaries left: %v", tmps)
	}
	out, err := run(t, "des", "validate", dir)
	if err != nil || !strings.Contains(out, "the run was interrupted") || !strings.Contains(out, "the artifacts are consistent, but the run is not a result (status interrupted)") || strings.Contains(out, "all checks hold") {
		t.Errorf("validate: %v\n%s", err, out)
	}
}
