package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
)

// copyDES copies the des suite of the tests into a new directory, with
// suite.json's scorer version replaced by version ("" removes it, as in
// a suite from before versions were recorded).
func copyDES(t *testing.T, version string) string {
	t.Helper()
	desDir, _ := suites(t)
	dir := filepath.Join(t.TempDir(), "des")
	if err := os.CopyFS(dir, os.DirFS(desDir)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "suite.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := `"scorer": "` + harness.ScorerVersion + `"`
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("suite.json records no scorer version:\n%s", b)
	}
	repl := `"scorer": "` + version + `"`
	if version == "" {
		repl = `"scorer": ""`
	}
	os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(repl), 1), 0o644)
	return dir
}

// TestScorerVersions: a report of directories of one benchmark scored
// under different scorer versions (or one under none recorded) says so in
// the Markdown, LaTeX and HTML output; one of a single version, and one
// mixing the two benchmarks' own versions, says nothing.
func TestScorerVersions(t *testing.T) {
	desDir, siloDir := suites(t)
	if w := ScorerWarning([]string{desDir, siloDir}); w != "" {
		t.Errorf("one version per benchmark: %s", w)
	}
	if v, k, err := ScorerVersion(siloDir); err != nil || v != "silo-score/1" || k != KindSilo {
		t.Errorf("silo suite: %s %s %v", v, k, err)
	}
	old, other := copyDES(t, ""), copyDES(t, "des-metrics/0")
	w := ScorerWarning([]string{desDir, old, other, siloDir})
	for _, want := range []string{"des directories were scored under different scorer versions", harness.ScorerVersion + " (" + desDir + ")",
		"unrecorded (" + old + ")", "des-metrics/0 (" + other + ")", "coordbench des rescore DIR"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q: %s", want, w)
		}
	}
	if strings.Contains(w, "silo") {
		t.Errorf("the silo suite has one version: %s", w)
	}
	for format, prefix := range map[string]string{"md": "> **warning: ", "latex": "% warning: ", "html": ""} {
		var b bytes.Buffer
		if err := Write(&b, []string{desDir, old}, Options{Format: format}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasPrefix(out, prefix) || !strings.Contains(out, "unrecorded (") {
			t.Errorf("%s output does not start with the warning:\n%.300s", format, out)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, []string{desDir}, Options{Format: "md"}); err != nil || strings.Contains(b.String(), "warning") {
		t.Errorf("one directory: %v\n%.300s", err, b.String())
	}
}
