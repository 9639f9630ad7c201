package inspect

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// kind is what a directory holds.
type kind int

const (
	kindDESRun kind = iota + 1
	kindSiloRun
	kindDESSuite
	kindSiloSuite
)

// detect tells what dir holds from the names in it: a suite (suite.json
// and cases/, silo_suite.json and runs/) or a run (manifest.json and
// metrics.json; result.json and calls.jsonl).
func detect(dir string) (kind, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		return 0, fmt.Errorf("%s is not a directory (want a run or suite directory of des or silo)", dir)
	}
	has := func(names ...string) (bool, error) {
		for _, n := range names {
			ok, err := exists(filepath.Join(dir, n))
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}
	for _, c := range []struct {
		k     kind
		names []string
	}{
		{kindDESSuite, []string{"suite.json", "cases"}},
		{kindSiloSuite, []string{"silo_suite.json", "runs"}},
		{kindDESRun, []string{"manifest.json", "metrics.json"}},
		{kindSiloRun, []string{"result.json", "calls.jsonl"}},
	} {
		ok, err := has(c.names...)
		if err != nil {
			return 0, err
		}
		if ok {
			return c.k, nil
		}
	}
	return 0, fmt.Errorf("%s is not a coordbench run or suite directory: it has neither suite.json and cases/ (des suite), "+
		"silo_suite.json and runs/ (silo suite), manifest.json and metrics.json (des run) nor result.json and calls.jsonl (silo run)", dir)
}

// Read reads the runs of dir: a run directory of either benchmark, or
// every finished run of a suite directory (cases/<id>/ or runs/<id>/, in
// the order of their names; failed cases, under failed/, are not
// results and are left out).
func Read(dir string) ([]Run, error) {
	k, err := detect(dir)
	if err != nil {
		return nil, err
	}
	one := func(read func(source, dir string) (*Run, error), d string) ([]Run, error) {
		r, err := read(dir, d)
		if err != nil {
			return nil, err
		}
		return []Run{*r}, nil
	}
	switch k {
	case kindDESRun:
		return one(readDESRun, dir)
	case kindSiloRun:
		return one(readSiloRun, dir)
	case kindDESSuite:
		return readSuite(dir, "cases", readDESRun)
	default:
		return readSuite(dir, "runs", readSiloRun)
	}
}

// readSuite reads every run directory under dir/sub.
func readSuite(dir, sub string, read func(source, dir string) (*Run, error)) ([]Run, error) {
	ents, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		// Temporary directories of runs in flight start with a dot.
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) > MaxRuns {
		return nil, fmt.Errorf("%s: %d runs, more than the %d the export reads", filepath.Join(dir, sub), len(names), MaxRuns)
	}
	sort.Strings(names)
	runs := make([]Run, 0, len(names))
	for _, n := range names {
		r, err := read(dir, filepath.Join(dir, sub, n))
		if err != nil {
			return nil, err
		}
		runs = append(runs, *r)
	}
	return runs, nil
}
