package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/silo/transcript"
	"github.com/coordbench/coordbench/suiterun"
)

func htmlPage(t *testing.T, dirs []string, opt Options) string {
	t.Helper()
	opt.Format = "html"
	var b bytes.Buffer
	if err := Write(&b, dirs, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	figureRe = regexp.MustCompile(`(?s)<figure data-figure="([^"]+)" data-series-count="(\d+)"[^>]*>(.*?)</figure>`)
	detailRe = regexp.MustCompile(`<details id="[^"]+"`)
)

// figures maps each figure id of a page to its declared series count,
// checking that the SVG holds exactly that many data-series groups.
func figures(t *testing.T, p string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, m := range figureRe.FindAllStringSubmatch(p, -1) {
		n, _ := strconv.Atoi(m[2])
		if got := len(seriesRe.FindAllString(m[3], -1)); got != n {
			t.Errorf("figure %s: %d data-series, declared %d", m[1], got, n)
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("figure id %s twice", m[1])
		}
		out[m[1]] = n
	}
	return out
}

// expectedFigures are figures of the page of the shared des and silo
// suites (in that order) and their series counts, from what the suites
// hold: the five machine states, power and cap, one decision source
// (builtin), one message series; two protocols; RCC and RCC_success per
// protocol; four failure modes; four edge kinds.
func expectedFigures() map[string]int {
	return map[string]int{
		"in1-case1-gantt": len(ganttKinds), "in1-case1-power": 2, "in1-case1-audit": 1, "in1-case1-messages": 1,
		"in1-fam0-b0-f0": len(coord.Builtins()),
		"in2-success-I":  2, "in2-success-III": 2, "in2-p-I": 2, "in2-p-III": 2, "in2-rcc-I": 4, "in2-rcc-III": 4,
		"in2-d-I": 2, "in2-d-III": 2, "in2-failures": len(failureModes), "in2-cooccurrence": len(failureModes),
		"in2-run1-graph": len(commKinds),
	}
}

// TestHTMLSuites: the page of a des and a silo suite has every figure
// with its series, fetches nothing, and is the same bytes twice.
func TestHTMLSuites(t *testing.T) {
	des, silo := suites(t)
	p := htmlPage(t, []string{des, silo}, Options{})
	if q := htmlPage(t, []string{des, silo}, Options{}); p != q {
		t.Fatal("two builds of the same suites differ")
	}
	figs := figures(t, p)
	paradigms := len(coord.Builtins())
	want := expectedFigures()
	for id, n := range want {
		if figs[id] != n {
			t.Errorf("figure %s: %d series, want %d", id, figs[id], n)
		}
	}
	if _, ok := figs["in2-tokens-I"]; ok {
		t.Error("a tokens figure for scripted agents, which use no model")
	}
	if _, ok := figs["in1-case"+strconv.Itoa(paradigms)+"-gantt"]; !ok {
		t.Errorf("no Gantt chart of case %d (one per paradigm by default)", paradigms)
	}
	// Default cases: the first seed of each paradigm; 4 silo runs (smallest N of each level × protocol).
	if n := len(detailRe.FindAllString(p, -1)); n != paradigms+4 {
		t.Errorf("%d per-case sections, want %d", n, paradigms+4)
	}
	if !strings.Contains(p, "the other 8 are left out") {
		t.Error("the page does not say which cases it left out")
	}
	for _, bad := range []string{"<script", "<link", "<img", "src=", "@import", "url(http", "https://"} {
		if strings.Contains(p, bad) {
			t.Errorf("the page holds %q: it must fetch nothing", bad)
		}
	}
	if strings.Count(p, "http://") != strings.Count(p, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("the page names an http:// address besides the SVG namespace")
	}
	for _, s := range []string{"Paradigm matrix: effectiveness", "G_mk ↓", "G_cj ↑", `class="best`, "≠ 0", "RCC_success"} {
		if !strings.Contains(p, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

func TestHTMLCases(t *testing.T) {
	des, silo := suites(t)
	id := "A3C9-1__hierarchical__rule__s2"
	p := htmlPage(t, []string{des, silo}, Options{Cases: []string{id, "I-01__n5__sfs__reference__seeded-s2"}})
	if n := len(detailRe.FindAllString(p, -1)); n != 2 || !strings.Contains(p, "<summary>"+id+"</summary>") {
		t.Errorf("--cases with two ids: %d sections", n)
	}
	p = htmlPage(t, []string{des, silo}, Options{Cases: []string{"none"}})
	if n := len(detailRe.FindAllString(p, -1)); n != 0 || !strings.Contains(p, "--cases none") {
		t.Errorf("--cases none: %d sections", n)
	}
	if err := Write(&bytes.Buffer{}, []string{des}, Options{Format: "html", Cases: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown case id: %v", err)
	}
	all := htmlPage(t, []string{des}, Options{Cases: []string{"all"}})
	if n := len(detailRe.FindAllString(all, -1)); n != 3*len(coord.Builtins()) {
		t.Errorf("--cases all: %d sections", n)
	}
}

// TestHTMLRunDirectories: a des run and a silo run directory each give
// their per-case page; the silo transcript is silo show's, escaped.
func TestHTMLRunDirectories(t *testing.T) {
	des, silo := suites(t)
	run := filepath.Join(des, "cases", "A3C9-1__centralized__rule__s1")
	figs := figures(t, htmlPage(t, []string{run}, Options{}))
	for _, f := range []string{"gantt", "power", "audit", "messages"} {
		if _, ok := figs["in1-"+f]; !ok {
			t.Errorf("des run page: no %s figure", f)
		}
	}
	srun := filepath.Join(silo, "runs", "III-23__n5__sfs__reference__seeded-s1")
	p := htmlPage(t, []string{srun}, Options{})
	var show bytes.Buffer
	if err := transcript.Write(&show, srun, transcript.Options{Agent: transcript.AllAgents}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "<pre>"+html.EscapeString(show.String())+"</pre>") {
		t.Error("the silo run page does not hold the transcript as silo show prints it")
	}
	figs = figures(t, p)
	if figs["in1-graph"] != len(commKinds) || len(figs) < 2 {
		t.Errorf("silo run page figures: %v", figs)
	}
	if !strings.Contains(p, "Answers and scores") {
		t.Error("no answers table")
	}
}

// TestHTMLEscapesArtifacts: model output in a run directory is text, never
// markup.
func TestHTMLEscapesArtifacts(t *testing.T) {
	_, silo := suites(t)
	src := filepath.Join(silo, "runs", "I-01__n2__p2p__reference__seeded-s1")
	dir := t.TempDir()
	for _, f := range []string{"result.json", "calls.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "result.json" {
			var m map[string]any
			json.Unmarshal(b, &m)
			m["agents"].([]any)[0].(map[string]any)["answer"] = `</pre><script>alert(1)</script>`
			m["task"] = `<img src=x onerror=alert(2)>`
			b, _ = json.Marshal(m)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	p := htmlPage(t, []string{dir}, Options{})
	if strings.Contains(p, "<script>") || strings.Contains(p, "<img") {
		t.Error("artifact text reached the page as markup")
	}
	if !strings.Contains(p, "&lt;script&gt;alert(1)") {
		t.Error("the answer is not shown")
	}
}

// TestDESRunReplay checks the machine states replayed from a small trace.
func TestDESRunReplay(t *testing.T) {
	dir := t.TempDir()
	trace := `{"t":0,"ev":"episode_start","instance":"X","seed":7,"time_unit_s":60,"power_cap_kw":10,"jobs":1,"total_ops":1}
{"t":0,"ev":"power_change","kw":2}
{"t":1,"ev":"transport_start","job":0,"op":0,"from":"dock","dur":2,"cell":"C1"}
{"t":3,"ev":"setup_start","job":0,"op":0,"cell":"C1","machine":0}
{"t":4,"ev":"setup_complete","job":0,"op":0,"cell":"C1","machine":0}
{"t":4,"ev":"process_start","job":0,"op":0,"cell":"C1","machine":0}
{"t":5,"ev":"breakdown","cell":"C1","machine":0,"job":0,"op":0}
{"t":6,"ev":"repair","cell":"C1","machine":0,"job":0,"op":0}
{"t":6,"ev":"process_resume","job":0,"op":0,"cell":"C1","machine":0,"phase":"busy"}
{"t":8,"ev":"finish","job":0,"op":0,"cell":"C1","machine":0}
{"t":9,"ev":"transport_start","job":0,"op":1,"from":"C1","from_machine":0,"dur":1,"cell":"C2"}
{"t":10,"ev":"power_change","kw":12}
{"t":12,"ev":"episode_end","status":"time_limit"}
`
	os.WriteFile(filepath.Join(dir, fileTrace), []byte(trace), 0o644)
	os.WriteFile(filepath.Join(dir, fileDecisions), []byte(`{"time":0,"source":"builtin"}`+"\n"+`{"time":11,"source":"fallback"}`+"\n"), 0o644)
	// Machines that never work still get a row.
	os.WriteFile(filepath.Join(dir, fileInstance), []byte(`{"areas":[{"id":"A1","cells":[{"id":"C1","machines":2},{"id":"C2","machines":1}]}]}`), 0o644)
	r, err := readDESRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{"C1 m0", "C1 m1", "C2 m0", "→ C1", "→ C2"}
	if strings.Join(r.rows, "|") != strings.Join(wantRows, "|") {
		t.Errorf("rows %v, want %v", r.rows, wantRows)
	}
	// Every span names the job (and operation) on the machine or in flight: the hover text.
	j0, j1 := "job 0, op 0", "job 0, op 1"
	want := []Span{{0, 3, 4, kSetup, j0}, {0, 4, 5, kBusy, j0}, {0, 5, 6, kDown, j0}, {0, 6, 8, kBusy, j0}, {0, 8, 9, kBlocked, j0}, {3, 1, 3, kTransport, j0}, {4, 9, 10, kTransport, j1}}
	if len(r.spans) != len(want) {
		t.Fatalf("spans %v, want %v", r.spans, want)
	}
	for i := range want {
		if r.spans[i] != want[i] {
			t.Errorf("span %d: %v, want %v", i, r.spans[i], want[i])
		}
	}
	if g := r.figures("x")[0]; g.Title != "Machines and transports" || !strings.Contains(string(g.SVG), "time (1 unit = 60 s)") || !strings.Contains(string(g.SVG), "<title>job 0, op 1: transport in flight 9–10</title>") {
		t.Errorf("the Gantt chart lacks the time unit or a span's job on hover:\n%s", g.SVG)
	}
	if r.end != 12 || r.cap != 10 || r.status != "time_limit" || r.seed != "7" || len(r.powerT) != 2 {
		t.Errorf("end %v cap %v status %s seed %s power %v", r.end, r.cap, r.status, r.seed, r.powerKW)
	}
	if len(r.sources) != 2 || r.audit[0][auditBins-1] != 1 || r.audit[1][auditBins-1] != 1 || r.audit[1][0] != 0 {
		t.Errorf("audit %v %v", r.sources, r.audit)
	}
}

// TestGanttRowsCapped: a plant of thousands of machines draws the first
// maxGanttRows rows and says how many it left out.
func TestGanttRowsCapped(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, fileTrace), []byte(`{"t":0,"ev":"episode_start"}`+"\n"+`{"t":5,"ev":"process_start","cell":"C9","machine":499}`+"\n"+`{"t":9,"ev":"episode_end","status":"done"}`), 0o644)
	os.WriteFile(filepath.Join(dir, fileInstance), []byte(`{"areas":[{"cells":[{"id":"C9","machines":500}]}]}`), 0o644)
	r, err := readDESRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.rows) != maxGanttRows || r.rowsLeft != 500-maxGanttRows || len(r.spans) != 0 {
		t.Errorf("%d rows, %d left, %d spans", len(r.rows), r.rowsLeft, len(r.spans))
	}
	if f := r.figures("x")[0]; !strings.Contains(f.Caption, "100 more") {
		t.Errorf("caption %q", f.Caption)
	}
	os.WriteFile(filepath.Join(dir, fileInstance), []byte(`{"areas":[{"cells":[{"id":"C9","machines":-1}]}]}`), 0o644)
	if _, err := readDESRun(dir); err == nil || !strings.Contains(err.Error(), "instance.json") {
		t.Errorf("a negative machine count: %v", err)
	}
}

// TestTransportsCapped: a trace with more transports than maxTransports
// keeps and draws the first maxTransports and says how many it left out;
// their rows are still shown.
func TestTransportsCapped(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"t":0,"ev":"episode_start"}` + "\n")
	const extra = 7
	for i := range maxTransports + extra {
		fmt.Fprintf(&b, `{"t":%d,"ev":"transport_start","cell":"C%d","dur":1}`+"\n", i, i%2)
	}
	fmt.Fprintf(&b, `{"t":%d,"ev":"episode_end","status":"done"}`+"\n", maxTransports+extra)
	os.WriteFile(filepath.Join(dir, fileTrace), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, fileInstance), []byte(`{"areas":[{"cells":[{"id":"C0","machines":1},{"id":"C1","machines":1}]}]}`), 0o644)
	r, err := readDESRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	drawn := 0
	for _, sp := range r.spans {
		if sp.Kind == kTransport {
			drawn++
		}
	}
	if drawn != maxTransports || r.transportsLeft != extra || !slices.Contains(r.rows, "→ C0") || !slices.Contains(r.rows, "→ C1") {
		t.Errorf("%d transports drawn (want %d), %d left out (want %d), rows %v", drawn, maxTransports, r.transportsLeft, extra, r.rows)
	}
	if f := r.figures("x")[0]; !strings.Contains(f.Caption, fmt.Sprintf("Only the first %d transports are drawn; %d more are left out.", maxTransports, extra)) {
		t.Errorf("caption %q", f.Caption)
	}
}

// The spans of machines whose rows are not shown do not use up maxSpans:
// a shown machine that works after many hidden ones still gets its spans.
func TestGanttSpansOfShownRows(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"t":0,"ev":"episode_start"}` + "\n")
	tm := 0
	for i := 0; i < maxSpans; i++ { // hidden machines 450..499 keep working
		fmt.Fprintf(&b, `{"t":%d,"ev":"process_start","cell":"C9","machine":%d}`+"\n", tm, 450+i%50)
		fmt.Fprintf(&b, `{"t":%d,"ev":"finish","cell":"C9","machine":%d}`+"\n", tm+1, 450+i%50)
		tm += 2
	}
	fmt.Fprintf(&b, `{"t":%d,"ev":"process_start","cell":"C9","machine":0}`+"\n", tm)
	fmt.Fprintf(&b, `{"t":%d,"ev":"finish","cell":"C9","machine":0}`+"\n", tm+1)
	fmt.Fprintf(&b, `{"t":%d,"ev":"episode_end","status":"done"}`+"\n", tm+2)
	os.WriteFile(filepath.Join(dir, fileTrace), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, fileInstance), []byte(`{"areas":[{"cells":[{"id":"C9","machines":500}]}]}`), 0o644)
	r, err := readDESRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	busy := 0
	for _, sp := range r.spans {
		if sp.Row >= maxGanttRows {
			t.Fatalf("a span of hidden row %d is drawn", sp.Row)
		}
		if sp.Row == 0 && sp.Kind == kBusy {
			busy++
		}
	}
	if busy != 1 || r.spansLeft != 0 {
		t.Errorf("machine m0: %d busy spans (want 1); %d spans left out (want 0)", busy, r.spansLeft)
	}
}

