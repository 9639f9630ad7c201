package llmagent

import (
	"os"
	"path/filepath"
	"testing"
)

// A turn whose record cannot be written leaves its timing line alone in
// the log (which no reader counts), never a record without its timing
// (read as a billed call, cached or not); the journal then stops and
// reports the error.
func TestJournalWritesTimingFirst(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	j.add(&TurnRecord{Round: 1, Agent: 0, Outcome: OutcomeOK}, &Timing{Round: 1, Agent: 0})
	j.turns.Close() // the next record's write fails
	j.add(&TurnRecord{Round: 1, Agent: 1, Outcome: OutcomeOK}, &Timing{Round: 1, Agent: 1, Cached: true})
	j.add(&TurnRecord{Round: 2, Agent: 0, Outcome: OutcomeOK}, &Timing{Round: 2, Agent: 0})
	if err := j.close(); err == nil {
		t.Error("the failed write is not reported")
	}
	turns, _ := os.ReadFile(filepath.Join(dir, FileTurns))
	timing, _ := os.ReadFile(filepath.Join(dir, FileTiming))
	if n := len(splitLines(turns)); n != 1 {
		t.Errorf("%d turn records, want 1 (the first turn's):\n%s", n, turns)
	}
	if n := len(splitLines(timing)); n != 2 {
		t.Errorf("%d timing lines, want 2 (the first turn's and the one whose record failed):\n%s", n, timing)
	}
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}
