//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/sweep"
)

// cliFileLimitEnv, in the environment of this test binary, makes it the
// CLI (its arguments are the command's) under the file-size limit
// (RLIMIT_FSIZE, in bytes) the variable gives: a write that would grow a
// file past it fails with EFBIG, as a write to a full disk fails with
// ENOSPC. It needs no privileges (a tmpfs mount does, and root writes
// into a read-only directory all the same), so the tests below run
// everywhere, CI included.
const cliFileLimitEnv = "COORDBENCH_TEST_CLI_FSIZE"

// maybeRunAsCLI runs the CLI and exits, if this process was started by
// runFullDisk.
func maybeRunAsCLI() {
	v := os.Getenv(cliFileLimitEnv)
	if v == "" {
		return
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "file-size limit:", err)
		os.Exit(2)
	}
	main() // exits 1 on an error
	os.Exit(0)
}

// runFullDisk runs the CLI with args in a process whose files cannot
// grow past limit bytes (SIGXFSZ is ignored by the Go runtime: the write
// fails instead). It returns stdout, stderr and the process error.
func runFullDisk(t *testing.T, limit int, args ...string) (string, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), cliFileLimitEnv+"="+strconv.Itoa(limit))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// des run on a full disk: the episode's artifacts cannot all be written,
// so nothing is moved into --out and no "status done" is printed; the
// error says why, and no temporary directory is left beside --out.
func TestDesRunFullDisk(t *testing.T) {
	parent := t.TempDir()
	t.Chdir(parent) // --out relative to the working directory, as typed
	out := "run"
	stdout, stderr, err := runFullDisk(t, 16<<10, "des", "run", "--instance", "A3C9-1", "--seed", "3", "--out", out)
	if err == nil {
		t.Fatalf("des run on a full disk succeeded:\n%s", stdout)
	}
	if !strings.Contains(stderr, "artifacts could not all be written, so none was moved into --out "+out) || !strings.Contains(stderr, "file too large") ||
		strings.Contains(stderr, ".tmp-") || !strings.Contains(stderr, "run/") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.Contains(stdout, "status done") {
		t.Errorf("an incomplete run printed as done:\n%s", stdout)
	}
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		t.Errorf("left beside --out: %s", e.Name())
	}
	// The same run without the limit writes --out.
	if _, stderr, err := runFullDisk(t, 1<<30, "des", "run", "--instance", "A3C9-1", "--seed", "3", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
}

// largest is the size of the largest regular file directly in dir.
func largest(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n = max(n, info.Size())
		}
	}
	return n
}

