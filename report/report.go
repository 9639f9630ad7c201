package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// Options choose what Write writes.
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
				return nil, fmt.Errorf("%s is a run directory: it has figures, not tables; its page is in the HTML report (--format html, or --out FILE.html)", dir)
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
		case KindSilo:
			rows, err := readSilo(dir)
			if err != nil {
				return nil, err
			}
			runs, err := readSiloRuns(dir)
			if err != nil {
				return nil, err
			}
			out = append(out, siloSection(dir, rows), siloPairedSection(dir, runs))
		}
	}
	return out, nil
}

// Write builds the tables of dirs and writes them to w in opt.Format.
// Nothing is written when a directory cannot be read.
func Write(w io.Writer, dirs []string, opt Options) error {
	if opt.Format == "html" {
		if len(opt.Tables) > 0 {
			return fmt.Errorf("--table chooses the tables of md, csv and latex output; the HTML page holds them all (give --format md, csv or latex)")
		}
		return writeHTML(w, dirs, opt)
	}
	if !slices.Contains(formats, opt.Format) {
		return fmt.Errorf("format %q: want one of %s", opt.Format, strings.Join(formats, ", "))
	}
	for _, k := range opt.Tables {
		if !slices.Contains(sectionKinds, k) {
			return fmt.Errorf("table %q: want one of %s", k, strings.Join(sectionKinds, ", "))
		}
	}
	if len(opt.Cases) > 0 {
		return fmt.Errorf("--cases chooses the per-case sections of the HTML report (--format html)")
	}
	var secs []Section
	var err error
	if opt.Compare {
		if len(dirs) != 2 {
			return fmt.Errorf("--compare takes exactly two suite directories, A and B (got %d)", len(dirs))
		}
		secs, err = compareSections(dirs[0], dirs[1])
	} else {
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
