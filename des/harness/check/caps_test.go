package check

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sparse replaces path by a file of size zero bytes (sparse: no disk
// used), a line without end as a log.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// des validate reads every file of a run directory within a bound (issue
// 31 item 4): a log with a line over maxLine, a log over maxLogFile and a
// JSON document over maxJSONFile are each an error naming the file and
// the bound, and nothing beyond the bound is read.
func TestDirCapsWhatItReads(t *testing.T) {
	src := t.TempDir()
	runDir(t, testInstances()[0], "rule", 1, src)
	for _, tc := range []struct {
		name string
		size int64
		want string
	}{
		{fileTrace, maxLine + 1, fileTrace + ":1: a line longer than " + strconv.Itoa(maxLine) + " bytes"},
		{fileDecisions, maxLine + 1, fileDecisions + ":1: a line longer than " + strconv.Itoa(maxLine) + " bytes"},
		{fileMessages, maxLine + 1, fileMessages + ":1: a line longer than " + strconv.Itoa(maxLine) + " bytes"},
		{fileDecisions, maxLogFile + 1, fileDecisions + " is larger than the limit of " + strconv.Itoa(maxLogFile) + " bytes"},
		{fileInstance, maxJSONFile + 1, fileInstance + " is larger than the limit of " + strconv.Itoa(maxJSONFile) + " bytes"},
	} {
		dir := t.TempDir()
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sparse(t, filepath.Join(dir, tc.name), tc.size)
		_, err = Dir(dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s of %d bytes: %v, want %q", tc.name, tc.size, err, tc.want)
		}
	}
}
