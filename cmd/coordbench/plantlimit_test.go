package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlantLimitFlag: the plants of issue 14 that exhausted memory are
// refused by every command that loads instances, with the flag that
// raises the limit; the flag admits them.
func TestPlantLimitFlag(t *testing.T) {
	dir := t.TempDir()
	tiny, err := os.ReadFile(filepath.Join("..", "..", "des", "factory", "testdata", "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(tiny), "arrivals:")
	j := strings.Index(string(tiny), "due_slack:")
	file := filepath.Join(dir, "many_jobs.yaml")
	huge := string(tiny[:i]) + "arrivals:\n  jobs: 10000000\n  mean_interarrival: 1\n" + string(tiny[j:])
	if err := os.WriteFile(file, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "run", "--instance", "gen:A16C64J10000000", "--out", out}, "10000000 jobs: over the limit of 100000 (raise it with --plant-limit jobs=10000000"},
		{[]string{"des", "run", "--instance", file, "--out", out}, `field "arrivals.jobs": 10000000 jobs: over the limit of 100000 (raise it with --plant-limit jobs=10000000`},
		{[]string{"des", "instance", "gen:A300C300"}, "300 areas: over the limit of 256 (raise it with --plant-limit areas=300"},
		{[]string{"des", "suite", "--suite", "A3C9-1,gen:A100000C100000", "--out", out}, "--suite: generator spec gen:A100000C100000: 100000 areas: over the limit of 256"},
		{[]string{"des", "case", "--case-id", "gen-A300C300__centralized__rule__s1", "--out", out}, "--plant-limit areas=300"},
		{[]string{"des", "bench", "--instance", "gen:A300C300"}, "--plant-limit areas=300"},
		{[]string{"des", "instance", "A3C9-1", "--plant-limit", "cell=5"}, `"cell=5": want NAME=N with NAME one of areas, cells, machines, jobs, products, route, operations`},
	} {
		got, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v (output %.200q), want %q", strings.Join(tc.args, " "), err, got, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused plant left %s: %v", out, err)
	}
	got, err := run(t, "des", "instance", "gen:A300C300", "--plant-limit", "areas=300", "--plant-limit", "cells=2000,machines=9000")
	if err != nil || !strings.Contains(got, "gen:A300C300") {
		t.Errorf("raised limits: %v\n%.300s", err, got)
	}
}
