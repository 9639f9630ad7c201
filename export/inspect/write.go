package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Encode writes l as Inspect reads a JSON log: one JSON document.
func Encode(w io.Writer, l *EvalLog) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(l)
}

// WriteLogs writes every log into the directory dir (which must exist)
// under its Name.
func WriteLogs(dir string, logs []EvalLog) error {
	seen := map[string]bool{}
	for i := range logs {
		l := &logs[i]
		if seen[l.Name()] {
			return fmt.Errorf("two eval logs would be named %s: give each directory once", l.Name())
		}
		seen[l.Name()] = true
		var b bytes.Buffer
		if err := Encode(&b, l); err != nil {
			return fmt.Errorf("encode %s: %w", l.Name(), err)
		}
		// A name taken by an earlier call (another directory's logs) is
		// refused, not overwritten.
		f, err := os.OpenFile(filepath.Join(dir, l.Name()), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("two eval logs would be named %s: give each directory once", l.Name())
			}
			return err
		}
		_, err = f.Write(b.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Record is the flat JSON object of one run (WriteJSONL): its ids, its
// status, every metric as a top-level number and its model usage.
func Record(r *Run) map[string]any {
	rec := map[string]any{
		"benchmark": r.Benchmark, "source": r.Source, "case_id": r.CaseID, "sample": r.Sample,
		"seed": r.Seed, "status": r.Status, "model": r.Model, "model_recorded": r.ModelRecorded,
		"model_calls": r.Usage.Calls, "input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens,
		"cached_input_tokens": r.Usage.CachedInputTokens,
	}
	for k, v := range r.Fields {
		if k != "model" {
			rec[k] = v
		}
	}
	for _, m := range r.Metrics {
		switch {
		case math.IsNaN(m.Value) || math.IsInf(m.Value, 0):
			rec[m.Name] = nil // JSON has no NaN
		case m.Int:
			rec[m.Name] = int64(m.Value)
		default:
			rec[m.Name] = m.Value
		}
	}
	return rec
}

// WriteJSONL writes one Record per run, a line each, in the order of the
// runs (Read's: per directory, by case id).
func WriteJSONL(w io.Writer, runs []Run) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range runs {
		if err := enc.Encode(Record(&runs[i])); err != nil {
			return fmt.Errorf("encode run %s: %w", runs[i].CaseID, err)
		}
	}
	return nil
}
