package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCommand: a suite run by the CLI reads back through report,
// in every format, HTML to a file named by --out.
func TestReportCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1,2", "--paradigm", "centralized,holonic_hybrid", "--out", dir); err != nil {
		t.Fatalf("des suite: %v\n%s", err, out)
	}
	out, err := run(t, "report", dir, "--format", "csv", "--table", "matrix")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][6] != "centralized" || recs[2][6] != "holonic_hybrid" {
		t.Fatalf("--table matrix: %v\n%s", err, out)
	}
	for _, f := range []string{"md", "latex"} {
		if out, err := run(t, "report", dir, "--format", f); err != nil || !strings.Contains(out, "holonic") {
			t.Errorf("--format %s: %v\n%s", f, err, out)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if _, err := run(t, "report", dir, "--out", page); err != nil {
		t.Fatalf("--out report.html: %v", err)
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte("data-series")) {
		t.Errorf("--out report.html did not write an HTML page with figures (%v)", err)
	}
	if out, err := run(t, "report", dir, "--format", "html", "--cases", "none"); err != nil || !strings.Contains(out, "--cases none") {
		t.Errorf("--format html to standard output: %v", err)
	}
	if _, err := run(t, "report", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a suite directory") {
		t.Errorf("an empty directory: %v", err)
	}
	// No flag: the HTML page, into report.html of the working directory.
	t.Chdir(t.TempDir())
	if _, err := run(t, "report", dir); err != nil {
		t.Fatalf("report DIR: %v", err)
	}
	if b, err := os.ReadFile("report.html"); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("report DIR wrote no report.html (%v)", err)
	}
	if _, err := run(t, "report", dir, "--out", "table.txt"); err == nil || !strings.Contains(err.Error(), "give --format") {
		t.Errorf("--out table.txt without --format: %v", err)
	}
}

// An existing report file is refused without --force (given as --out or
// the default report.html) and left as it was; --force replaces it.
func TestReportRefusesExistingOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1", "--paradigm", "centralized", "--out", dir); err != nil {
		t.Fatalf("des suite: %v\n%s", err, out)
	}
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"mine.md", []string{"--format", "md", "--out", "mine.md"}, "--out mine.md already exists: give another --out, or --force to replace it"},
		{"mine.html", []string{"--out", "mine.html"}, "--out mine.html already exists: give another --out, or --force"},
		{defaultReport, nil, defaultReport + " (the default --out) already exists: give --out, or --force"},
	} {
		if err := os.WriteFile(tc.file, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"report", dir}, tc.args...)
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v over an existing file: %v", tc.args, err)
		}
		if b := mustRead(t, tc.file); string(b) != "mine" {
			t.Errorf("%v: the refused report changed %s", tc.args, tc.file)
		}
		if out, err := run(t, append(args, "--force")...); err != nil {
			t.Errorf("%v --force: %v\n%s", tc.args, err, out)
		}
		if b := mustRead(t, tc.file); string(b) == "mine" {
			t.Errorf("%v --force did not replace %s", tc.args, tc.file)
		}
	}
}

// TestReportFigures: --figures writes each figure of the page on its own
// (an SVG and a LaTeX caption stub), refuses a directory that is not
// empty without --force, and writes into it with --force.
func TestReportFigures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1,2", "--paradigm", "centralized,holonic_hybrid", "--out", dir); err != nil {
		t.Fatalf("des suite: %v\n%s", err, out)
	}
	figs := filepath.Join(t.TempDir(), "figs")
	page, err := run(t, "report", dir, "--format", "html", "--cases", "none", "--figures", figs)
	if err != nil {
		t.Fatal(err)
	}
	svgs, _ := filepath.Glob(filepath.Join(figs, "fig-*.svg"))
	texs, _ := filepath.Glob(filepath.Join(figs, "fig-*.tex"))
	if n := strings.Count(page, "<figure "); n == 0 || len(svgs) != n || len(texs) != n {
		t.Errorf("%d SVGs and %d captions for the page's %d figures", len(svgs), len(texs), n)
	}
	if _, err := run(t, "report", dir, "--format", "html", "--cases", "none", "--figures", figs); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a --figures directory that is not empty: %v", err)
	}
	if _, err := run(t, "report", dir, "--format", "html", "--cases", "none", "--figures", figs, "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
}