func TestDESRunMalformed(t *testing.T) {
	for name, c := range map[string]struct{ trace, want string }{
		"not json":   {`{"t":0,"ev":"episode_start"}` + "\n" + `{"t":1,`, "trace.jsonl:2: not a trace record"},
		"no time":    {`{"ev":"episode_start"}`, "trace.jsonl:1: record without a finite time"},
		"backwards":  {`{"t":2,"ev":"episode_start"}` + "\n" + `{"t":1,"ev":"power_change","kw":1}`, "trace.jsonl:2: time 1 goes back"},
		"no start":   {`{"t":0,"ev":"power_change","kw":1}`, "no episode_start"},
		"no machine": {`{"t":0,"ev":"episode_start"}` + "\n" + `{"t":0,"ev":"finish","cell":"C1"}`, "trace.jsonl:2: finish without a machine"},
		"long line":  {`{"t":0,"ev":"episode_start","instance":"` + strings.Repeat("x", maxTraceLine) + `"}`, "longer than"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, fileTrace), []byte(c.trace), 0o644)
		if _, err := readDESRun(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := readDESRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no trace") {
		t.Errorf("empty directory: %v", err)
	}
}

// The second suites of TestCompare: the des suite with another
// controller, the silo suite with another agent.
var (
	compareOnce       sync.Once
	desDirB, siloDirB string
	compareErr        error
)

