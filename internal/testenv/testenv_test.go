package testenv

import (
	"testing"
)

// recorder is a testing.TB that records how a helper ended the test
// instead of ending it.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestMissingFailsInCIAndSkipsElsewhere(t *testing.T) {
	for _, ci := range []string{"", "1"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		if p := LookPath(r, "coordbench-no-such-program"); p != "" {
			t.Errorf("CI=%q: LookPath of a missing program = %q", ci, p)
		}
		if want := ci != ""; r.failed != want || r.skipped == want {
			t.Errorf("CI=%q: failed %v, skipped %v; want failed %v", ci, r.failed, r.skipped, want)
		}
	}
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	if p := LookPath(r, "go"); p == "" || r.failed || r.skipped {
		t.Errorf("LookPath(go) = %q, failed %v, skipped %v", p, r.failed, r.skipped)
	}
}

func TestWait(t *testing.T) {
	n := 0
	Wait(t, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
}

func (r *recorder) Logf(string, ...any) {}
