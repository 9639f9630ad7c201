//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/sweep"
)

// The temporary directory a killed des run left beside --out (a second
// Ctrl-C) is removed by the next run into the same --out; that of a run
// still alive (it holds its directory) is left alone, and so is another
// --out's.
func TestRunRemovesDeadTemporaries(t *testing.T) {
	parent := t.TempDir()
	dead, live, other := filepath.Join(parent, ".tmp-run-111"), filepath.Join(parent, ".tmp-run-222"), filepath.Join(parent, ".tmp-other-333")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "partial"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	release, err := atomicfs.HoldDir(live) // a run in flight
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if out, err := run(t, "des", "run", "--instance", "A3C9-1", "--seed", "3", "--out", filepath.Join(parent, "run")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, want := tempsIn(t, parent), []string{".tmp-other-333", ".tmp-run-222"}; !slices.Equal(got, want) {
		t.Errorf("temporaries left %v, want %v (the dead run's removed)", got, want)
	}
}

// A distributed worker killed outright mid-case leaves the case's partial
// logs in its scratch directory; a worker restarted on the same scratch
// directory reports their model usage as an interrupted attempt (in the
// served directory's ledger) and removes them. The killed worker is this
// test binary run as the CLI, so no other build is needed.
func TestDistKilledWorkerUsageRecovered(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stub := newSlowStub(t, 50*time.Millisecond)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, stub.URL, "1, 2", "")
	emb := startNATS(t)
	ctx := context.Background()
	out, scratch := filepath.Join(tmp, "dist"), filepath.Join(tmp, "scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL()})
	waitMarker(t, out)
	// The victim is killed once its case has logged a decision.
	victim := exec.Command(bin, "worker", "--nats", emb.URL(), "--out", out, "--scratch", scratch, "--name", "victim")
	victim.Env = append(os.Environ(), cliFileLimitEnv+"="+strconv.Itoa(1<<40)) // the CLI, with no limit to speak of
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill() }) // if the wait fails
	var logged string
	testenv.Wait(t, "a decision of the victim's case", func() bool {
		m, _ := filepath.Glob(filepath.Join(scratch, "coordbench-case-*", "suite", "cases", ".tmp-*", harness.FileDecisions))
		for _, f := range m {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte("\n")) {
				logged = f
				return true
			}
		}
		return false
	})
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.Wait()
	name := filepath.Base(filepath.Dir(logged))
	killed := name[len(".tmp-"):strings.LastIndexByte(name, '-')]
	ws := workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "rescuer", scratch: scratch, experimentDir: "."}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, ws, "worker"); err != nil {
		t.Fatal(err)
	}
	att, err := sweep.ReadAttempts(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []sweep.Attempt
	for _, a := range att {
		if a.Outcome == sweep.AttemptInterrupted {
			got = append(got, a)
		}
	}
	if len(got) != 1 || got[0].CaseID != killed || got[0].Calls == 0 {
		t.Errorf("interrupted attempts %+v; want one at the killed case %s with its calls", got, killed)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory left: %v", left)
	}
}