func compareSuites(t *testing.T) (string, string) {
	t.Helper()
	suites(t)
	compareOnce.Do(func() {
		desDirB, siloDirB = filepath.Join(suitesRoot, "desB"), filepath.Join(suitesRoot, "siloB")
		o := desSuiteOptions
		o.Controllers = "greedy"
		s, err := harness.ResolveSuite(o)
		if err != nil {
			compareErr = err
			return
		}
		if _, compareErr = harness.RunSuite(context.Background(), s, desDirB, harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); compareErr != nil {
			return
		}
		so := siloSuiteOptions
		so.Agent = "tree"
		ss, err := suite.Resolve(so)
		if err != nil {
			compareErr = err
			return
		}
		_, compareErr = suite.Run(context.Background(), ss, siloDirB, suite.RunOptions{Workers: 2})
	})
	if compareErr != nil {
		t.Fatal(compareErr)
	}
	return desDirB, siloDirB
}

// TestCompare pairs two suites case by case and checks a row against the
// summaries read here.
func TestCompare(t *testing.T) {
	desA, siloA := suites(t)
	desB, siloB := compareSuites(t)
	secs, err := compareSections(desA, desB)
	if err != nil {
		t.Fatal(err)
	}
	sec := secs[0]
	if len(sec.CSVRows) != len(coord.Builtins())*len(harness.SuiteMetrics()) {
		t.Fatalf("%d rows, want one per paradigm and metric", len(sec.CSVRows))
	}
	if !strings.Contains(sec.Tables[0].Caption, "controller") {
		t.Errorf("the caption does not name the compared key: %s", sec.Tables[0].Caption)
	}
	// Recompute centralized G_mk: A − B by seed from the two summaries.
	value := func(dir string) map[string]float64 {
		col, rows := readAll(t, filepath.Join(dir, harness.FileSuiteSummary))
		m := map[string]float64{}
		for _, r := range rows {
			if r[col["paradigm"]] == "centralized" {
				m[r[col["seed"]]] = num(t, r[col["G_mk"]])
			}
		}
		return m
	}
	va, vb := value(desA), value(desB)
	var d []float64
	for _, s := range []string{"1", "2", "3"} {
		d = append(d, va[s]-vb[s])
	}
	st := Paired(d)
	row := sec.CSVRows[0] // instance, paradigm, [model, framework], metric, n, mean_diff, …
	col := map[string]int{}
	for i, h := range sec.CSVHead {
		col[h] = i
	}
	if row[col["paradigm"]] != "centralized" || row[col["metric"]] != "G_mk" || row[col["n"]] != "3" ||
		math.Abs(num(t, row[col["mean_diff"]])-st.Mean) > 1e-9 || math.Abs(num(t, row[col["t_lo"]])-st.T.Lo) > 1e-9 {
		t.Errorf("first row %v, want centralized G_mk n=3 mean %v t_lo %v", row, st.Mean, st.T.Lo)
	}
	// Silo: reference vs tree, paired by task × N × protocol × seed.
	ssecs, err := compareSections(siloA, siloB)
	if err != nil {
		t.Fatal(err)
	}
	if len(ssecs[0].CSVRows) == 0 || !strings.Contains(ssecs[0].Tables[0].Caption, "agent") {
		t.Errorf("silo comparison: %d rows, caption %q", len(ssecs[0].CSVRows), ssecs[0].Tables[0].Caption)
	}
	for _, r := range ssecs[0].CSVRows {
		if r[4] != "2" {
			t.Errorf("silo row %v: n = %s, want 2 (the level's one task × 2 seeds)", r, r[4])
		}
	}
	if _, err := compareSections(desA, siloA); err == nil || !strings.Contains(err.Error(), "same benchmark") {
		t.Errorf("des against silo: %v", err)
	}
	// Every format, and the HTML page.
	for _, f := range []string{"md", "csv", "latex"} {
		var b bytes.Buffer
		if err := Write(&b, []string{desA, desB}, Options{Format: f, Compare: true}); err != nil || !strings.Contains(b.String(), "mk") || !strings.Contains(b.String(), "desB") {
			t.Errorf("--compare --format %s: %v", f, err)
		}
	}
	p := htmlPage(t, []string{desA, desB}, Options{Compare: true, Cases: []string{"none"}})
	if !strings.Contains(p, `id="compare"`) || !strings.Contains(p, "Paired differences A − B") {
		t.Error("the HTML page has no comparison")
	}
	if err := Write(&bytes.Buffer{}, []string{desA}, Options{Format: "md", Compare: true}); err == nil {
		t.Error("--compare with one directory accepted")
	}
}

