package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// MaxFileBytes bounds every file the report reads: a suite of a few
// hundred thousand cases fits; a larger file is refused, not read.
const MaxFileBytes = 256 << 20

// Kind is the benchmark that wrote a suite directory.
type Kind string

const (
	KindDES  Kind = "des"  // coordbench des suite
	KindSilo Kind = "silo" // coordbench silo suite
)

// The names that mark each kind of suite directory (des/harness and
// silo/suite write them; suiterun refuses to mix them in one directory).
var markers = map[Kind][]string{
	KindDES:  {"suite.json", "suite_summary.csv", "cases"},
	KindSilo: {"silo_suite.json", "summary.csv", "runs"},
}

// Detect tells which benchmark's suite dir holds, from the names in it.
// A directory with the names of both, or of neither, is an error.
func Detect(dir string) (Kind, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory (want a suite directory of des suite or silo suite)", dir)
	}
	found := map[Kind][]string{}
	for _, k := range []Kind{KindDES, KindSilo} {
		for _, name := range markers[k] {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				found[k] = append(found[k], name)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
	}
	switch {
	case len(found[KindDES]) > 0 && len(found[KindSilo]) > 0:
		return "", fmt.Errorf("%s holds files of both benchmarks (%s; %s): not one suite directory",
			dir, strings.Join(found[KindDES], ", "), strings.Join(found[KindSilo], ", "))
	case len(found[KindDES]) > 0:
		return KindDES, nil
	case len(found[KindSilo]) > 0:
		return KindSilo, nil
	}
	return "", fmt.Errorf("%s is not a suite directory: it has none of %s (des suite) nor %s (silo suite)",
		dir, strings.Join(markers[KindDES], ", "), strings.Join(markers[KindSilo], ", "))
}

// csvFile is a CSV file read whole: its header's columns by name and its
// records with their line numbers.
type csvFile struct {
	path string
	col  map[string]int
	rows []csvRow
}

type csvRow struct {
	line   int
	fields []string
}

// readCSV reads the CSV file at path, which must have every column in
// need. Errors name the file and line.
func readCSV(path string, need []string) (*csvFile, error) {
	b, err := inputfile.Read(path, "suite file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(b))
	head, err := r.Read()
	if err != nil {
		return nil, csvErr(path, err)
	}
	f := &csvFile{path: path, col: map[string]int{}}
	for i, h := range head {
		f.col[h] = i
	}
	for _, n := range need {
		if _, ok := f.col[n]; !ok {
			return nil, fmt.Errorf("%s:1: no column %q in the header (is this file from this version of coordbench?)", path, n)
		}
	}
	for {
		rec, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, csvErr(path, err)
		}
		line, _ := r.FieldPos(0)
		untrusted.CSVValues(rec)
		if i, ok := f.col["case_id"]; ok && i < len(rec) && !caseDirName(rec[i]) {
			// Case ids name directories the report reads (cases/<id>,
			// runs/<id>): one written by hand must not lead elsewhere.
			return nil, fmt.Errorf("%s:%d: column case_id: %q is not a case id (one directory name)", path, line, rec[i])
		}
		f.rows = append(f.rows, csvRow{line, rec})
	}
	return f, nil
}

// caseDirName reports whether id can name a directory of its own below a
// suite's cases/ or runs/: one local path element.
func caseDirName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`) && filepath.IsLocal(id)
}

func csvErr(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

// get is the value of column name in row r.
func (f *csvFile) get(r csvRow, name string) string { return r.fields[f.col[name]] }

// float parses column name of row r; an empty cell is NaN when empty is
// allowed.
func (f *csvFile) float(r csvRow, name string, empty bool) (float64, error) {
	s := f.get(r, name)
	if s == "" && empty {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a number", f.path, r.line, name, s)
	}
	return v, nil
}

// count parses column name of row r as a count (a whole number from 0).
func (f *csvFile) count(r csvRow, name string) (int, error) {
	s := f.get(r, name)
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a count", f.path, r.line, name, s)
	}
	return v, nil
}

// readJSONFile reads a suite's JSON configuration, bounded.
func readJSONFile(path string) ([]byte, error) {
	return inputfile.Read(path, "suite configuration", MaxFileBytes)
}

// Input kinds beyond the suites: single run directories.
const (
	KindDESRun  Kind = "des-run"
	KindSiloRun Kind = "silo-run"
)

// DetectInput tells what dir is: a suite directory of either benchmark
// (Detect) or a single run directory (trace.jsonl: des; result.json:
// silo).
func DetectInput(dir string) (Kind, error) {
	k, err := Detect(dir)
	if err == nil {
		return k, nil
	}
	if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
		return "", err
	}
	for _, c := range []struct {
		file string
		kind Kind
	}{{fileTrace, KindDESRun}, {"result.json", KindSiloRun}} {
		if _, serr := os.Lstat(filepath.Join(dir, c.file)); serr == nil {
			return c.kind, nil
		} else if !errors.Is(serr, fs.ErrNotExist) {
			return "", serr
		}
	}
	return "", fmt.Errorf("%v; nor a run directory (no trace.jsonl of des run, no result.json of silo run)", err)
}
