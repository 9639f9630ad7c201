package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// The HTML report: one self-contained page (style inline, figures as
// inline SVG, no script, nothing fetched) built with html/template, which
// escapes every text taken from the inputs. Its Content-Security-Policy
// (page.html.tmpl) lets nothing run and nothing load but the page's own
// style and data: images, should markup ever slip through. The same
// inputs give the same
// bytes: nothing depends on the clock, maps are walked in sorted order.

//go:embed page.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// DefaultCases is how many cases (or runs) of a suite get a per-case
// section when Options.Cases is empty.
const DefaultCases = 8

// page is what the template renders.
type page struct {
	Title  string
	Inputs []string
	// Warning is ScorerWarning of the inputs ("" for none).
	Warning string
	Blocks  []*block
}

// block is a section of the page: a heading, paragraphs, figures,
// tables, preformatted text and sub-blocks; Collapsed ones are <details>.
type block struct {
	ID, Heading string
	Level       int // 2, 3 or 4
	Paras       []string
	Figures     []Figure
	Tables      []hTable
	Side        bool // tables side by side
	Pre         string
	Children    []*block
	Collapsed   bool
	Open        bool // a Collapsed block shown open
}

// hTable is a Table prepared for the template.
type hTable struct {
	Title, Caption string
	Head           []hCell
	Rows           [][]hCell
	Notes          []string
}

type hCell struct {
	Text       string
	Best, Left bool
}

func htmlTable(t Table) hTable {
	h := hTable{Title: t.Title, Caption: t.Caption, Notes: t.Notes}
	for c, s := range t.Head {
		h.Head = append(h.Head, hCell{Text: s, Left: slices.Contains(t.Left, c)})
	}
	for _, row := range t.Rows {
		var r []hCell
		for c, cell := range row {
			r = append(r, hCell{Text: cell.Text, Best: cell.Best, Left: slices.Contains(t.Left, c)})
		}
		h.Rows = append(h.Rows, r)
	}
	return h
}

// caseChoice is the Options.Cases selection: nil ids means the default.
type caseChoice struct {
	all, none bool
	ids       map[string]bool
}

func parseCases(list []string) caseChoice {
	var c caseChoice
	for _, s := range list {
		switch s = strings.TrimSpace(s); s {
		case "":
		case "all":
			c.all = true
		case "none":
			c.none = true
		default:
			if c.ids == nil {
				c.ids = map[string]bool{}
			}
			c.ids[s] = true
		}
	}
	return c
}

func (c caseChoice) isDefault() bool { return !c.all && !c.none && c.ids == nil }

// writeHTML builds the page of dirs and writes it to w.
func writeHTML(w io.Writer, dirs []string, opt Options) error {
	p, err := buildPage(dirs, opt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return err
	}
	// html/template escaped every text for HTML; terminal controls and
	// bidirectional overrides are not markup, and are neutralised as in
	// every other format (a page is also read with cat and less).
	_, err = io.WriteString(w, untrusted.Printable(buf.String()))
	return err
}

// buildPage reads the inputs into the page's blocks.
func buildPage(dirs []string, opt Options) (*page, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no suite or run directory given")
	}
	choice := parseCases(opt.Cases)
	p := page{Title: "coordbench report", Inputs: dirs, Warning: ScorerWarning(dirs)}
	if opt.Compare || opt.CompareBy != "" { // Write checked there are two, or one
		var secs []Section
		var err error
		var heading string
		if opt.CompareBy != "" {
			secs, err = compareBySections(dirs[0], opt.CompareBy)
			heading = "Comparison within " + dirs[0] + " by " + opt.CompareBy
		} else {
			secs, err = compareSections(dirs[0], dirs[1])
			heading = "Comparison: A = " + dirs[0] + ", B = " + dirs[1]
		}
		if err != nil {
			return nil, err
		}
		b := &block{ID: "compare", Heading: heading, Level: 2}
		for _, s := range secs {
			for _, t := range s.Tables {
				b.Tables = append(b.Tables, htmlTable(t))
			}
		}
		p.Blocks = append(p.Blocks, b)
	}
	seen := map[string]bool{}
	for i, dir := range dirs {
		kind, err := DetectInput(dir)
		if err != nil {
			return nil, err
		}
		id := "in" + strconv.Itoa(i+1)
		var b *block
		switch kind {
		case KindDES:
			b, err = desSuiteBlock(id, dir, choice, seen)
		case KindSilo:
			b, err = siloSuiteBlock(id, dir, choice, seen)
		case KindDESRun:
			var c *block
			if c, err = desCaseBlock(id, dir, filepath.Base(dir)); err == nil {
				b = &block{ID: id, Heading: dir + ": scheduling run (des run)", Level: 2, Children: []*block{c}}
				c.Collapsed = false
			}
		case KindSiloRun:
			var c *block
			if c, err = siloRunBlock(id, dir, filepath.Base(dir)); err == nil {
				b = &block{ID: id, Heading: dir + ": information-silo run (silo run)", Level: 2, Children: []*block{c}}
				c.Collapsed = false
			}
		}
		if err != nil {
			return nil, err
		}
		p.Blocks = append(p.Blocks, b)
	}
	if choice.ids != nil {
		var missing []string
		for id := range choice.ids {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return nil, opterr.New("Cases", "no such case in the suites given: %s", strings.Join(missing, ", "))
		}
	}
	return &p, nil
}
