package sweep

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
)

// FileAttempts is the ledger of a sweep directory's discarded attempts:
// one JSON line for every run of a case that spent model calls without
// giving the case's result. A case directory holds the usage of the run
// that finished it; without the ledger the money of the runs before it
// would vanish when the case is rerun (its failed/<id>/ is replaced or
// removed, and a response cache replays the earlier calls as free).
const FileAttempts = "attempts.jsonl"

// Outcomes of a discarded attempt.
const (
	// AttemptFailed: the case failed; it runs again on the next run.
	AttemptFailed = "failed"
	// AttemptReturned: a distributed worker handed the case back (it was
	// stopped, or could not store or report the outcome).
	AttemptReturned = "returned"
	// AttemptDuplicate: a second delivery of a case ran it to the end
	// while another delivery's result was kept.
	AttemptDuplicate = "duplicate"
	// AttemptInterrupted: the process running the case was killed (or
	// crashed) before the case ended; the next run found its partial
	// logs.
	AttemptInterrupted = "interrupted"
)

// maxAttemptLine bounds one line of the ledger (about 300 bytes as
// written: an id, a case id, an outcome and seven counts), and
// maxAttemptsFile the whole ledger (some three million attempts, each
// held in memory while it is read).
const (
	maxAttemptLine  = 64 << 10
	maxAttemptsFile = 1 << 30
)

// Attempt is one line of FileAttempts.
type Attempt struct {
	// ID tells attempts apart: a line written twice (a distributed
	// result delivered again) is counted once.
	ID      string `json:"attempt"`
	CaseID  string `json:"case_id"`
	Outcome string `json:"outcome"`
	Usage
}

// NewAttemptID returns a fresh random attempt id.
func NewAttemptID() string {
	var b [12]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// check rejects a line no run writes: counting it could lower the money
// spent or price it under no case.
func (a *Attempt) check() error {
	switch {
	case a.ID == "" || len(a.ID) > 64:
		return errors.New("missing or overlong attempt id")
	case a.Outcome != AttemptFailed && a.Outcome != AttemptReturned && a.Outcome != AttemptDuplicate && a.Outcome != AttemptInterrupted:
		return fmt.Errorf("unknown outcome %q", a.Outcome)
	case a.Usage.negative():
		return errNegativeUsage
	case a.Usage.over(maxAttemptCount):
		return fmt.Errorf("calls or token counts above %d", int64(maxAttemptCount))
	case a.Usage.PromptCachedInputTokens > a.Usage.InputTokens:
		return errPromptCachedOver
	case !a.Usage.partsAddUp():
		return errors.New("usage parts by model do not add up to the usage")
	}
	return nil
}

// maxAttemptCount bounds each count of one attempt (a trillion tokens),
// so that no sum of the ledger's lines overflows.
const maxAttemptCount = 1 << 40

// ModelCases are the shard's cases that call a model, by id.
func (s *Suite) ModelCases() map[string]bool {
	out := map[string]bool{}
	for _, cm := range s.caseModels() {
		if cm[1] != "" {
			out[cm[0]] = true
		}
	}
	return out
}

// ReadAttempts reads dir's ledger: its attempts in file order, each id
// once. A missing ledger has none. A last line cut short (a run killed
// while appending it) is left out, unless all it lacks is its newline;
// any other malformed line, or one longer than maxAttemptLine, is an
// error naming the file and line.
func ReadAttempts(dir string) ([]Attempt, error) {
	path := filepath.Join(dir, FileAttempts)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	f, err := inputfile.OpenMax(path, "attempts ledger", maxAttemptsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, maxAttemptLine)
	var out []Attempt
	seen := map[string]bool{}
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes: not a ledger this program wrote", path, n, r.Size())
		}
		whole := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			a, perr := parseAttempt(line)
			switch {
			case perr != nil && whole:
				return nil, fmt.Errorf("%s:%d: %v", path, n, perr)
			case perr == nil && !seen[a.ID]:
				seen[a.ID] = true
				out = append(out, a)
			}
		}
		if !whole {
			return out, nil
		}
	}
}

// parseAttempt decodes and checks one line of the ledger.
func parseAttempt(line []byte) (Attempt, error) {
	var a Attempt
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, err
	}
	return a, a.check()
}

// completeLines is the length of data's complete lines: up to and with
// its last newline.
func completeLines(data []byte) int { return bytes.LastIndexByte(data, '\n') + 1 }

// AttemptLog appends to a directory's ledger. Its methods are safe for
// concurrent use (a suite's workers, a coordinator's results).
type AttemptLog struct {
	path string
	mu   sync.Mutex
}

// OpenAttemptLog opens dir's ledger for appending (the file is made at
// the first line). A last line cut short by a killed run is cut off first
// (or, if all it lacks is its newline, given one), so that the next line
// starts whole.
func OpenAttemptLog(dir string) (*AttemptLog, error) {
	path := filepath.Join(dir, FileAttempts)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return &AttemptLog{path: path}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return &AttemptLog{path: path}, nil
	}
	// Read back from the end to the last newline (a line is short).
	tail := make([]byte, min(size, maxAttemptLine))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	if tail[len(tail)-1] == '\n' {
		return &AttemptLog{path: path}, nil
	}
	cut := completeLines(tail)
	if cut == 0 && size > int64(len(tail)) {
		return nil, fmt.Errorf("%s: its last line is longer than %d bytes: not a ledger this program wrote", path, len(tail))
	}
	if _, perr := parseAttempt(tail[cut:]); perr == nil {
		_, err = f.Write([]byte{'\n'}) // at the end (Seek)
	} else {
		err = f.Truncate(size - int64(len(tail)) + int64(cut))
	}
	if err != nil {
		return nil, err
	}
	return &AttemptLog{path: path}, nil
}

