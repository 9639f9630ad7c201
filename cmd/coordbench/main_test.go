package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// run executes the CLI in-process with args and returns stdout.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestRunWritesArtifacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--seed", "3", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "G_mk") || !strings.Contains(out, dir) {
		t.Errorf("summary lacks metrics or the output path:\n%s", out)
	}
	for _, f := range []string{harness.FileMetrics, harness.FileTrace, harness.FileDecisions,
		harness.FileMessages, harness.FileManifest, harness.FileInstance} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	var m harness.Metrics
	b, _ := os.ReadFile(filepath.Join(dir, harness.FileMetrics))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Instance != "A3C9-1" || m.Seed != 3 || m.Paradigm != "centralized" || m.Controller != "rule" || m.GDs == 0 {
		t.Errorf("metrics.json: %+v", m)
	}
	var man harness.Manifest
	b, _ = os.ReadFile(filepath.Join(dir, harness.FileManifest))
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if man.Seed != 3 || man.InstanceSHA256 == "" || len(man.Files) != 5 || man.Paradigm.ID != "centralized" {
		t.Errorf("manifest.json: %+v", man)
	}
	// The resolved instance in the run directory loads back as an instance.
	if _, err := factory.LoadFile(filepath.Join(dir, harness.FileInstance)); err != nil {
		t.Errorf("instance.json does not load back: %v", err)
	}
}

func TestRunIsReproducible(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, d := range []string{a, b} {
		if _, err := run(t, "des", "run", "--instance", "A5C12-2", "--seed", "21", "--controller", "random", "--out", d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{harness.FileTrace, harness.FileDecisions, harness.FileMetrics, harness.FileManifest} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two identical runs", f)
		}
	}
}

