package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/suiterun"
)

// A case whose episode fails is recorded with status error, counted, kept
// out of the aggregate and of cases/, and retried by the next run.
func TestSuiteFailedCase(t *testing.T) {
	s, err := ResolveSuite(SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "all", Seeds: "1,2,3", Controllers: "rule,greedy"})
	if err != nil {
		t.Fatal(err)
	}
	clean := t.TempDir()
	if _, err := RunSuite(context.Background(), s, clean, SuiteRunOptions{Options: suiterun.Options{Workers: 2}}); err != nil {
		t.Fatal(err)
	}

	bad := map[uint64]error{ // by seed: an episode error, an artifact error
		2: errors.New("engine commit failed"),
		3: errors.New("disk full"),
	}
	failing := func(ctx context.Context, ep Episode, dir string) (Result, error) {
		res, err := RunToDir(ctx, ep, dir)
		if ep.Controller.Name() == "greedy" {
			switch ep.Seed {
			case 2:
				res.Err = bad[2]
			case 3:
				err = bad[3]
			}
		}
		return res, err
	}
	dir := t.TempDir()
	var last SuiteProgress
	rep, err := RunSuite(context.Background(), s, dir, SuiteRunOptions{Options: suiterun.Options{Workers: 2, Progress: func(p SuiteProgress) { last = p }}, runEpisode: failing})
	if err != nil {
		t.Fatal(err)
	}
	nModes := len(s.Config.Paradigms)
	if rep.Failed != 2*nModes || last.Failed != 2*nModes || last.Done != len(s.Cases) || !rep.Complete() || rep.Interrupted {
		t.Fatalf("failed %d (progress %d), done %d of %d", rep.Failed, last.Failed, last.Done, len(s.Cases))
	}
	for _, r := range rep.Cases {
		failed := r.Case.Controller == "greedy" && r.Case.Seed >= 2
		cd := filepath.Join(dir, SuiteCasesDir, r.Case.ID)
		fd := filepath.Join(dir, SuiteFailedDir, r.Case.ID)
		_, inCases := os.Stat(cd)
		msg, inFailed := os.ReadFile(filepath.Join(fd, FileCaseError))
		if failed {
			if r.Status != StatusError || !strings.Contains(r.Err, bad[r.Case.Seed].Error()) || inCases == nil ||
				inFailed != nil || !strings.Contains(string(msg), bad[r.Case.Seed].Error()) {
				t.Errorf("%s: status %q, error %q, in cases/ %v, error.txt %q", r.Case.ID, r.Status, r.Err, inCases == nil, msg)
			}
		} else if r.Status == StatusError || r.Err != "" || inCases != nil || inFailed == nil {
			t.Errorf("%s: status %q, error %q", r.Case.ID, r.Status, r.Err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(dir, FileSuiteSummary))
	if n := strings.Count(string(sum), ",error,"); n != 2*nModes {
		t.Errorf("summary has %d error rows, want %d:\n%s", n, 2*nModes, sum)
	}
	// One row per instance × controller × paradigm: greedy's lose seeds 2 and 3.
	if len(rep.Aggregate) != 2*nModes {
		t.Errorf("aggregate has %d rows, want %d", len(rep.Aggregate), 2*nModes)
	}
	for _, a := range rep.Aggregate {
		want := [2]int{3, 0}
		if a.Group[1] == "greedy" {
			want = [2]int{1, 2}
		}
		if [2]int{a.Cases, a.Failed} != want {
			t.Errorf("aggregate %v: %d cases, %d failed; want %v", a.Group, a.Cases, a.Failed, want)
		}
	}

	// The next run retries exactly the failed cases; once they pass, the
	// suite is the clean one.
	rep, err = RunSuite(context.Background(), s, dir, SuiteRunOptions{Options: suiterun.Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 2*nModes || rep.Failed != 0 {
		t.Fatalf("retry ran %d cases (%d failed), want %d", rep.Ran, rep.Failed, 2*nModes)
	}
	for _, f := range []string{FileSuiteSummary, FileSuiteAggregate, FileSuiteAggregateMD} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(clean, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s after the retry differs from a clean run", f)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, SuiteFailedDir)); len(ents) != 0 {
		t.Errorf("failed/ still holds %d entries", len(ents))
	}
}
