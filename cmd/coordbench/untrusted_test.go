package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/mdtable/mdtabletest"
)

// hostileModel is a model name that drives a terminal (set the window
// title, clear the screen, colour), reorders text (a bidi override) and
// is a spreadsheet formula (a leading @); it has no '=', which --llm-model
// reads as a role.
const hostileModel = "@SUM(1+1)*cmd|' /C calc'!A0 a\\|b \x1b]0;pwned\x07\x1b[2J\x1b[31m|\u202eevil"

// noControls fails the test if out holds a terminal control or a bidi
// override, and checks that the hostile name is shown (as pictures).
func noControls(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexAny(out, "\x1b\x07\u202e\u009b"); i >= 0 {
		t.Errorf("%s holds a control character at %d: %q", what, i, out[max(0, i-30):min(len(out), i+30)])
	}
	if !strings.Contains(out, "␛]0;pwned␇") {
		t.Errorf("%s does not show the model name:\n%s", what, out)
	}
}

// csvCells are the cells of column col in the CSV file at path.
func csvCells(t *testing.T, path, col string) []string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(mustRead(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	j := slices.Index(recs[0], col)
	if j < 0 {
		t.Fatalf("%s: no column %s", path, col)
	}
	var out []string
	for _, r := range recs[1:] {
		out = append(out, r[j])
	}
	return out
}

// A des model name with terminal controls and a formula reaches neither
// the terminal nor a spreadsheet as such, from des suite (stdout, the
// summary and aggregate files) and from sweep plan, run and status.
func TestHostileModelName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized", "--seeds", "1",
		"--controller", "llm", "--llm-base-url", "stub:builtin", "--llm-model", hostileModel, "--out", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	noControls(t, "des suite's output", out)
	for _, f := range []string{"suite_summary.csv", "suite_aggregate.csv"} {
		for _, c := range csvCells(t, filepath.Join(dir, f), "model") {
			if !strings.HasPrefix(c, "'@SUM") {
				t.Errorf("%s: model cell %q is a formula", f, c)
			}
		}
		for _, c := range csvCells(t, filepath.Join(dir, f), "G_mk"+map[bool]string{true: "_mean"}[f == "suite_aggregate.csv"]) {
			if _, err := strconv.ParseFloat(c, 64); err != nil {
				t.Errorf("%s: G_mk cell %q is no longer a number", f, c)
			}
		}
	}
	md := string(mustRead(t, filepath.Join(dir, "suite_aggregate.md")))
	noControls(t, "suite_aggregate.md", md)
	mdtabletest.RowsMatchHeads(t, md, func(l string) bool { return strings.HasPrefix(l, "| instance") },
		func(l string) bool { return strings.HasPrefix(l, "| A3C9-1") })

	tmp := t.TempDir()
	file := filepath.Join(tmp, "exp.yaml")
	exp := "benchmark: des\ndes:\n  instances: A3C9-1\n  paradigms: [centralized]\n  controllers: [llm]\n  seeds: [1]\n" +
		"models:\n  - model: " + strconv.Quote("="+hostileModel) + "\n    base_url: stub:builtin\n    price: {input: 1, output: 2}\n"
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := filepath.Join(tmp, "sweep")
	for _, args := range [][]string{{"sweep", "plan", file}, {"sweep", "run", file, "--out", sweep}, {"sweep", "status", sweep}} {
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[:2], err, out)
		}
		noControls(t, strings.Join(args[:2], " "), out)
	}
	for _, c := range csvCells(t, filepath.Join(sweep, "cost_summary.csv"), "model") {
		if c != "total" && !strings.HasPrefix(c, "'=@SUM") {
			t.Errorf("cost_summary.csv: model cell %q is a formula", c)
		}
	}
}
