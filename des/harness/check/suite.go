package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/suiterun"
)

// maxSuiteCases bounds the case directories of a suite Suite checks.
const maxSuiteCases = 1 << 20

// SuiteReport is the check of every finished case of a des suite
// directory.
type SuiteReport struct {
	Dir string `json:"dir"`
	// Cases are the reports of cases/<id>/, in case id order; a case whose
	// files cannot be read has that error as its one problem.
	Cases []*Report `json:"cases"`
	// Failed counts failed/<id>/: cases that are not results, not checked.
	Failed int `json:"failed"`
}

// OK reports whether every case passed every check.
func (r *SuiteReport) OK() bool {
	return !slices.ContainsFunc(r.Cases, func(c *Report) bool { return !c.OK() })
}

// Problems is the number of problems over every case.
func (r *SuiteReport) Problems() int {
	n := 0
	for _, c := range r.Cases {
		n += len(c.Problems)
	}
	return n
}

// SuiteKind says which benchmark's suite dir is ("des" or "silo"), or ""
// if it is not a suite directory (a run directory, say).
func SuiteKind(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, harness.FileSuiteConfig)); err == nil {
		return "des"
	}
	if _, err := os.Stat(filepath.Join(dir, suiterun.SiloConfigFile)); err == nil {
		return "silo"
	}
	return ""
}

// Suite checks every case directory of the des suite directory dir
// (cases/<id>/, as Dir checks a run directory). The error is set only
// when dir is not a des suite or its cases cannot be listed.
func Suite(dir string) (*SuiteReport, error) {
	if k := SuiteKind(dir); k != "des" {
		return nil, fmt.Errorf("%s is not a des suite directory (no %s)", dir, harness.FileSuiteConfig)
	}
	cases, err := os.ReadDir(filepath.Join(dir, harness.SuiteCasesDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(cases) > maxSuiteCases {
		return nil, fmt.Errorf("%s: more than %d cases", dir, maxSuiteCases)
	}
	rep := &SuiteReport{Dir: dir, Cases: []*Report{}}
	for _, c := range cases { // ReadDir sorts by name: case id order
		if !c.IsDir() {
			continue
		}
		cdir := filepath.Join(dir, harness.SuiteCasesDir, c.Name())
		r, err := Dir(cdir)
		if err != nil {
			r = &Report{Dir: cdir, Problems: []Problem{{Check: ckFormat, Msg: err.Error()}}}
		}
		rep.Cases = append(rep.Cases, r)
	}
	if failed, err := os.ReadDir(filepath.Join(dir, harness.SuiteFailedDir)); err == nil {
		for _, f := range failed {
			if f.IsDir() {
				rep.Failed++
			}
		}
	}
	return rep, nil
}