// TestSiloProtocolsPaired checks the protocol comparison of the silo
// suite against its summary.csv, read here on its own.
func TestSiloProtocolsPaired(t *testing.T) {
	_, silo := suites(t)
	runs, err := readSiloRuns(silo)
	if err != nil {
		t.Fatal(err)
	}
	sec := siloPairedSection(silo, runs)
	// 2 levels × 2 N × 1 agent, one pair (p2p, sfs), 4 metrics.
	if len(sec.CSVRows) != 16 {
		t.Fatalf("%d rows, want 16", len(sec.CSVRows))
	}
	col, rows := readAll(t, filepath.Join(silo, suite.FileSummary))
	d := map[string]float64{} // seed → D(p2p) − D(sfs) of I-01 at N = 5
	for _, r := range rows {
		if r[col["task"]] == "I-01" && r[col["N"]] == "5" {
			sign := 1.0
			if r[col["protocol"]] == "sfs" {
				sign = -1
			}
			d[r[col["seed"]]] += sign * num(t, r[col["D"]])
		}
	}
	want := Paired([]float64{d["1"], d["2"]})
	h := map[string]int{}
	for i, c := range sec.CSVHead {
		h[c] = i
	}
	found := false
	for _, r := range sec.CSVRows {
		if r[h["level"]] == "I" && r[h["N"]] == "5" && r[h["metric"]] == "D" {
			found = true
			if r[h["A"]] != "p2p" || r[h["B"]] != "sfs" || r[h["n"]] != "2" || math.Abs(num(t, r[h["mean_diff"]])-want.Mean) > 1e-12 {
				t.Errorf("row %v, want p2p − sfs over 2 seeds, mean %v", r, want.Mean)
			}
		}
	}
	if !found {
		t.Error("no row for level I, N = 5, D")
	}
}

