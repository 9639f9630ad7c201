package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/mdtable/mdtabletest"
)

// hostile are strings a model, a runner or a file name may hold that
// would run script, load something, spoof text or drive a terminal if a
// page or a file took them as they are. Those that run set window.pwned;
// those that load ask 127.0.0.1:1 (closed) or a relative file.
var hostile = []string{
	`<script>window.pwned="script";fetch("http://127.0.0.1:1/s")</script>`,
	`<img src=x onerror="window.pwned='img'">`,
	`"><svg onload="window.pwned='attr'">`,
	`javascript:window.pwned='url'`,
	`</pre><iframe src="http://127.0.0.1:1/f"></iframe>`,
	`<style>@import url(http://127.0.0.1:1/c.css)</style><link rel=stylesheet href="http://127.0.0.1:1/l.css">`,
	"\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://127.0.0.1:1/\x1b\\link",
	"\u202egnp.exe\u202c \u2066x\u2069",
	"=HYPERLINK(\"http://127.0.0.1:1/\",\"x\") | ~ ^ \\ $ & # _ % { }",
}

// hostileText is every hostile string in one.
func hostileText() string { return strings.Join(hostile, " ") }

// hostileDESSuite is a copy of the shared des suite whose summary names a
// hostile model, and whose cases record hostile decision sources and
// message types (series labels of the per-case figures).
func hostileDESSuite(t *testing.T) string {
	t.Helper()
	des, _ := suites(t)
	dir := filepath.Join(t.TempDir(), "des")
	if err := os.CopyFS(dir, os.DirFS(des)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, harness.FileSuiteSummary)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	model := slices.Index(recs[0], "model")
	for _, r := range recs[1:] {
		r[model] = hostileText()
	}
	var out bytes.Buffer
	csv.NewWriter(&out).WriteAll(recs)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	label, _ := json.Marshal(hostileText())
	cases, err := filepath.Glob(filepath.Join(dir, "cases", "*"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, c := range cases {
		replaceIn(t, filepath.Join(c, fileDecisions), `"source":"builtin"`, `"source":`+string(label))
		editJSON(t, filepath.Join(c, fileMetrics), func(m map[string]any) {
			m["secondary"].(map[string]any)["messages_by_type"].(map[string]any)[hostileText()] = 3
		})
	}
	return dir
}

// hostileSiloRun is a silo run whose messages, answer and task are
// hostile, in a directory whose name is hostile too.
func hostileSiloRun(t *testing.T) string {
	t.Helper()
	_, silo := suites(t)
	src := filepath.Join(silo, "runs", "I-01__n2__p2p__reference__seeded-s1")
	dir := filepath.Join(t.TempDir(), strings.NewReplacer("/", "", `\`, "").Replace(hostile[1]+hostile[6]+hostile[7]))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	editJSON(t, filepath.Join(dir, "result.json"), func(m map[string]any) {
		m["agents"].([]any)[0].(map[string]any)["answer"] = hostileText()
		m["task"] = hostileText()
	})
	calls, err := os.ReadFile(filepath.Join(src, "calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.SplitAfter(string(calls), "\n") {
		var c map[string]any
		if json.Unmarshal([]byte(l), &c) != nil {
			lines = append(lines, l)
			continue
		}
		if args, ok := c["args"].(map[string]any); ok && c["tool"] == "send_message" {
			args["content"] = hostileText()
		}
		if res, ok := c["result"].(map[string]any); ok {
			if msgs, ok := res["messages"].([]any); ok {
				for _, x := range msgs {
					x.(map[string]any)["content"] = hostileText()
				}
			}
		}
		nb, _ := json.Marshal(c)
		lines = append(lines, string(nb)+"\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editJSON rewrites the JSON object in the file at path with edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceIn replaces old by new in the file at path, which must hold old.
func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %s", path, old)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostileReportInChromium: a page built from a des suite and a silo
// run full of hostile strings (model names, decision sources, message
// types, agent messages, answers, the task, the input's file name) runs
// no script and fetches nothing in a real browser, and shows the strings
// as text, without terminal controls or bidirectional overrides.
func TestHostileReportInChromium(t *testing.T) {
	bin := chromiumPath(t)
	des, run := hostileDESSuite(t), hostileSiloRun(t)
	html := htmlPage(t, []string{des, run}, Options{Cases: []string{"all"}})
	if i := strings.IndexAny(html, "\x1b\x07\u202e\u2066"); i >= 0 {
		t.Errorf("the page holds a control character at %d: %q", i, html[max(0, i-40):min(len(html), i+40)])
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	v := openInChromium(t, bin, file)
	if v.pwned != "" {
		t.Errorf("a hostile script ran: window.pwned = %q", v.pwned)
	}
	for _, p := range v.problems {
		t.Errorf("the page logged a problem: %s", p)
	}
	url := "file://" + filepath.ToSlash(file)
	for _, r := range v.requests {
		if r != url {
			t.Errorf("the page requested %s (only the file itself may be loaded)", r)
		}
	}
	// Each kind of input shows the strings as text: the model (matrix),
	// a decision source (figure legend), an agent's message (transcript).
	for _, want := range []string{hostile[0], hostile[1], hostile[3], "gnp.exe"} {
		if n := strings.Count(v.text, want); n < 3 {
			t.Errorf("%q shown %d times as text, want it from the model, the answers and the transcript", want, n)
		}
	}
}

// TestCSPBlocksInjectedMarkup: should markup ever slip past the escaping,
// the page's Content-Security-Policy keeps it from running a script or
// loading anything. The markup is put into a real page by hand here; a
// page without the policy runs it (TestBrowserCheckCatchesProblems).
func TestCSPBlocksInjectedMarkup(t *testing.T) {
	bin := chromiumPath(t)
	des, _ := suites(t)
	html := htmlPage(t, []string{des}, Options{Cases: []string{"none"}})
	injected := `<script>window.pwned="inline"</script><img src="http://127.0.0.1:1/x.png" onerror="window.pwned='handler'">` +
		`<a href="javascript:window.pwned='link'" id="evil">x</a><iframe src="http://127.0.0.1:1/f"></iframe>` +
		`<link rel="stylesheet" href="http://127.0.0.1:1/l.css"><form action="http://127.0.0.1:1/p"></form>`
	page := strings.Replace(html, "<body>", "<body>"+injected, 1)
	if page == html {
		t.Fatal("no <body> to inject into")
	}
	file := filepath.Join(t.TempDir(), "injected.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	v := openInChromium(t, bin, file)
	if v.pwned != "" {
		t.Errorf("injected script ran despite the policy: window.pwned = %q", v.pwned)
	}
	for _, r := range v.requests {
		if strings.Contains(r, "127.0.0.1:1") {
			t.Errorf("the page requested %s despite the policy", r)
		}
	}
}

// TestTextFormatsHostile: a hostile model name in a suite's summary
// breaks no Markdown table, is no spreadsheet formula in the CSV (where
// the numbers stay numbers) and runs no LaTeX command.
func TestTextFormatsHostile(t *testing.T) {
	des, _ := suites(t)
	b, err := os.ReadFile(filepath.Join(des, harness.FileSuiteSummary))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	const model = `=cmd|' /C calc'!A0 a\|b \input{/etc/passwd} $x^2$ & # _ % ~ {}` + "\x1b[2J"
	j := slices.Index(recs[0], "model")
	for _, r := range recs[1:] {
		r[j] = model
	}
	var out bytes.Buffer
	csv.NewWriter(&out).WriteAll(recs)
	dir := copySuite(t, out.Bytes())
	text := func(format string) string {
		var b bytes.Buffer
		if err := Write(&b, []string{dir}, Options{Format: format, Tables: []string{SectionMatrix}}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if i := strings.IndexAny(b.String(), "\x1b"); i >= 0 {
			t.Errorf("%s output holds ESC at %d", format, i)
		}
		return b.String()
	}

	cells, err := csv.NewReader(strings.NewReader(text("csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	mj, gj := slices.Index(cells[0], "model"), slices.Index(cells[0], "G_mk_mean")
	if mj < 0 || gj < 0 {
		t.Fatalf("csv header %q", cells[0])
	}
	for _, r := range cells[1:] {
		if !strings.HasPrefix(r[mj], "'=cmd") {
			t.Errorf("csv: model cell %q is a formula", r[mj])
		}
		if _, err := strconv.ParseFloat(r[gj], 64); err != nil && r[gj] != "" {
			t.Errorf("csv: G_mk_mean %q is no longer a number", r[gj])
		}
	}

	mdtabletest.RowsMatchHeads(t, text("md"), func(l string) bool { return strings.HasPrefix(l, "| instance") },
		func(l string) bool { return strings.Contains(l, "=cmd") })

	latex := text("latex")
	if !strings.Contains(latex, `\textbackslash{}input\{/etc/passwd\} \$x\textasciicircum{}2\$ \& \# \_ \% \textasciitilde{} \{\}`) {
		t.Errorf("latex: the model is not escaped:\n%s", latex)
	}
}
