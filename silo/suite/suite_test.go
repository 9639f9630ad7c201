package suite

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/play"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// columns maps a CSV header's names to their indices.
func columns(head []string) map[string]int {
	m := map[string]int{}
	for i, h := range head {
		m[h] = i
	}
	return m
}

func TestSuite(t *testing.T) {
	s, err := Resolve(Options{Levels: "I,III", Agents: "1,2,5", Protocols: "p2p,broadcast,sfs", Baseline: "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	if want := 20 * 3 * 3; len(s.Cases) != want {
		t.Fatalf("%d cases, want %d", len(s.Cases), want)
	}
	if s.Cases[0].ID != "I-01__n1__p2p__reference__seeded-s1" {
		t.Errorf("first case id %s", s.Cases[0].ID)
	}
	dir := t.TempDir()
	var last Progress
	rep, err := Run(context.Background(), s, dir, RunOptions{Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != len(s.Cases) || len(rep.Failures) != 0 || !rep.Complete() || last.Done != len(s.Cases) {
		t.Fatalf("ran %d, failures %v, progress %+v", rep.Ran, rep.Failures, last)
	}
	sum := readCSV(t, filepath.Join(dir, FileSummary))
	if len(sum) != len(s.Cases)+1 || strings.Join(sum[0], ",") != strings.Join(SummaryHeader(), ",") {
		t.Fatalf("summary: %d rows, header %v", len(sum), sum[0])
	}
	// Aggregates recomputed from the summary match aggregate.csv.
	type acc struct {
		runs                 int
		s, p, pPaper, dReads float64
		crashed              int
	}
	want := map[string]*acc{}
	sc := columns(sum[0])
	num := func(r []string, name string) float64 {
		v, _ := strconv.ParseFloat(r[sc[name]], 64)
		return v
	}
	for i, r := range sum[1:] {
		if r[0] != s.Cases[i].ID {
			t.Fatalf("row %d is %s, want %s", i, r[0], s.Cases[i].ID)
		}
		if r[sc["S"]] != "1" || r[sc["success"]] != "true" || r[sc["P"]] != "1" {
			t.Errorf("%s: S %s success %s P %s", r[0], r[sc["S"]], r[sc["success"]], r[sc["P"]])
		}
		if (r[sc["protocol"]] == "sfs") != (r[sc["D_reads"]] != "") {
			t.Errorf("%s: D_reads %q", r[0], r[sc["D_reads"]])
		}
		k := r[sc["agent"]] + "/" + r[sc["level"]] + "/" + r[sc["N"]] + "/" + r[sc["protocol"]]
		if want[k] == nil {
			want[k] = &acc{}
		}
		w := want[k]
		w.runs++
		w.s += num(r, "S")
		w.p += num(r, "P")
		w.pPaper += num(r, "P_paper")
		w.dReads += num(r, "D_reads")
		if r[sc["P_paper_crashes"]] != "0" {
			w.crashed++
		}
		if _, err := os.Stat(filepath.Join(dir, RunsDir, r[0], play.FileDB)); err != nil {
			t.Errorf("%s: %v", r[0], err)
		}
	}
	agg := readCSV(t, filepath.Join(dir, FileAggregate))
	if len(agg) != len(want)+1 || strings.Join(agg[0], ",") != strings.Join(AggregateHeader(), ",") {
		t.Fatalf("aggregate: %d rows, want %d; header %v", len(agg)-1, len(want), agg[0])
	}
	ac := columns(agg[0])
	for _, r := range agg[1:] {
		w := want[r[ac["agent"]]+"/"+r[ac["level"]]+"/"+r[ac["N"]]+"/"+r[ac["protocol"]]]
		if w == nil {
			t.Fatalf("aggregate row %v not in the summary", r)
		}
		n := float64(w.runs)
		dReads := ""
		if r[ac["protocol"]] == "sfs" {
			dReads = f4(w.dReads / n)
		}
		if r[ac["runs"]] != strconv.Itoa(w.runs) || r[ac["S_mean"]] != f4(w.s/n) || r[ac["P_mean"]] != f4(w.p/n) ||
			r[ac["P_paper_mean"]] != f4(w.pPaper/n) || r[ac["P_paper_crashed_runs"]] != strconv.Itoa(w.crashed) ||
			r[ac["D_reads_mean"]] != dReads {
			t.Errorf("aggregate row %v, summary gives %+v", r, w)
		}
		if r[ac["success_rate"]] != "1.0000" || r[ac["RCC"]] != "0.0000" || r[ac["RCC_success"]] != "0.0000" ||
			r[ac["rcc_baseline"]] != "seeded" || r[ac["merged_from"]] != "" {
			t.Errorf("aggregate row %v: success or RCC", r)
		}
		// Level III: III-25, III-27 and III-30 crash the published P rule.
		if r[ac["level"]] == "III" && (w.crashed != w.runs*3/10 || w.pPaper/n >= 1) {
			t.Errorf("aggregate row %v: %d of %d runs crashed the published P rule, P_paper %v", r, w.crashed, w.runs, w.pPaper/n)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, FileAggregateMD))
	if !strings.Contains(string(md), "| reference | III   |") {
		t.Errorf("aggregate.md:\n%s", md)
	}

	// A rerun executes nothing and rewrites identical files.
	files := []string{FileSummary, FileAggregate, FileAggregateMD}
	before := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		before[f] = string(b)
	}
	resBefore, _ := os.ReadFile(filepath.Join(dir, RunsDir, s.Cases[7].ID, play.FileResult))
	os.MkdirAll(filepath.Join(dir, RunsDir, ".tmp-stale-123"), 0o755)
	rep, err = Run(context.Background(), s, dir, RunOptions{Workers: 2})
	if err != nil || rep.Ran != 0 || rep.Skip != len(s.Cases) {
		t.Fatalf("rerun: %v, ran %d, skipped %d", err, rep.Ran, rep.Skip)
	}
	if _, err := os.Stat(filepath.Join(dir, RunsDir, ".tmp-stale-123")); err == nil {
		t.Error("stale temp dir kept")
	}
	check := func() {
		for _, f := range files {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if string(b) != before[f] {
				t.Errorf("%s changed", f)
			}
		}
	}
	check()
	// Deleting one run dir reruns exactly it, with the same result.
	os.RemoveAll(filepath.Join(dir, RunsDir, s.Cases[7].ID))
	rep, err = Run(context.Background(), s, dir, RunOptions{})
	if err != nil || rep.Ran != 1 || rep.Skip != len(s.Cases)-1 {
		t.Fatalf("after delete: %v, ran %d", err, rep.Ran)
	}
	check()
	resAfter, _ := os.ReadFile(filepath.Join(dir, RunsDir, s.Cases[7].ID, play.FileResult))
	if string(resAfter) != string(resBefore) {
		t.Error("rerun result.json differs")
	}
	// A changed round cap is a different configuration: refused in the
	// same directory (it would replace the earlier runs), and with Force
	// it replaces the earlier suite.
	s2, _ := Resolve(Options{Tasks: "I-01", Agents: "2", Protocols: "sfs", MaxRounds: 50, NoBaseline: true})
	if len(s2.Cases) != 1 {
		t.Fatalf("%d cases", len(s2.Cases))
	}
	if _, err = Run(context.Background(), s2, dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "another configuration (baseline, cases, max_rounds differ") {
		t.Fatalf("changed config: %v", err)
	}
	rep, err = Run(context.Background(), s2, dir, RunOptions{Force: true})
	if err != nil || rep.Ran != 1 {
		t.Fatalf("changed config, forced: %v, ran %d", err, rep.Ran)
	}
}

// TestTaskRevision: a run written before II-18's instances changed (its
// manifest has no task_revision) is rerun; an unchanged task's old run is
// kept.
func TestTaskRevision(t *testing.T) {
	for _, mode := range []string{"seeded", "official"} {
		t.Run(mode, func(t *testing.T) { testTaskRevision(t, mode) })
	}
}

func testTaskRevision(t *testing.T, mode string) {
	s, err := Resolve(Options{Tasks: "II-17,II-18", Agents: "2", Protocols: "p2p", Mode: mode, Seeds: "1,2", NoBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), s, dir, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	ii18 := 0
	for _, c := range s.Cases {
		path := filepath.Join(dir, RunsDir, c.ID, FileManifest)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		_, has := m["task_revision"]
		if has != (c.Task.ID == "II-18") {
			t.Fatalf("%s: manifest %s", c.ID, b)
		}
		if has {
			ii18++
		}
		delete(m, "task_revision")
		b, _ = json.Marshal(m)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ii18 == 0 || ii18 == len(s.Cases) {
		t.Fatalf("%d of %d cases are II-18", ii18, len(s.Cases))
	}
	rep, err := Run(context.Background(), s, dir, RunOptions{})
	if err != nil || rep.Ran != ii18 || rep.Skip != len(s.Cases)-ii18 {
		t.Fatalf("resume: %v, ran %d, skipped %d; want %d II-18 runs rerun", err, rep.Ran, rep.Skip, ii18)
	}
}

// TestMessageFormatManifest: the manifest and result.json record the
// message format, and the same suite under the other format reruns every
// case instead of keeping runs made the other way.
func TestMessageFormatManifest(t *testing.T) {
	dir := t.TempDir()
	for k, f := range []string{"", "json", "json"} {
		s, err := Resolve(Options{Tasks: "I-01", Agents: "2", Protocols: "p2p,sfs", MessageFormat: f, NoBaseline: true})
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			// Another format is another configuration, refused in the same
			// directory; without its silo_suite.json (a directory written
			// before it existed) the manifests still tell the runs apart.
			if _, err := Run(context.Background(), s, dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "message_format differ") {
				t.Fatalf("another format: %v", err)
			}
			if err := os.Remove(filepath.Join(dir, FileConfig)); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := Run(context.Background(), s, dir, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{2, 2, 0}[k]; rep.Ran != want {
			t.Fatalf("format %q: ran %d, want %d", f, rep.Ran, want)
		}
		want := map[string]string{"": "str", "json": "json"}[f]
		for _, c := range s.Cases {
			for _, name := range []string{FileManifest, play.FileResult} {
				var m struct {
					Format string `json:"message_format"`
				}
				b, _ := os.ReadFile(filepath.Join(dir, RunsDir, c.ID, name))
				if err := json.Unmarshal(b, &m); err != nil || m.Format != want {
					t.Fatalf("%s %s: %s", c.ID, name, b)
				}
			}
		}
	}
	if _, err := Resolve(Options{Tasks: "I-01", Agents: "2", MessageFormat: "yaml"}); err == nil {
		t.Fatal("message format yaml accepted")
	}
}

// TestMessageOrderManifest: the message order is recorded (random by
// default) and a suite resumed under the other order is refused; without
// its silo_suite.json, the manifests make every case rerun.
func TestMessageOrderManifest(t *testing.T) {
	dir := t.TempDir()
	for k, o := range []string{"", "fixed", "fixed"} {
		s, err := Resolve(Options{Tasks: "I-01", Agents: "3", Protocols: "p2p", MessageOrder: o, NoBaseline: true})
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			if _, err := Run(context.Background(), s, dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "message_order differ") {
				t.Fatalf("another order: %v", err)
			}
			if err := os.Remove(filepath.Join(dir, FileConfig)); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := Run(context.Background(), s, dir, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{1, 1, 0}[k]; rep.Ran != want {
			t.Fatalf("order %q: ran %d, want %d", o, rep.Ran, want)
		}
		want := map[string]string{"": "random", "fixed": "fixed"}[o]
		for _, name := range []string{FileManifest, play.FileResult} {
			var m struct {
				Order string `json:"message_order"`
			}
			b, _ := os.ReadFile(filepath.Join(dir, RunsDir, s.Cases[0].ID, name))
			if err := json.Unmarshal(b, &m); err != nil || m.Order != want {
				t.Fatalf("%s: %s", name, b)
			}
		}
	}
	if _, err := Resolve(Options{Tasks: "I-01", Agents: "2", MessageOrder: "shuffled"}); err == nil {
		t.Fatal("message order shuffled accepted")
	}
}

// TestResultFormat: a run written before result.json carried P_paper (its
// manifest has no result_format) is rerun on resume, not reported with
// P_paper = 0.
func TestResultFormat(t *testing.T) {
	s, err := Resolve(Options{Tasks: "III-21", Agents: "5", Protocols: "p2p", Mode: "official", NoBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), s, dir, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, RunsDir, s.Cases[0].ID, FileManifest)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["result_format"] != float64(resultFormat) {
		t.Fatalf("manifest %s: %v", b, err)
	}
	delete(m, "result_format")
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), s, dir, RunOptions{})
	if err != nil || rep.Ran != 1 || rep.Skip != 0 {
		t.Fatalf("resume: %v, ran %d, skipped %d; want the old run rerun", err, rep.Ran, rep.Skip)
	}
	if p := rep.Cases[0].Result.PPaper; p <= 0.9 || p >= 1 {
		t.Errorf("III-21 N=5 official: P_paper %v, want 0.97", p)
	}
}

func TestInterrupted(t *testing.T) {
	s, err := Resolve(Options{Levels: "I", Agents: "2", Protocols: "p2p", NoBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, s, t.TempDir(), RunOptions{Workers: 1})
	if err != nil || !rep.Interrupted || rep.Ran != 0 {
		t.Fatalf("%v, %+v", err, rep)
	}
}

func TestBadSpecs(t *testing.T) {
	for _, o := range []Options{
		{Levels: "IV", Agents: "2"},
		{Levels: "I", Agents: "2", Protocols: "pigeon"},
		{Levels: "I", Agents: "2", Agent: "llm"},
		{Levels: "I", Agents: "3", Mode: "official"},
		{Levels: "I", Agents: "0"},
		{Levels: "I", Agents: "2", Mode: "weird"},
		{Tasks: "IV-99", Agents: "2"},
		{Levels: "I", Agents: "2", Seeds: "x"},
		{Levels: "I", Agents: "2", Seeds: "1-10000,20000-30000"}, // more than maxSeeds
	} {
		if _, err := Resolve(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	s, err := Resolve(Options{Levels: "II", Agents: "2,5", Protocols: "sfs", Mode: "official", NoBaseline: true})
	if err != nil || len(s.Cases) != 20 || s.Cases[0].ID != "II-11__n2__sfs__reference__official" {
		t.Fatalf("official: %v", err)
	}
	// official mode's seeded RCC baseline: seeded N = 1 runs of the same tasks
	s, err = Resolve(Options{Levels: "II", Agents: "2,5", Protocols: "sfs", Mode: "official", Seeds: "1-2", Baseline: "seeded"})
	if err != nil || len(s.Cases) != 40 {
		t.Fatalf("official with baseline: %v, %d cases", err, len(s.Cases))
	}
	want := []string{"II-11__n1__sfs__reference__seeded-s1", "II-11__n1__sfs__reference__seeded-s2",
		"II-11__n2__sfs__reference__official", "II-11__n5__sfs__reference__official"}
	for i, id := range want {
		if s.Cases[i].ID != id {
			t.Errorf("case %d is %s, want %s", i, s.Cases[i].ID, id)
		}
	}
	// the merged baseline (default): one merged run of each official
	// N = k instance, right before the runs of that k; seeds do not apply
	s, err = Resolve(Options{Levels: "II", Agents: "2,5", Protocols: "sfs", Mode: "official", Seeds: "1-2"})
	if err != nil || len(s.Cases) != 40 {
		t.Fatalf("official with merged baseline: %v, %d cases", err, len(s.Cases))
	}
	want = []string{"II-11__n1__sfs__reference__official-merged-n2", "II-11__n2__sfs__reference__official",
		"II-11__n1__sfs__reference__official-merged-n5", "II-11__n5__sfs__reference__official"}
	for i, id := range want {
		if s.Cases[i].ID != id || (s.Cases[i].N == 1) != (s.Cases[i].MergedFrom > 0) {
			t.Errorf("case %d is %s (merged from %d), want %s", i, s.Cases[i].ID, s.Cases[i].MergedFrom, id)
		}
	}
	if _, err := Resolve(Options{Levels: "I", Agents: "2", Baseline: "pooled"}); err == nil {
		t.Error("baseline pooled accepted")
	}
}
