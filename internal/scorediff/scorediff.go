// Package scorediff is what the rescoring of both benchmarks (`des
// rescore`, `silo rescore`) shares: the difference report between the
// stored and the rescored files (per case and metric, old → new), its
// table, and the writing of the rescored files in place, the replaced
// ones kept in a backup directory, so that no old file is lost silently
// and an interruption never leaves a half-written directory.
package scorediff

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/internal/mdtable"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// Change is one value that rescoring changed.
type Change struct {
	// Case is the case id (a run directory's name for a lone run), or
	// "aggregate <group>" for a row of an aggregate file.
	Case string `json:"case"`
	// File is the file holding the value, relative to the directory.
	File string `json:"file"`
	// Metric is the key of the value: a dotted JSON path
	// (violations.power_overshoot_units) or a CSV column.
	Metric string `json:"metric"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// Absent is the Old or New of a value that one side does not have.
const Absent = "(absent)"

// JSONChanges lists the values that differ between two JSON documents,
// in the order of the new document's keys (dotted paths; arrays by
// index), values as compact JSON.
func JSONChanges(caseID, file string, old, new []byte) ([]Change, error) {
	o, err := flattenJSON(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	n, err := flattenJSON(new)
	if err != nil {
		return nil, fmt.Errorf("%s (rescored): %w", file, err)
	}
	return diff(caseID, file, o, n), nil
}

// kv is one flattened value.
type kv struct{ key, val string }

func diff(caseID, file string, o, n []kv) []Change {
	om := map[string]string{}
	for _, p := range o {
		om[p.key] = p.val
	}
	var out []Change
	seen := map[string]bool{}
	for _, p := range n {
		seen[p.key] = true
		ov, ok := om[p.key]
		if !ok {
			ov = Absent
		}
		if ov != p.val {
			out = append(out, Change{Case: caseID, File: file, Metric: p.key, Old: ov, New: p.val})
		}
	}
	for _, p := range o {
		if !seen[p.key] {
			out = append(out, Change{Case: caseID, File: file, Metric: p.key, Old: p.val, New: Absent})
		}
	}
	return out
}

// flattenJSON lists the leaves of a JSON document in document order.
func flattenJSON(b []byte) ([]kv, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []kv
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{':
				empty := true
				for dec.More() {
					empty = false
					k, err := dec.Token()
					if err != nil {
						return err
					}
					key := k.(string)
					if prefix != "" {
						key = prefix + "." + key
					}
					if err := walk(key); err != nil {
						return err
					}
				}
				if empty {
					out = append(out, kv{prefix, "{}"})
				}
			case '[':
				i := 0
				for dec.More() {
					if err := walk(fmt.Sprintf("%s[%d]", prefix, i)); err != nil {
						return err
					}
					i++
				}
				if i == 0 {
					out = append(out, kv{prefix, "[]"})
				}
			}
			_, err := dec.Token() // the closing delimiter
			return err
		case nil:
			out = append(out, kv{prefix, "null"})
		case string:
			q, _ := json.Marshal(d)
			out = append(out, kv{prefix, string(q)})
		default:
			out = append(out, kv{prefix, fmt.Sprint(d)})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}

// CSVChanges lists the cells that differ between two CSV files of the
// same kind, rows matched by the values of their first keyCols columns
// (joined by "/": the Case of a change is label + that key), cells by
// column name.
func CSVChanges(label, file string, keyCols int, old, new []byte) ([]Change, error) {
	o, err := flattenCSV(file, keyCols, old)
	if err != nil {
		return nil, err
	}
	n, err := flattenCSV(file, keyCols, new)
	if err != nil {
		return nil, err
	}
	// A change's key is "<row key>\x00<column>": split it back.
	var out []Change
	for _, c := range diff("", file, o, n) {
		row, col, _ := strings.Cut(c.Metric, "\x00")
		c.Case, c.Metric = strings.TrimSpace(label+" "+row), col
		out = append(out, c)
	}
	return out, nil
}

func flattenCSV(file string, keyCols int, b []byte) ([]kv, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	head := recs[0]
	var out []kv
	for _, r := range recs[1:] {
		untrusted.CSVValues(r) // old files may predate the quote
		k := min(keyCols, len(r))
		key := strings.Join(r[:k], "/")
		for i := k; i < len(r) && i < len(head); i++ {
			out = append(out, kv{key + "\x00" + head[i], r[i]})
		}
	}
	return out, nil
}

// Report is rescore.json: what a rescore of a directory did.
type Report struct {
	Benchmark string `json:"benchmark"` // des, silo
	Dir       string `json:"dir"`
	Kind      string `json:"kind"` // run, suite
	// Scorer is the version the runs are now scored under, Rules its
	// rule set; Was the versions they were recorded under before
	// ("unrecorded" for none), in first-seen order.
	Scorer string   `json:"scorer"`
	Rules  any      `json:"rules"`
	Was    []string `json:"was"`
	Runs   int      `json:"runs"`
	// ChangedRuns counts the runs with at least one changed metric.
	ChangedRuns int      `json:"changed_runs"`
	Changes     []Change `json:"changes"`
	// Written are the files replaced (relative to Dir), Backup the
	// directory holding their old versions (empty when none was
	// replaced, or for a dry run).
	Written []string `json:"written"`
	Backup  string   `json:"backup,omitempty"`
	DryRun  bool     `json:"dry_run,omitempty"`
}

// AddWas records a prior scorer version.
func (r *Report) AddWas(v string) {
	if !slices.Contains(r.Was, v) {
		r.Was = append(r.Was, v)
	}
}

// WriteTable writes the report for a terminal: one line per changed
// value (case, file, metric, old → new), or "no change".
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "rescored %d run(s) of %s %s under %s (recorded under %s)\n", r.Runs, r.Kind, r.Dir, r.Scorer, strings.Join(r.Was, ", "))
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "no change: every metric is as recorded")
	} else {
		rows := make([][]string, len(r.Changes))
		for i, c := range r.Changes {
			rows[i] = []string{c.Case, c.File, c.Metric, c.Old, "→", c.New}
		}
		mdtable.Write(w, []string{"case", "file", "metric", "old", "", "new"}, rows, 0, 1, 2)
		fmt.Fprintf(w, "%d value(s) changed in %d of %d run(s)\n", len(r.Changes), r.ChangedRuns, r.Runs)
	}
	switch {
	case r.DryRun:
		fmt.Fprintln(w, "dry run: nothing written")
	case len(r.Written) == 0:
		fmt.Fprintln(w, "no file replaced")
	default:
		fmt.Fprintf(w, "%d file(s) replaced; the old ones are in %s\n", len(r.Written), r.Backup)
	}
}

// KeysKept refuses a JSON file (path, contents old) whose decoding and
// encoding by this build (again) lose some of its keys: a file of a
// newer build, or edited by hand, which a rescore would rewrite without
// them. Keys this build adds (fields from after the file was written)
// are fine.
func KeysKept(path string, old, again []byte) error {
	o, err := flattenJSON(old)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	n, err := flattenJSON(again)
	if err != nil {
		return err
	}
	for _, c := range diff("", path, o, n) {
		if c.New == Absent {
			return fmt.Errorf("%s has %s, which this build does not know (written by a newer coordbench, or edited by hand): not rescored", path, c.Metric)
		}
	}
	return nil
}

// AddRun records a rescored run: its prior scorer version, its changes
// and its files, at rel (relative to the report's directory; "" for the
// directory itself), and returns the files with rel prefixed.
func (r *Report) AddRun(rel, was string, changes []Change, files []File) []File {
	r.Runs++
	r.AddWas(was)
	if len(changes) > 0 {
		r.ChangedRuns++
	}
	for _, c := range changes {
		c.File = filepath.Join(rel, c.File)
		r.Changes = append(r.Changes, c)
	}
	out := make([]File, len(files))
	for i, f := range files {
		f.Rel = filepath.Join(rel, f.Rel)
		out[i] = f
	}
	return out
}
