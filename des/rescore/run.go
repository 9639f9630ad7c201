package rescore

// One run directory: its artifacts read (bounded, hashed against the
// manifest) and its metrics rescored.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/scorediff"
)

// Bounds on what a rescore reads of one run.
const (
	// maxJSONFile bounds metrics.json, manifest.json and instance.json.
	maxJSONFile = 256 << 20
	// maxLogFile bounds each of trace.jsonl, decisions.jsonl and
	// messages.jsonl.
	maxLogFile = 16 << 30
	// maxLine bounds one line of them (a decision carries its payload).
	maxLine = 64 << 20
)

// scored is one run rescored.
type scored struct {
	id      string
	was     string // the scorer version recorded in its manifest
	metrics harness.Metrics
	header  harness.TallyHeader
	files   []scorediff.File // metrics.json, manifest.json (relative to the run)
	changes []scorediff.Change
}

// scoreRun rescores the run in dir under s; id names it in changes.
func scoreRun(ctx context.Context, dir, id string, s harness.Scorer) (*scored, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := complete(dir); err != nil {
		return nil, err
	}
	manB, err := inputfile.Read(filepath.Join(dir, harness.FileManifest), harness.FileManifest, maxJSONFile)
	if err != nil {
		return nil, err
	}
	var man harness.Manifest
	if err := strictJSON(dir, harness.FileManifest, manB, &man); err != nil {
		return nil, err
	}
	switch factory.Status(man.Status) {
	case factory.Interrupted, factory.Aborted:
		return nil, fmt.Errorf("%s: the run ended %s: it is not a result to score (rerun it)", dir, man.Status)
	}
	metB, err := inputfile.Read(filepath.Join(dir, harness.FileMetrics), harness.FileMetrics, maxJSONFile)
	if err != nil {
		return nil, err
	}
	var old harness.Metrics
	if err := strictJSON(dir, harness.FileMetrics, metB, &old); err != nil {
		return nil, err
	}
	if err := sameHash(dir, harness.FileMetrics, man.Files, metB); err != nil {
		return nil, err
	}
	instB, err := inputfile.Read(filepath.Join(dir, harness.FileInstance), harness.FileInstance, maxJSONFile)
	if err != nil {
		return nil, err
	}
	if err := sameHash(dir, harness.FileInstance, man.Files, instB); err != nil {
		return nil, err
	}

	var tally harness.Tally
	tr := newTraceReader(&tally)
	if err := readLines(ctx, dir, harness.FileTrace, man.Files, tr.line); err != nil {
		return nil, err
	}
	if err := tr.end(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, harness.FileTrace), err)
	}
	co := harness.Coordination{BySource: map[string]int{}, ByType: map[string]int{},
		// Not a rule: the interpreter's count, carried over as recorded.
		Forced: old.Secondary.ForcedAssignments}
	steps := map[int]bool{}
	if err := readLines(ctx, dir, harness.FileDecisions, man.Files, func(b []byte) error {
		var d struct {
			Step   *int   `json:"step"`
			Source string `json:"source"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		if d.Step == nil || d.Source == "" {
			return errors.New("a decision without step or source")
		}
		steps[*d.Step] = true
		co.BySource[d.Source]++
		return nil
	}); err != nil {
		return nil, err
	}
	co.Steps = len(steps)
	if err := readLines(ctx, dir, harness.FileMessages, man.Files, func(b []byte) error {
		var m struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		if m.Type == "" {
			return errors.New("a message without type")
		}
		co.ByType[m.Type]++
		return nil
	}); err != nil {
		return nil, err
	}

	m := old
	s.Score(&tally, co, &m)
	newMet := marshal(m)
	man.Scorer = s.Version
	man.Files[harness.FileMetrics] = sha256Hex(newMet)
	newMan := marshal(man)
	changes, err := scorediff.JSONChanges(id, harness.FileMetrics, metB, newMet)
	if err != nil {
		return nil, err
	}
	return &scored{id: id, was: cmp.Or(manWas(manB), harness.ScorerUnrecorded), metrics: m, header: tally.Header(), changes: changes,
		files: []scorediff.File{{Rel: harness.FileMetrics, Old: metB, New: newMet}, {Rel: harness.FileManifest, Old: manB, New: newMan}}}, nil
}

// manWas is the scorer a manifest records ("" for none).
func manWas(b []byte) string {
	var v struct {
		Scorer string `json:"scorer"`
	}
	json.Unmarshal(b, &v) // read whole before: cannot fail
	return v.Scorer
}

// complete refuses a directory without every artifact of a run.
func complete(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory: give a run or suite directory", dir)
	}
	var missing []string
	for _, name := range []string{harness.FileInstance, harness.FileManifest, harness.FileMetrics, harness.FileTrace, harness.FileDecisions, harness.FileMessages} {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s is an incomplete run directory (no %s): the run that wrote it was interrupted or is still running; run it again", dir, strings.Join(missing, ", "))
	}
	return nil
}

// strictJSON decodes b into v and refuses a file with keys that v does
// not write back (from a newer build of coordbench, or edited by hand),
// which a rescore would rewrite without them. Keys a newer build added
// to the file are written, and listed among the changes.
func strictJSON(dir, name string, b []byte, v any) error {
	return strictJSONWith(dir, name, b, v, marshal)
}

// marshal is how the harness writes metrics.json and manifest.json.
func marshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil { // plain data
		panic(err)
	}
	return append(b, '\n')
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sameHash refuses a file whose hash is not the manifest's.
func sameHash(dir, name string, sums map[string]string, b []byte) error {
	if want := sums[name]; want != sha256Hex(b) {
		return fmt.Errorf("%s does not match the SHA-256 its manifest records: the run was changed after it was written; not rescored", filepath.Join(dir, name))
	}
	return nil
}

// readLines streams a JSON-lines artifact of at most maxLogFile bytes,
// lines of at most maxLine, checks its hash against the manifest's, and
// passes each non-empty line to each (errors say file:line).
func readLines(ctx context.Context, dir, name string, sums map[string]string, each func([]byte) error) error {
	path := filepath.Join(dir, name)
	f, err := inputfile.OpenMax(path, name, maxLogFile)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	err = inputfile.Lines(io.TeeReader(f, h), path, name, maxLine, func(line int, b []byte) error {
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if b := bytes.TrimSpace(b); len(b) > 0 {
			return each(b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if want := sums[name]; want != hex.EncodeToString(h.Sum(nil)) {
		return fmt.Errorf("%s does not match the SHA-256 its manifest records: the run was changed after it was written; not rescored", path)
	}
	return nil
}
