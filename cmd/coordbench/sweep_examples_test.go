package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExampleExperimentsRunOffline: every file in examples/experiments
// runs to the end on a fresh clone with nothing started by hand: the ones
// with models name stub: base URLs, played in the sweep's own process. Each
// case is done, and the model-backed ones made model calls.
func TestExampleExperimentsRunOffline(t *testing.T) {
	files, err := filepath.Glob("../../examples/experiments/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	cases := regexp.MustCompile(`cases: (\d+) planned, (\d+) done, 0 failed, 0 not started`)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if out, err := run(t, "sweep", "run", f, "--out", dir); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			st, err := run(t, "sweep", "status", dir)
			m := cases.FindStringSubmatch(st)
			if err != nil || m == nil || m[1] != m[2] || m[1] == "0" {
				t.Fatalf("not every case is done: %v\n%s", err, st)
			}
			if strings.Contains(mustReadString(t, f), "base_url: stub:") && !strings.Contains(st, "USD") {
				t.Errorf("a model-backed experiment without a money table:\n%s", st)
			}
			t.Logf("%s: %s cases done", filepath.Base(f), m[1])
		})
	}
}

func mustReadString(t *testing.T, path string) string { return string(mustRead(t, path)) }
