package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/sweep"
)

// A worker count of a trillion (a flag or an experiment's run.workers)
// is refused by name; it once made des suite allocate a channel that
// size and crash.
func TestWorkersBounded(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "e.yaml")
	exp := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: rule\n  seeds: 1\n"
	if err := os.WriteFile(file, []byte(exp+"run:\n  workers: 1000000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	okFile := filepath.Join(tmp, "ok.yaml")
	if err := os.WriteFile(okFile, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"des", "suite", "--suite", "gen:A2C4", "--paradigm", "centralized", "--seeds", "1", "--workers", "1000000000000"},
		{"silo", "suite", "--tasks", "I-01", "--agents", "2", "--seeds", "1", "--workers", "1000000000000"},
		{"sweep", "run", okFile, "--workers", "1000000000000"},
		{"sweep", "run", file},
	} {
		out := filepath.Join(tmp, "out-"+args[0]+"-"+args[1]+"-"+filepath.Base(args[2]))
		_, err := run(t, append(args, "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), "workers") || !strings.Contains(err.Error(), "want 1 to 4096") {
			t.Errorf("%v: %v", args, err)
		}
		if _, serr := os.Stat(filepath.Join(out, "cases")); serr == nil {
			t.Errorf("%v: the refused run made its cases directory", args)
		}
	}
}

// des suite --controller without external and --controller-command: the
// runner would run no case; the command says so instead of dropping it.
func TestSuiteControllerCommandLeftOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	_, err := run(t, "des", "suite", "--suite", "gen:A2C4", "--paradigm", "centralized", "--seeds", "1",
		"--controller", "rule", "--controller-command", "python3 runner.py", "--out", dir)
	if err == nil || !strings.Contains(err.Error(), `--controller-command runs controller "external", which --controller rule leaves out`) {
		t.Fatalf("error %v", err)
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Error("the refused suite made its directory")
	}
}

// A sweep run refused by the lock of another run writes nothing into
// that run's directory: no marker, no ledger, no cost files.
func TestSweepRunLockedWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	file := stubExperiment(t, tmp, "centralized", "1", "")
	dir := filepath.Join(tmp, "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := atomicfs.LockDir(dir) // the other run
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := run(t, "sweep", "run", file, "--out", dir); !errors.Is(err, atomicfs.ErrLocked) {
		t.Fatalf("a sweep run into a locked directory: %v", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != atomicfs.LockFile {
			t.Errorf("the refused run wrote %s", e.Name())
		}
	}
	unlock()
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, sweep.FileCost)); err != nil {
		t.Errorf("the run after the lock was released: %v", err)
	}
}

// suite.json records the plant limits a suite was admitted under; a
// resumed suite runs under them without --plant-limit given again, and
// refuses, by name, a --plant-limit that differs. A suite under the
// default limits records none (its suite.json is as before).
func TestSuiteResumesUnderRecordedLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	base := []string{"des", "suite", "--suite", "gen:A2C4", "--paradigm", "centralized", "--seeds", "1", "--out", dir}
	if out, err := run(t, append(base, "--plant-limit", "areas=300")...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cfg, err := harness.ReadSuiteConfig(dir)
	if err != nil || cfg.PlantLimits != "areas=300" {
		t.Fatalf("suite.json plant_limits %q, %v", cfg.PlantLimits, err)
	}
	if out, err := run(t, base...); err != nil || !strings.Contains(out, "0 run now, 1 already done") {
		t.Fatalf("resume without --plant-limit: %v\n%s", err, out)
	}
	_, err = run(t, append(base, "--plant-limit", "areas=400")...)
	if err == nil || !strings.Contains(err.Error(), "--plant-limit areas=400 conflicts with the plant limits "+filepath.Join(dir, harness.FileSuiteConfig)+" records: areas=300") {
		t.Fatalf("a conflicting --plant-limit: %v", err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if out, err := run(t, append(base[:len(base)-1], plain)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(plain, harness.FileSuiteConfig))), "plant_limits") {
		t.Error("a suite under the default limits records plant_limits")
	}
}

// stubExperiment writes tmp/e.yaml: a des experiment of the llm
// controller, at the stub model that plays rule (desStub), on gen:A2C4
// with paradigms and seeds (comma lists), then extra YAML.
func stubExperiment(t *testing.T, tmp, paradigms, seeds, extra string) string {
	t.Helper()
	srv := desStub(t)
	file := filepath.Join(tmp, "e.yaml")
	exp := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: " + paradigms + "\n  controllers: llm\n  seeds: " + seeds + "\n" +
		"llm:\n  model: m\n  base_url: " + srv.URL + "/v1\n  price: {input: 1, output: 1}\n" + extra
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
