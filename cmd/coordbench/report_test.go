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