// A suite whose disk fills up (every file capped at a size the summaries
// fit in and the cases' logs do not) says why its cases failed and loses
// none finished before: they stay in place and in the summary; the next
// run, with room again, keeps them, reruns the failed ones and ends with
// the summary of a clean run.
func TestSuitesFullDisk(t *testing.T) {
	for _, tc := range []struct {
		name, cases, summary string
		args                 []string
	}{
		{"des", harness.SuiteCasesDir, harness.FileSuiteSummary,
			[]string{"des", "suite", "--suite", "gen:A2C4", "--paradigm", "centralized,hierarchical", "--controller", "rule,greedy", "--seeds", "1", "--workers", "2"}},
		{"silo", suite.RunsDir, suite.FileSummary,
			[]string{"silo", "suite", "--tasks", "I-01,II-18", "--agents", "2,5", "--protocols", "p2p", "--seeds", "1", "--workers", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			clean, dir := filepath.Join(tmp, "clean"), filepath.Join(tmp, "suite")
			if out, err := run(t, append(tc.args, "--out", clean)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			ids, err := os.ReadDir(filepath.Join(clean, tc.cases))
			if err != nil || len(ids) < 3 {
				t.Fatalf("clean run: %d cases, %v", len(ids), err)
			}
			limit := largest(t, clean) + 512
			caseMax := int64(0)
			for _, id := range ids {
				caseMax = max(caseMax, largest(t, filepath.Join(clean, tc.cases, id.Name())))
			}
			if caseMax <= limit {
				t.Fatalf("the largest case file (%d bytes) fits under the limit (%d): make the cases larger", caseMax, limit)
			}
			// The suite has run half its cases when the disk fills up.
			if out, err := run(t, append(tc.args, "--out", dir)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, id := range ids[:len(ids)/2] {
				if err := os.RemoveAll(filepath.Join(dir, tc.cases, id.Name())); err != nil {
					t.Fatal(err)
				}
			}
			kept, _ := os.ReadDir(filepath.Join(dir, tc.cases))
			stdout, stderr, err := runFullDisk(t, int(limit), append(tc.args, "--out", dir)...)
			// The cases' errors, as the OS (file too large) or SQLite (disk
			// I/O error, silo's run.db) tells them.
			if err == nil || !strings.Contains(stderr, "failed: ") || !(strings.Contains(stderr, "file too large") || strings.Contains(stderr, "disk I/O error")) {
				t.Fatalf("a suite on a full disk: %v, stderr:\n%s\nstdout:\n%s", err, stderr, stdout)
			}
			for _, k := range kept {
				a := mustRead(t, filepath.Join(clean, tc.cases, k.Name(), "manifest.json"))
				b := mustRead(t, filepath.Join(dir, tc.cases, k.Name(), "manifest.json"))
				if !bytes.Equal(a, b) {
					t.Errorf("finished case %s changed on a full disk", k.Name())
				}
			}
			if rows := strings.Count(string(mustRead(t, filepath.Join(dir, tc.summary))), "\n") - 1; rows < len(kept) {
				t.Errorf("the summary after the full disk has %d rows, %d cases were finished", rows, len(kept))
			}
			out, err := run(t, append(tc.args, "--out", dir)...)
			if err != nil || !strings.Contains(out, fmt.Sprintf("%d already done", len(kept))) {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if !bytes.Equal(mustRead(t, filepath.Join(clean, tc.summary)), mustRead(t, filepath.Join(dir, tc.summary))) {
				t.Errorf("%s after the full disk and a resume differs from a clean run's", tc.summary)
			}
		})
	}
}

// A sweep run whose disk fills up while its model-backed cases write
// their logs: the cases fail with their logs cut short, their spend is
// recorded all the same (read up to the last whole line), and the next
// run starts, reruns them, and counts the failed attempts in
// cost_attempts.csv.
func TestSweepFullDisk(t *testing.T) {
	tmp := t.TempDir()
	file := stubExperiment(t, tmp, "centralized,hierarchical", "1,2", "run:\n  workers: 2\n")
	dir := filepath.Join(tmp, "run")
	_, stderr, err := runFullDisk(t, 24<<10, "sweep", "run", file, "--out", dir)
	if err == nil || !strings.Contains(stderr, "file too large") {
		t.Fatalf("a sweep on a full disk: %v, stderr:\n%s", err, stderr)
	}
	failed, _ := os.ReadDir(filepath.Join(dir, "failed"))
	if len(failed) == 0 {
		t.Fatal("no case failed on the full disk")
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != len(failed) {
		t.Fatalf("ledger after the full disk: %d attempts, %v; want one per failed case (%d)", len(att), err, len(failed))
	}
	for _, a := range att {
		if a.Calls == 0 || a.InputTokens == 0 {
			t.Errorf("attempt at %s recorded no spend: %+v", a.CaseID, a)
		}
	}
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("the run after the full disk: %v\n%s", err, out)
	}
	rows := csvRows(t, filepath.Join(dir, sweep.FileCostAttempts))
	if len(rows)-1 != len(failed) {
		t.Errorf("cost_attempts.csv has %d rows, %d cases failed on the full disk", len(rows)-1, len(failed))
	}
}
