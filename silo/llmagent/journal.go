package llmagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// journal writes each turn into the run directory's turn log as the turn
// ends, so that a run that never reaches its end (aborted after a model
// outage, killed) leaves the turns it paid for, in the order they ended;
// Team.WriteLogs rewrites the log in (round, agent) order once the run
// is over. A turn's timing is appended, then its record: a process
// killed between the two leaves a timing without its turn, which no
// reader counts, rather than a turn without its timing (read as billed,
// cached or not). A long reply's whole text goes to the reply store
// (replies.go) before the record that refers to it. The Team owns the
// journal; its agents share it.
type journal struct {
	dir           string
	mu            sync.Mutex
	turns, timing *os.File
	err           error // the first write that failed; later turns are not written
}

// openJournal creates (or empties) the turn log files in dir.
func openJournal(dir string) (*journal, error) {
	turns, err := os.OpenFile(filepath.Join(dir, FileTurns), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	timing, err := os.OpenFile(filepath.Join(dir, FileTiming), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		turns.Close()
		return nil, err
	}
	return &journal{dir: dir, turns: turns, timing: timing}, nil
}

// add appends one ended turn. Safe for concurrent use.
func (j *journal) add(rec *TurnRecord, tim *Timing) {
	st, bodies := rec.stored()
	line, err := marshalLine(&st)
	if err != nil {
		err = fmt.Errorf("turn log: %w", err)
	}
	tline, _ := marshalLine(tim) // plain numbers: cannot fail
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil || j.turns == nil {
		return
	}
	if err == nil {
		err = putReplies(j.dir, bodies)
	}
	if err == nil {
		_, err = j.timing.Write(tline)
	}
	if err == nil {
		_, err = j.turns.Write(line)
	}
	j.err = err
}

// close closes the files and reports the first error of the journal.
// Safe to call more than once.
func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.turns == nil {
		return j.err
	}
	err := errors.Join(j.turns.Close(), j.timing.Close())
	j.turns, j.timing = nil, nil
	if j.err == nil {
		j.err = err
	}
	return j.err
}
