package analyze

import (
	"fmt"
	"path/filepath"
)

// DefaultOutDir is the output directory's name inside the analysed
// directory when none is given.
const DefaultOutDir = "analysis"

// Report is the analysis of one directory.
type Report struct {
	Suite    bool  // the directory is a suite (else one run)
	Runs     []Run // in directory-name order
	Topology []TopologyRow
	Rounds   []RoundsRow
	Tasks    []TaskRow
	Context  []ContextRow
	Leaders  []LeaderRow
	Labels   []LabelRow
	Fields   []string // label fields, PrimaryField first
	// LabelOrder lists each field's labels: the known ones first, in the
	// paper's order, then the others by name.
	LabelOrder map[string][]string
}

// Analyze reads the runs of dir (one run directory, or a suite directory
// whose runs/ it reads) and computes the analyses.
func Analyze(dir string, opt Options) (*Report, error) {
	if opt.MaxRuns <= 0 {
		opt.MaxRuns = DefaultMaxRuns
	}
	dirs, isSuite, err := runDirs(dir, opt.MaxRuns)
	if err != nil {
		return nil, err
	}
	rep := &Report{Suite: isSuite}
	for _, d := range dirs {
		r, err := loadRun(d)
		if err != nil {
			if isSuite {
				return nil, fmt.Errorf("run %s: %w", filepath.Base(d), err)
			}
			return nil, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	rep.Topology = topologyRows(rep.Runs)
	rep.Rounds = roundsRows(rep.Runs)
	rep.Tasks = taskRows(rep.Runs)
	rep.Context = contextRows(rep.Runs)
	rep.Leaders = leaderRows(rep.Runs)
	rep.Fields = labelFields(rep.Runs)
	rep.LabelOrder = map[string][]string{}
	for _, f := range rep.Fields {
		rep.LabelOrder[f] = labelOrder(rep.Runs, f)
	}
	rep.Labels = coOccurrence(rep.Runs, rep.Fields, rep.LabelOrder)
	return rep, nil
}
