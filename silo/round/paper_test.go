package round

import (
	"fmt"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// TestPaperP: a perfect team has P = 1, while the published P rule
// (P_paper) scores its III-21 segments below 1 wherever they hold repeated
// values, more so at large N (the official instances: 0.97 at N = 5).
// Runs of the reference team into a real SQLite file.
func TestPaperP(t *testing.T) {
	want := map[int]string{5: "0.97", 100: "0.46"}
	for _, n := range []int{5, 100} {
		in, err := task.Official("III-21", n)
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, Config{Instance: in, Protocol: proto.P2P, DB: t.TempDir() + "/run.db"}, NewReferenceTeam(n))
		checkPerfect(t, fmt.Sprintf("III-21 N=%d", n), res)
		if got := fmt.Sprintf("%.2f", res.PPaper); got != want[n] || res.PPaperCrashes != 0 {
			t.Errorf("III-21 N=%d: P_paper = %v (%s), %d crashes; want %s, 0", n, res.PPaper, got, res.PPaperCrashes, want[n])
		}
		for _, a := range res.Agents {
			if a.PartialPaper > a.Partial {
				t.Errorf("III-21 N=%d agent %d: partial_paper %v above partial %v", n, a.ID, a.PartialPaper, a.Partial)
			}
		}
	}
}

// TestPaperPCrash: on a list-of-list task the published rule crashes for
// every submitted answer; P_paper then counts those agents as 0 and
// P_paper_crashes counts them, while P stays ours.
func TestPaperPCrash(t *testing.T) {
	in := seeded(t, "III-25", 3, 1)
	res := mustRun(t, Config{Instance: in, Protocol: proto.SFS, DB: t.TempDir() + "/run.db"}, NewReferenceTeam(3))
	checkPerfect(t, "III-25 N=3", res)
	if res.PPaper != 0 || res.PPaperCrashes != 3 {
		t.Errorf("III-25: P_paper = %v, crashes %d; want 0, 3", res.PPaper, res.PPaperCrashes)
	}
	for _, a := range res.Agents {
		if !a.PartialPaperCrash || a.PartialPaper != 0 {
			t.Errorf("III-25 agent %d: partial_paper %v crash %v; want 0, true", a.ID, a.PartialPaper, a.PartialPaperCrash)
		}
	}
	// A level whose published rule never crashes: P_paper = P = 1.
	res = mustRun(t, Config{Instance: seeded(t, "I-01", 3, 1), Protocol: proto.P2P}, NewReferenceTeam(3))
	if res.PPaper != 1 || res.PPaperCrashes != 0 {
		t.Errorf("I-01: P_paper = %v, crashes %d; want 1, 0", res.PPaper, res.PPaperCrashes)
	}
}