func TestInstanceJSON(t *testing.T) {
	out, err := run(t, "des", "instance", "A5C12-1", "--json", "--seed", "2")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Instance factory.Instance  `json:"instance"`
		Seed     uint64            `json:"seed"`
		Jobs     []factory.JobSpec `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Seed != 2 || len(got.Jobs) != got.Instance.Arrivals.Jobs || len(got.Instance.Areas) != 5 {
		t.Fatalf("resolved instance: seed %d, %d jobs, %d areas", got.Seed, len(got.Jobs), len(got.Instance.Areas))
	}
	c := got.Instance.Areas[1].Cells[0]
	if c.Buffer == 0 || c.PowerKW == nil || c.Machines == 0 {
		t.Errorf("cell defaults not resolved in the output: %+v", c)
	}
	for _, j := range got.Jobs {
		if j.Due <= j.Arrival {
			t.Errorf("job %d due %v before arrival %v", j.ID, j.Due, j.Arrival)
		}
	}
}

func TestListAndBench(t *testing.T) {
	out, err := run(t, "des", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(factory.BuiltinNames(), "centralized", "rule", "random") {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	out, err = run(t, "des", "bench", "--hold", "100", "--events", "1000")
	if err != nil {
		t.Fatal(err)
	}
	var h harness.HoldThroughput
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.Events != 1000 || h.Pending != 100 {
		t.Errorf("hold bench: %+v %v", h, err)
	}
	out, err = run(t, "des", "bench", "--instance", "A3C9-1", "--episodes", "3")
	if err != nil {
		t.Fatal(err)
	}
	var tp harness.Throughput
	if err := json.Unmarshal([]byte(out), &tp); err != nil || tp.Episodes != 3 || tp.EventsPerSec <= 0 {
		t.Errorf("episode bench: %+v %v", tp, err)
	}
}

func TestBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, err := factory.BuiltinSource("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bad, bytes.Replace(src, []byte("wip_cap:"), []byte("wip_cap: -3\nold_wip_cap:"), 1), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "run", "--instance", bad, "--out", t.TempDir()}, "bad.yaml:"},
		{[]string{"des", "run", "--instance", "A9C99-7"}, "unknown instance"},
		{[]string{"des", "run", "--paradigm", "anarchy"}, "unknown paradigm"},
		{[]string{"des", "run", "--controller", "oracle"}, "unknown controller"},
		{[]string{"des", "instance", "gen:A0C0"}, "need at least one area"},
		{[]string{"des", "bench", "--hold", "10", "--events", "0"}, "--events"},
		{[]string{"des", "serve-socket", "--socket", filepath.Join(t.TempDir(), "s"), "--workers", "0"}, "--workers 0: want 1 to"},
		{[]string{"des", "serve-socket", "--socket", filepath.Join(t.TempDir(), "s"), "--workers", "5000"}, "want 1 to 1024"},
		{[]string{"des", "serve-socket", "--socket", filepath.Join(t.TempDir(), "s"), "--procs", "-1"}, "--procs -1"},
	} {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := run(t, "des", "run", "--instance", "A5C12-2", "--controller", "greedy", "--out", dir); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "des", "validate", dir)
	if err != nil || !strings.Contains(out, "all checks hold") {
		t.Fatalf("valid run rejected: %v\n%s", err, out)
	}
	// Tamper with the metrics: validation must fail and say which.
	path := filepath.Join(dir, harness.FileMetrics)
	b, _ := os.ReadFile(path)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["G_cj"] = m["G_cj"].(float64) + 1
	b, _ = json.Marshal(m)
	os.WriteFile(path, b, 0o644)
	out, err = run(t, "des", "validate", dir)
	if err == nil || !strings.Contains(out, "G_cj") {
		t.Errorf("tampered metrics accepted: %v\n%s", err, out)
	}
	if _, err := run(t, "des", "validate", t.TempDir()); err == nil {
		t.Error("an empty directory validated")
	}
}

func TestRunWithStubModel(t *testing.T) {
	stub, err := despolicy.New("random")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "hierarchical", "--controller", "llm",
		"--llm-model", "plant=stub-big,area=stub-small,cell=stub-small", "--llm-base-url", srv.URL+"/v1",
		"--framework", "relay", "--llm-cache", filepath.Join(t.TempDir(), "cache.db"), "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var m harness.Metrics
	b, _ := os.ReadFile(filepath.Join(dir, harness.FileMetrics))
	json.Unmarshal(b, &m)
	if m.Controller != "llm" || m.Framework != "relay" || !strings.Contains(m.Model, "plant=stub-big") || m.GLlm+m.GFb != m.Secondary.Decisions ||
		m.GFb > m.Secondary.ForcedAssignments || m.Secondary.PromptTokens == 0 { // the random stub may decline a plant fallback: that is the only fallback
		t.Errorf("metrics: controller %s framework %s model %s G_llm %d G_fb %d", m.Controller, m.Framework, m.Model, m.GLlm, m.GFb)
	}
	if out, err := run(t, "des", "validate", dir); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"des", "run", "--controller", "llm"},
		{"des", "run", "--controller", "llm", "--llm-model", "x", "--llm-base-url", srv.URL, "--framework", "swarm"},
		{"des", "run", "--controller", "llm", "--llm-model", "boss=x", "--llm-base-url", srv.URL},
	} {
		if _, err := run(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// --version prints the module version (and, when the build recorded it,
// the VCS commit) from the build information (issue 14).
func TestVersionFlag(t *testing.T) {
	out, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "coordbench ") || strings.TrimSpace(out) == "coordbench" {
		t.Fatalf("--version: %v\n%q", err, out)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && !strings.Contains(out, s.Value[:12]) {
				t.Errorf("--version %q lacks the commit %s", out, s.Value)
			}
		}
	}
}

// readMetrics reads the metrics.json of the run in dir.
func readMetrics(t *testing.T, dir string) harness.Metrics {
	t.Helper()
	var m harness.Metrics
	b, err := os.ReadFile(filepath.Join(dir, harness.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
