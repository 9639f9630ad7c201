package report

// The scorer versions of the inputs: a report of directories scored
// under different rules says so (docs/report.md, "Scorer versions").

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"path/filepath"
	"slices"
	"strings"
)

// Unrecorded is the scorer version of a directory that records none
// (written before scorer versions were recorded).
const Unrecorded = "unrecorded"

// scorerFiles are the files that record a directory's scorer version, by
// kind of input.
var scorerFiles = map[Kind]string{
	KindDES:     "suite.json",
	KindSilo:    "silo_suite.json",
	KindDESRun:  "manifest.json",
	KindSiloRun: "manifest.json",
}

// ScorerVersion is the scorer version dir records (Unrecorded if none)
// and the benchmark it belongs to (des or silo).
func ScorerVersion(dir string) (version string, bench Kind, err error) {
	kind, err := DetectInput(dir)
	if err != nil {
		return "", "", err
	}
	bench = KindDES
	if kind == KindSilo || kind == KindSiloRun {
		bench = KindSilo
	}
	b, err := readJSONFile(filepath.Join(dir, scorerFiles[kind]))
	if errors.Is(err, fs.ErrNotExist) { // a silo run directory has no manifest
		return Unrecorded, bench, nil
	}
	if err != nil {
		return "", "", err
	}
	var v struct {
		Scorer string `json:"scorer"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", "", fmt.Errorf("%s: %w", filepath.Join(dir, scorerFiles[kind]), err)
	}
	if v.Scorer == "" {
		return Unrecorded, bench, nil
	}
	return v.Scorer, bench, nil
}

// ScorerWarning is the warning of a report whose directories of one
// benchmark were scored under more than one scorer version (or some under
// none recorded): their figures are not comparable as they stand; "" when
// there is nothing to warn of. Directories that cannot be read are left
// to the report's own errors.
func ScorerWarning(dirs []string) string {
	type seen struct {
		version string
		dirs    []string
	}
	by := map[Kind][]seen{}
	for _, d := range dirs {
		v, bench, err := ScorerVersion(d)
		if err != nil {
			continue
		}
		i := slices.IndexFunc(by[bench], func(s seen) bool { return s.version == v })
		if i < 0 {
			by[bench] = append(by[bench], seen{version: v})
			i = len(by[bench]) - 1
		}
		by[bench][i].dirs = append(by[bench][i].dirs, d)
	}
	var parts []string
	for _, bench := range []Kind{KindDES, KindSilo} {
		if len(by[bench]) < 2 {
			continue
		}
		var vs []string
		for _, s := range by[bench] {
			vs = append(vs, fmt.Sprintf("%s (%s)", s.version, strings.Join(s.dirs, ", ")))
		}
		parts = append(parts, fmt.Sprintf("the %s directories were scored under different scorer versions: %s (bring them to this build's with `coordbench %s rescore DIR`)",
			bench, strings.Join(vs, "; "), bench))
	}
	if len(parts) == 0 {
		return ""
	}
	return "warning: " + strings.Join(parts, "; ") + ". Figures scored under different rules are not comparable as they stand (docs/rescore.md)."
}

// scorerNotice is what Write puts before the tables of format f for the
// warning w ("" for none, and for csv, whose readers want the tables
// alone: the command prints the warning on stderr).
func scorerNotice(f, w string) string {
	if w == "" {
		return ""
	}
	switch f {
	case "md":
		return "> **" + w + "**\n\n"
	case "latex":
		return "% " + w + "\n"
	}
	return ""
}
