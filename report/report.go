package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// ErrRunDir is the error of a run directory given where only suites have
// tables (md, csv and latex output).
var ErrRunDir = errors.New("a run directory has figures, not tables: its page is in the HTML report")

// Options choose what Write writes. Write's errors about them are
// *opterr.Error values naming the field.
type Options struct {
	// Format is html, md, csv or latex.
	Format string
	// Tables, if set, keeps only these kinds of section (SectionKinds);
	// md, csv and latex only.
	Tables []string
	// Cases names the cases (des case ids, silo run case ids) that get a
	// section of their own in the HTML page; "all" or "none"; empty for
	// the default (DefaultCases).
	Cases []string
	// Compare reads the two directories as suites A and B to compare,
	// paired case by case.
	Compare bool
	// CompareBy compares, within one suite, the cases of two values of a
	// key ("model", or "model=A,B"; compareby.go).
	CompareBy string
}

// Build reads each suite directory and returns its sections, in the order
// of dirs: for a des suite the paradigm matrix and the paired differences,
// for a silo suite its table.
func Build(dirs []string) ([]Section, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no suite directory given")
	}
	var out []Section
	for _, dir := range dirs {
		kind, err := Detect(dir)
		if err != nil {
			if k, rerr := DetectInput(dir); rerr == nil && (k == KindDESRun || k == KindSiloRun) {
				return nil, fmt.Errorf("%s: %w", dir, ErrRunDir)
			}
			return nil, err
		}
		switch kind {
		case KindDES:
			s, err := readDES(dir)
			if err != nil {
				return nil, err
			}
			out = append(out, s.matrixSection(), s.pairedSection())
			sc, err := readScale(s)
			if err != nil {
				return nil, err
			}
			if sc != nil {
				out = append(out, s.scalingSection(sc))
			}
			roles, err := readRoles(s)
			if err != nil {
				return nil, err
			}
			if len(roles) > 0 {
				out = append(out, s.rolesSection(roles))
			}
		case KindSilo:
			rows, err := readSilo(dir)
			if err != nil {
				return nil, err
			}
			runs, err := readSiloRuns(dir)
			if err != nil {
				return nil, err
			}
			out = append(out, siloSection(dir, rows, runs), siloPairedSection(dir, runs))
			models, err := readSiloModels(dir)
			if err != nil {
				return nil, err
			}
			if models != nil {
				out = append(out, siloModelsSection(dir, models))
			}
		}
	}
	return out, nil
}

// Write builds the tables of dirs and writes them to w in opt.Format.
// Nothing is written when a directory cannot be read.
func Write(w io.Writer, dirs []string, opt Options) error {
	if opt.Compare && len(dirs) != 2 {
		return opterr.New("Compare", "want exactly two suite directories, A and B (got %d)", len(dirs))
	}
	if opt.CompareBy != "" && (opt.Compare || len(dirs) != 1) {
		return &opterr.Error{Option: "CompareBy", See: []string{"Compare"}, Err: errors.New("compares the cases within one suite directory: give exactly one, and no second option that compares")}
	}
	if opt.Format == "html" {
		if len(opt.Tables) > 0 {
			return &opterr.Error{Option: "Tables", See: []string{"Format"},
				Err: errors.New("only md, csv and latex output have tables to choose; the HTML page holds them all")}
		}
		return writeHTML(w, dirs, opt)
	}
	if !slices.Contains(formats, opt.Format) {
		return opterr.New("Format", "unknown format %q (want one of %s)", opt.Format, strings.Join(formats, ", "))
	}
	for _, k := range opt.Tables {
		if !slices.Contains(sectionKinds, k) {
			return opterr.New("Tables", "unknown table %q (want one of %s)", k, strings.Join(sectionKinds, ", "))
		}
	}
	if len(opt.Cases) > 0 {
		return &opterr.Error{Option: "Cases", See: []string{"Format"}, Err: errors.New("only the HTML report has per-case sections")}
	}
	var secs []Section
	var err error
	switch {
	case opt.CompareBy != "":
		secs, err = compareBySections(dirs[0], opt.CompareBy)
	case opt.Compare:
		secs, err = compareSections(dirs[0], dirs[1])
	default:
		secs, err = Build(dirs)
	}
	if err != nil {
		return err
	}
	if len(opt.Tables) > 0 {
		secs = slices.DeleteFunc(secs, func(s Section) bool { return !slices.Contains(opt.Tables, s.Kind) })
		if len(secs) == 0 {
			return fmt.Errorf("none of the directories has a table of kind %s", strings.Join(opt.Tables, ", "))
		}
	}
	var b bytes.Buffer
	b.WriteString(scorerNotice(opt.Format, ScorerWarning(dirs)))
	switch opt.Format {
	case "md":
		err = writeMarkdown(&b, secs)
	case "csv":
		err = writeCSV(&b, secs)
	case "latex":
		err = writeLaTeX(&b, secs)
	}
	if err != nil {
		return err
	}
	// Names come from the suites' files: no terminal control reaches the
	// screen (the HTML page escapes them its own way).
	_, err = io.WriteString(w, untrusted.Printable(b.String()))
	return err
}
