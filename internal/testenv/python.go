package testenv

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

var ranTests = regexp.MustCompile(`(?m)^Ran [1-9][0-9]* tests? in `)

// PythonUnittest runs `py -m unittest discover -s dir -p pattern -v`
// (pattern "" is unittest's default, test*.py) with env added to the
// environment, and returns its output. A hung run is stopped 10 s before
// t's deadline; t fails when the run fails, when any Python test was
// skipped (the tests that need a program must not pass silently), and
// when none ran (Python before 3.12 passes a discovery that found
// nothing).
func PythonUnittest(t testing.TB, py, dir, pattern string, env ...string) string {
	t.Helper()
	ctx := context.Background()
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, set := dl.Deadline(); set {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
			defer cancel()
		}
	}
	args := []string{"-m", "unittest", "discover", "-s", dir, "-v"}
	if pattern != "" {
		args = append(args, "-p", pattern)
	}
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("python tests (%s %s): %v", py, pattern, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s -m unittest: %v\n%s", py, err, out)
	}
	if strings.Contains(string(out), "skipped") {
		t.Fatalf("python tests were skipped:\n%s", out)
	}
	if !ranTests.Match(out) {
		t.Fatalf("%s -m unittest ran no test:\n%s", py, out)
	}
	return string(out)
}