// TestBootstrapDraws: the bootstrap's indices are rand.Rand.Uint64N's on
// the same PCG stream when n is not a power of two (the bootstrap uses
// Lemire's method for every n, as testdata/paired_check.py does).
func TestBootstrapDraws(t *testing.T) {
	for _, n := range []uint64{3, 7, 150, 1<<63 + 5} { // Uint64N masks a power of two instead
		ours := rand.NewPCG(BootstrapSeed1, BootstrapSeed2)
		std := rand.New(rand.NewPCG(BootstrapSeed1, BootstrapSeed2))
		for range 2000 {
			hi, lo := bits.Mul64(ours.Uint64(), n)
			if lo < n {
				hi = indexReject(ours, n, hi, lo)
			}
			if want := std.Uint64N(n); hi != want {
				t.Fatalf("n = %d: index %d, Uint64N %d", n, hi, want)
			}
		}
	}
}

func TestCapWriterKeepsWholeRunes(t *testing.T) {
	w := &capWriter{max: 5}
	w.Write([]byte("abcd"))
	w.Write([]byte("é€x"))
	if w.String() != "abcd\xc3" || w.dropped != 5 {
		t.Fatalf("kept %q, dropped %d", w.String(), w.dropped)
	}
	for in, want := range map[string]string{"abcd\xc3": "abcd", "ab€": "ab€", "ab\xe2\x82": "ab", "abc": "abc", "": ""} {
		if got := trimPartialRune(in); got != want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSiloRunMalformed(t *testing.T) {
	_, silo := suites(t)
	src := filepath.Join(silo, "runs", "I-01__n2__p2p__reference__seeded-s1")
	res, err := os.ReadFile(filepath.Join(src, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		result, calls, want string
	}{
		"result not json": {"{", "", "result.json"},
		"no team":         {`{"n": 0}`, "", "not a team size"},
		"calls not json":  {string(res), "{\"round\":1,\n", "calls.jsonl:1: not a call record"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "result.json"), []byte(c.result), 0o644)
		os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(c.calls), 0o644)
		if _, err := readSiloRun(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := readSiloRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "needs its result.json") {
		t.Errorf("empty directory: %v", err)
	}
}

// pythonPaired runs testdata/paired_check.py (Python's standard library
// alone) on the lists of differences.
func pythonPaired(t *testing.T, sets [][]float64) []map[string]float64 {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	req, _ := json.Marshal(map[string]any{"level": Level, "resamples": Resamples, "seed1": uint64(BootstrapSeed1), "seed2": uint64(BootstrapSeed2), "diffs": sets})
	cmd := exec.Command(py, "testdata/paired_check.py")
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("paired_check.py: %v\n%s", err, stderr.String())
	}
	var res []map[string]float64
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(sets) {
		t.Fatalf("paired_check.py: %d results for %d sets (%v)", len(res), len(sets), err)
	}
	return res
}

// TestCompareAgainstPython checks the intervals of --compare, as written
// in its CSV, against Python on the differences read here from the two
// summaries.
func TestCompareAgainstPython(t *testing.T) {
	desA, _ := suites(t)
	desB, _ := compareSuites(t)
	var b bytes.Buffer
	if err := Write(&b, []string{desA, desB}, Options{Format: "csv", Compare: true}); err != nil {
		t.Fatal(err)
	}
	col, rows := func() (map[string]int, [][]string) {
		p := filepath.Join(t.TempDir(), "c.csv")
		os.WriteFile(p, b.Bytes(), 0o644)
		return readAll(t, p)
	}()
	values := func(dir string) map[string]map[string]string { // paradigm/seed → metric → value
		c, rs := readAll(t, filepath.Join(dir, harness.FileSuiteSummary))
		out := map[string]map[string]string{}
		for _, r := range rs {
			m := map[string]string{}
			for _, k := range metricKeys() {
				m[k] = r[c[k]]
			}
			out[r[c["paradigm"]]+"/"+r[c["seed"]]] = m
		}
		return out
	}
	va, vb := values(desA), values(desB)
	var sets [][]float64
	var csvRows [][]string
	for _, r := range rows {
		var d []float64
		for _, s := range []string{"1", "2", "3"} {
			k := r[col["paradigm"]] + "/" + s
			d = append(d, num(t, va[k][r[col["metric"]]])-num(t, vb[k][r[col["metric"]]]))
		}
		if sampleSD(d) > 0 && len(sets) < 8 {
			sets, csvRows = append(sets, d), append(csvRows, r)
		}
	}
	if len(sets) == 0 {
		t.Fatal("no compared metric with spread")
	}
	want := pythonPaired(t, sets)
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	for i, r := range csvRows {
		for _, c := range [][2]string{{"mean_diff", "mean"}, {"t_lo", "t_lo"}, {"t_hi", "t_hi"}, {"boot_lo", "boot_lo"}, {"boot_hi", "boot_hi"}} {
			if got := num(t, r[col[c[0]]]); !close(got, want[i][c[1]]) {
				t.Errorf("%s %s: %s = %v, Python %v", r[col["paradigm"]], r[col["metric"]], c[0], got, want[i][c[1]])
			}
		}
	}
}
