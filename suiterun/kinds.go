package suiterun

import (
	"os"
	"path/filepath"
)

// The names that tell the two benchmarks' suite directories apart: the
// finished cases' subdirectory, the summary and the configuration file.
// Each benchmark's suite names its own (its Layout); Run refuses a
// directory that holds another kind's, rather than mix two suites, and
// their failed cases, in one directory.
const (
	DesCasesDir     = "cases"
	DesSummaryFile  = "suite_summary.csv"
	DesConfigFile   = "suite.json"
	SiloCasesDir    = "runs"
	SiloSummaryFile = "summary.csv"
	SiloConfigFile  = "silo_suite.json"
)

// kind is one kind of suite directory, by the names it holds.
type kind struct{ casesDir, summary, config string }

// kinds are the suite directories this package runs.
var kinds = [...]kind{
	{DesCasesDir, DesSummaryFile, DesConfigFile},
	{SiloCasesDir, SiloSummaryFile, SiloConfigFile},
}

// foreign returns the first name in l.Dir that belongs to a kind of suite
// other than l's (a layout with another cases directory), or "".
func foreign(l Layout) string {
	for _, k := range kinds {
		if k.casesDir == l.CasesDir {
			continue
		}
		for _, name := range []string{k.casesDir, k.summary, k.config} {
			if _, err := os.Lstat(filepath.Join(l.Dir, name)); err == nil {
				return name
			}
		}
	}
	return ""
}