// Append adds a to the ledger, as one write of one line.
func (l *AttemptLog) Append(a Attempt) error {
	if err := a.check(); err != nil {
		return err
	}
	line, err := json.Marshal(a)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return atomicfs.AppendLine(l.path, line)
}

// Recorder writes the failed and interrupted attempts of a sweep run's
// cases into its directory's ledger. Its Ended and Leftover go in the
// suite's options; each tells the run's Budget, if any, after the ledger.
// It is safe for concurrent use.
type Recorder struct {
	log       *AttemptLog
	dir       string
	benchmark string
	budget    *Budget // nil without a cost limit
	ids       []string
	models    []string          // per shard position; "" for a case without a model
	modelOf   map[string]string // the model of each model-backed case, by id
	recorded  map[string]bool   // the ledger's attempt ids, read at the first leftover

	mu     sync.Mutex
	err    error // the first attempt that could not be recorded
	failed int   // how many could not
}

// NewRecorder makes the recorder of the shard's cases over the suite
// directory dir; budget, if not nil, is told of every case after it.
func (s *Suite) NewRecorder(dir string, budget *Budget) (*Recorder, error) {
	log, err := OpenAttemptLog(dir)
	if err != nil {
		return nil, err
	}
	modelOf := map[string]string{}
	r := &Recorder{log: log, dir: dir, benchmark: s.Experiment.Benchmark, budget: budget, modelOf: modelOf}
	for _, cm := range s.caseModels() {
		r.ids = append(r.ids, cm[0])
		r.models = append(r.models, cm[1])
		if cm[1] != "" {
			modelOf[cm[0]] = cm[1]
		}
	}
	if err := MigrateFailed(r.benchmark, dir, modelOf, log); err != nil {
		return nil, err
	}
	return r, nil
}

// Ended records case i (a position in the shard's cases), which ended in
// dir, if it failed and is model-backed; then tells next.
func (r *Recorder) Ended(i int, dir string, failed bool) {
	if failed && r.models[i] != "" && dir != "" { // "": the case never ran
		u, err := ReadPartialUsage(r.benchmark, dir) // a failed run's logs may end cut short
		if err == nil {
			err = r.log.Append(Attempt{ID: NewAttemptID(), CaseID: r.ids[i], Outcome: AttemptFailed, Usage: u})
		}
		if err != nil {
			r.notRecorded(fmt.Errorf("recording the failed attempt at %s in %s: %w", r.ids[i], FileAttempts, err))
		}
	}
	if r.budget != nil {
		r.budget.Ended(i, dir, failed)
	}
}

// Leftover records the run of case id that a killed process left
// unfinished in dir (suiterun.Options.Leftover: its partial logs, about
// to be removed) as an interrupted attempt, if the case is model-backed
// and the run made model calls; a response cache would replay them free
// on the rerun. The attempt's id derives from dir's name, which is that
// run's own, so that a leftover recorded twice (the next run
// killed too before it removed it, maybe halfway) counts once. Logs that
// cannot be read are counted as far as they can be and reported by Err; a
// ledger that cannot be written stops the run, before the logs are gone.
func (r *Recorder) Leftover(id, dir string) error {
	if r.modelOf[id] == "" {
		return nil
	}
	u, err := ReadPartialUsage(r.benchmark, dir)
	if err != nil {
		r.notRecorded(fmt.Errorf("reading the logs of %s's unfinished run in %s: %w", id, dir, err))
	}
	if u.Calls == 0 && u.CachedCalls == 0 {
		return nil
	}
	a := Attempt{ID: LeftoverAttemptID(dir), CaseID: id, Outcome: AttemptInterrupted, Usage: u}
	if r.recorded == nil { // read once: the runner shows leftovers one by one, before any case
		if r.recorded, err = recordedIDs(r.dir); err != nil {
			return err
		}
	}
	if r.recorded[a.ID] {
		return nil // recorded by a run killed before it removed dir: the budget counted it
	}
	if err := r.log.Append(a); err != nil {
		return err
	}
	if r.budget != nil {
		r.budget.Discarded(id, u)
	}
	return nil
}

// LeftoverAttemptID is the id of the interrupted attempt whose partial
// logs are in the temporary case directory dir: from its name, which
// MkdirTemp made that run's own (and which does not change while the
// directory is removed). A distributed worker recovering a killed
// worker's run uses it too.
func LeftoverAttemptID(dir string) string {
	sum := sha256.Sum256([]byte(filepath.Base(dir)))
	return "interrupted-" + hex.EncodeToString(sum[:12])
}

// recordedIDs are the attempt ids of dir's ledger.
func recordedIDs(dir string) (map[string]bool, error) {
	known, err := ReadAttempts(dir)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(known))
	for _, k := range known {
		ids[k.ID] = true
	}
	return ids, nil
}

// notRecorded counts an attempt whose money is missing from the ledger.
func (r *Recorder) notRecorded(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed++; r.err == nil {
		r.err = err
	}
}

// Err tells of the attempts that could not be recorded (their money is
// missing from the cost files): the first one's error and their number.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed > 1 {
		return fmt.Errorf("%w (and %d more attempts not recorded)", r.err, r.failed-1)
	}
	return r.err
}
