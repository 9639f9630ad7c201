package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

var doneRE = regexp.MustCompile(`cases: (\d+) done`)

// serveOnce runs sweep serve of file into out on url with k workers on
// the shared directory, and returns the done count serve printed.
func serveOnce(t *testing.T, file, out, url string, k int) int {
	t.Helper()
	ctx := context.Background()
	var stdout testenv.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(ctx, serveConfig{file: file, out: out, natsURL: url, store: jetstream.StoreFS,
			ackWait: 2 * time.Second, maxDeliver: 3, maxCaseBytes: jetstream.DefaultMaxCaseBytes}, &stdout, nil)
	}()
	waitMarker(t, out)
	ws := workers(ctx, k, workerConfig{natsURL: url, slots: 1, name: "w", scratch: t.TempDir(), experimentDir: ".", out: out, wait: 30 * time.Second}, nil)
	if err := wait(t, errc, "serve"); err != nil {
		t.Fatalf("serve: %v\n%s", err, stdout.String())
	}
	for range k {
		if err := wait(t, ws, "worker"); err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	m := doneRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("serve printed no done count:\n%s", stdout.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestDistStaleCasesRerun: case directories in the shared --out that a
// worker would have taken for "already stored" — a torn one (its
// metrics gone), one of an earlier version (its manifest says so) and a
// forged one (metrics that are not those the manifest hashes) — are run
// again when serve is run again: serve's done count is the number of
// rows of the summary, and the summary is the one of the first,
// untampered run.
func TestDistStaleCasesRerun(t *testing.T) {
	x := experiments[0] // des-small, 16 cases
	emb := startNATS(t)
	out := filepath.Join(t.TempDir(), "dist")
	if n := serveOnce(t, x.file, out, emb.URL(), 2); n != 16 || len(summaryRows(t, out)) != 16 {
		t.Fatalf("first serve: %d done, %d rows; want 16", n, len(summaryRows(t, out)))
	}
	first, err := os.ReadFile(filepath.Join(out, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(out, "cases"))
	if err != nil || len(ents) != 16 {
		t.Fatalf("%d case directories, %v", len(ents), err)
	}
	caseDir := func(i int) string { return filepath.Join(out, "cases", ents[i].Name()) }
	// Torn: a worker killed while the directory was written (by hand).
	if err := os.Remove(filepath.Join(caseDir(0), harness.FileMetrics)); err != nil {
		t.Fatal(err)
	}
	// Of an earlier version.
	var man map[string]any
	b, err := os.ReadFile(filepath.Join(caseDir(1), harness.FileManifest))
	if err != nil || json.Unmarshal(b, &man) != nil {
		t.Fatalf("manifest: %v", err)
	}
	man["version"] = "0.0.1-old"
	b, _ = json.Marshal(man)
	if err := os.WriteFile(filepath.Join(caseDir(1), harness.FileManifest), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Forged metrics.
	if err := os.WriteFile(filepath.Join(caseDir(2), harness.FileMetrics), []byte(`{"status":"done","G_mk":1,"G_cj":999}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A worker's check of a stored case is serve's.
	data, err := os.ReadFile(x.file)
	if err != nil {
		t.Fatal(err)
	}
	trust, _ := jetstream.NewTrust(nil)
	stored, err := storedCheck(".", trust, &jetstream.Spec{FileName: filepath.Base(x.file), File: data}, out)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, false, true} {
		if got := stored(ents[i].Name()); got != want {
			t.Errorf("the worker's check of %s: %v, want %v", ents[i].Name(), got, want)
		}
	}
	n := serveOnce(t, x.file, out, emb.URL(), 2)
	if rows := len(summaryRows(t, out)); n != rows || n != 16 {
		t.Errorf("serve again: %d done, the summary has %d rows; want 16 and 16", n, rows)
	}
	again, err := os.ReadFile(filepath.Join(out, harness.FileSuiteSummary))
	if err != nil || !bytes.Equal(again, first) {
		t.Errorf("the summary after the rerun differs from the first run's (%v)", err)
	}
}
