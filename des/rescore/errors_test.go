package rescore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
)

// copyRun copies the pinned run into a new directory.
func copyRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(pins[0].run)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRescoreRefuses: missing artifacts, a file that no longer matches
// its manifest's hash, a malformed or cut trace, an interrupted run, and
// keys a newer build wrote are refused with an error that says so, and
// nothing is written.
func TestRescoreRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"missing trace", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, harness.FileTrace)) }, "incomplete run directory (no trace.jsonl)"},
		{"edited trace", func(t *testing.T, dir string) { appendTo(t, dir, harness.FileTrace, "\n") }, "does not match the SHA-256"},
		{"interrupted", func(t *testing.T, dir string) {
			replace(t, dir, harness.FileManifest, `"status": "done"`, `"status": "interrupted"`)
		}, "ended interrupted: it is not a result"},
		{"newer keys", func(t *testing.T, dir string) {
			replace(t, dir, harness.FileManifest, `"tool": "coordbench",`, `"tool": "coordbench", "future": 1,`)
		}, "future, which this build does not know"},
		{"malformed metrics", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, harness.FileMetrics), []byte("{"), 0o644)
		}, "metrics.json: unexpected end"},
		{"not a directory", func(t *testing.T, dir string) {
			os.RemoveAll(dir)
			os.WriteFile(dir, []byte("x"), 0o644)
		}, "not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyRun(t)
			c.edit(t, dir)
			_, err := Dir(context.Background(), dir, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "rescore.json")); err == nil {
				t.Error("rescore.json written after a refusal")
			}
		})
	}
}

// TestRescoreCutTrace: a trace whose manifest hash matches but which has
// no episode_end (a hand-made or foreign run) is refused as cut short.
func TestRescoreCutTrace(t *testing.T) {
	dir := copyRun(t)
	b, err := os.ReadFile(filepath.Join(dir, harness.FileTrace))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	cut := []byte(strings.Join(lines[:len(lines)-1], ""))
	os.WriteFile(filepath.Join(dir, harness.FileTrace), cut, 0o644)
	replace(t, dir, harness.FileManifest, sha256Hex(b), sha256Hex(cut))
	if _, err := Dir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "no episode_end") {
		t.Fatalf("error %v", err)
	}
}

// TestRescoreCancelled: a rescore whose context ends (Ctrl-C) writes
// nothing.
func TestRescoreCancelled(t *testing.T) {
	dir := copyRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dir(ctx, dir, Options{Scorer: harness.Scorer{Version: "x", Rules: harness.Rules{PowerViolations: harness.PowerEntries}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 6 {
		t.Errorf("%d entries after a cancelled rescore", len(ents))
	}
}

func appendTo(t *testing.T, dir, name, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

func replace(t *testing.T, dir, name, old, new string) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q (%v)", name, old, err)
	}
	os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}
