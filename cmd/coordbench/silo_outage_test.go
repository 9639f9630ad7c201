package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/round"
)

// One rule for a dead model: silo run against a loopback port where
// nothing listens exits 1, as des run does, with its artifacts written
// and result.json saying status aborted and why; silo suite fails the
// case.
func TestSiloRunFailsOnDeadModel(t *testing.T) {
	url, err := stubmodel.UnreachableURL()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"silo", "run", "--agent", "llm", "--llm-model", "m", "--llm-base-url", url, "--llm-max-attempts", "1",
		"--task", "I-01", "--agents", "2", "--out", dir}
	cmd := exec.Command(coordbenchBinary(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if se := stderr.String(); !strings.Contains(se, "run aborted: model failed 3 times in a row") || !strings.Contains(se, "connection refused") {
		t.Errorf("stderr:\n%s", se)
	}
	if !strings.Contains(stdout.String(), "status aborted: the run is not a result") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	var res round.Result
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, play.FileResult)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != round.StatusAborted || !strings.Contains(res.Error, "model failed 3 times in a row") {
		t.Errorf("result.json: status %q, error %q", res.Status, res.Error)
	}
	for _, f := range []string{play.FileDB, play.FileCalls} {
		mustRead(t, filepath.Join(dir, f))
	}
	suite := filepath.Join(t.TempDir(), "suite")
	if out, err := run(t, "silo", "suite", "--agent", "llm", "--llm-model", "m", "--llm-base-url", url, "--llm-max-attempts", "1",
		"--tasks", "I-01", "--agents", "2", "--protocols", "p2p", "--out", suite); err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(out, "2 failed") {
		t.Errorf("silo suite against a dead model: %v\n%s", err, out)
	}
}
