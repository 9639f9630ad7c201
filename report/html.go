package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/harness"
)

// The HTML report: one self-contained page (style inline, figures as
// inline SVG, no script, nothing fetched) built with html/template, which
// escapes every text taken from the inputs. The same inputs give the same
// bytes: nothing depends on the clock, maps are walked in sorted order.

//go:embed page.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// DefaultCases is how many cases (or runs) of a suite get a per-case
// section when --cases is not given.
const DefaultCases = 8

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

// page is what the template renders.
type page struct {
	Title  string
	Inputs []string
	Blocks []*block
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

// caseChoice is the --cases selection: nil ids means the default.
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
	if len(dirs) == 0 {
		return fmt.Errorf("no suite or run directory given")
	}
	choice := parseCases(opt.Cases)
	p := page{Title: "coordbench report", Inputs: dirs}
	if opt.Compare {
		if len(dirs) != 2 {
			return fmt.Errorf("--compare takes exactly two suite directories, A and B (got %d)", len(dirs))
		}
		secs, err := compareSections(dirs[0], dirs[1])
		if err != nil {
			return err
		}
		b := &block{ID: "compare", Heading: "Comparison: A = " + dirs[0] + ", B = " + dirs[1], Level: 2}
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
			return err
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
			return err
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
			return fmt.Errorf("--cases: no such case in the suites given: %s", strings.Join(missing, ", "))
		}
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// casesNote says which cases have a section and how to get others.
func casesNote(choice caseChoice, shown, total int, what string) string {
	switch {
	case choice.none:
		return fmt.Sprintf("No %s has a section of its own (--cases none); %d are in the suite.", what, total)
	case choice.all:
		return fmt.Sprintf("Every %s of the suite has a section of its own (--cases all).", what)
	case choice.ids != nil:
		return fmt.Sprintf("%d of the suite's %d %ss have a section of their own, as --cases asked; --cases all shows every one.", shown, total, what)
	}
	return fmt.Sprintf("%d of the suite's %d %ss have a section of their own (by default the first seed of each group, at most %d); "+
		"the other %d are left out of this page. Name others with --cases ID,ID (the ids in the summary file), or --cases all.", shown, total, what, DefaultCases, total-shown)
}

// desSuiteBlock is the page of a scheduling suite.
func desSuiteBlock(id, dir string, choice caseChoice, seen map[string]bool) (*block, error) {
	s, err := readDES(dir)
	if err != nil {
		return nil, err
	}
	b := &block{ID: id, Heading: desTitle(dir), Level: 2}
	b.Paras = append(b.Paras, fmt.Sprintf("%d cases (%d failed) in %d rows: instances × controllers × models × frameworks × paradigms, from suite_summary.csv.", s.cases, s.failed, len(s.groups)))
	matrix, paired := s.matrixSection(), s.pairedSection()
	// The four families side by side, one instance at a time.
	var instances []string
	for _, g := range s.groups {
		if !slices.Contains(instances, g.block[0]) {
			instances = append(instances, g.block[0])
		}
	}
	fb := &block{ID: id + "-families", Heading: "The four metric families side by side, per instance", Level: 3,
		Paras: []string{"No single score: each family is read on its own. The bars put each paradigm's mean of a metric over the largest mean of that metric among the paradigms of its block (so 1 is the largest, whichever way is better: mind the arrows); the tables give the values, bold marking the best mean of its column within its block, as in the matrix."}}
	for ii, inst := range instances {
		ib := &block{ID: fmt.Sprintf("%s-families-%d", id, ii), Heading: "Instance " + inst, Level: 4, Side: true,
			Figures: s.familyFigures(fmt.Sprintf("%s-fam%d", id, ii), inst)}
		for _, t := range matrix.Tables[:len(harness.MetricFamilies)] {
			t2 := t
			t2.Caption, t2.Rows = "", nil
			t2.Title = strings.TrimPrefix(t.Title, "Paradigm matrix: ")
			for _, r := range t.Rows {
				if r[0].Text == inst {
					t2.Rows = append(t2.Rows, r)
				}
			}
			ib.Tables = append(ib.Tables, htmlTable(t2))
		}
		fb.Children = append(fb.Children, ib)
	}
	b.Children = append(b.Children, fb)
	mb := &block{ID: id + "-matrix", Heading: "Paradigm matrix (Table 3 layout)", Level: 3, Side: false}
	for _, t := range matrix.Tables {
		mb.Tables = append(mb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, mb)
	pb := &block{ID: id + "-paired", Heading: "Paired differences between paradigms", Level: 3,
		Paras: []string{"Each paradigm ran on the same seeds (common random numbers), so paradigms are compared seed by seed; ≠ 0 marks a 95% t interval that excludes 0 (docs/report.md says what this assumes)."}}
	for _, t := range paired.Tables {
		pb.Tables = append(pb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, pb)
	// Per case.
	var all []*desCase
	for _, g := range s.groups {
		all = append(all, g.cases...)
	}
	var pick []*desCase
	switch {
	case choice.all:
		pick = all
	case choice.ids != nil:
		for _, c := range all {
			if choice.ids[c.id] {
				pick = append(pick, c)
			}
		}
	case !choice.none:
		for _, g := range s.groups {
			if len(g.cases) > 0 && len(pick) < DefaultCases {
				pick = append(pick, g.cases[0])
			}
		}
	}
	for _, c := range all {
		seen[c.id] = true
	}
	cb := &block{ID: id + "-cases", Heading: "Cases", Level: 3, Paras: []string{casesNote(choice, len(pick), s.cases, "case")}}
	for i, c := range pick {
		cd := filepath.Join(dir, "cases", c.id)
		k, err := desCaseBlock(fmt.Sprintf("%s-case%d", id, i+1), cd, c.id)
		if errors.Is(err, fs.ErrNotExist) {
			k, err = missingBlock(fmt.Sprintf("%s-case%d", id, i+1), cd, c.id), nil
		}
		if err != nil {
			return nil, err
		}
		k.Open = i == 0
		cb.Children = append(cb.Children, k)
	}
	b.Children = append(b.Children, cb)
	return b, nil
}

// missingBlock stands for a case whose directory is gone (a suite kept
// only its summary): the page says so instead of failing.
func missingBlock(id, dir, name string) *block {
	return &block{ID: id, Heading: name, Level: 4, Collapsed: true, Paras: []string{"The directory " + dir + " of this case is missing: no figures."}}
}

// desCaseBlock is the section of one scheduling run directory.
func desCaseBlock(id, dir, name string) (*block, error) {
	r, err := readDESRun(dir)
	if err != nil {
		return nil, err
	}
	return &block{ID: id, Heading: name, Level: 4, Collapsed: true, Paras: []string{r.summary()},
		Figures: r.figures(id), Tables: []hTable{htmlTable(r.metricsTable())}}, nil
}

// siloSuiteBlock is the page of an information-silo suite.
func siloSuiteBlock(id, dir string, choice caseChoice, seen map[string]bool) (*block, error) {
	agg, err := readSilo(dir)
	if err != nil {
		return nil, err
	}
	runs, err := readSiloRuns(dir)
	if err != nil {
		return nil, err
	}
	b := &block{ID: id, Heading: dir + ": information-silo suite (silo suite)", Level: 2,
		Paras: []string{fmt.Sprintf("%d runs, from summary.csv (one row per run) and aggregate.csv (means and RCC).", len(runs))}}
	b.Children = append(b.Children, &block{ID: id + "-figures", Heading: "Figures", Level: 3, Figures: siloFigures(id, runs, agg)})
	tb := &block{ID: id + "-table", Heading: "Table", Level: 3}
	for _, t := range siloSection(dir, agg).Tables {
		tb.Tables = append(tb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, tb)
	pb := &block{ID: id + "-paired", Heading: "Paired differences between protocols", Level: 3}
	for _, t := range siloPairedSection(dir, runs).Tables {
		pb.Tables = append(pb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, pb)
	var pick []siloRunRow
	switch {
	case choice.all:
		pick = runs
	case choice.ids != nil:
		for _, r := range runs {
			if choice.ids[r.caseID] {
				pick = append(pick, r)
			}
		}
	case !choice.none:
		// The first run at the smallest N > 1 of each level × protocol × agent.
		type key struct{ level, protocol, agent string }
		best := map[key]int{}
		var order []key
		for i, r := range runs {
			if r.baseline || r.n < 2 {
				continue
			}
			k := key{r.level, r.protocol, r.agent}
			j, ok := best[k]
			if !ok {
				order = append(order, k)
			}
			if !ok || r.n < runs[j].n {
				best[k] = i
			}
		}
		for _, k := range order {
			if len(pick) < DefaultCases {
				pick = append(pick, runs[best[k]])
			}
		}
	}
	for _, r := range runs {
		seen[r.caseID] = true
	}
	cb := &block{ID: id + "-runs", Heading: "Runs", Level: 3, Paras: []string{casesNote(choice, len(pick), len(runs), "run")}}
	for i, r := range pick {
		rd := filepath.Join(dir, "runs", r.caseID)
		k, err := siloRunBlock(fmt.Sprintf("%s-run%d", id, i+1), rd, r.caseID)
		if errors.Is(err, fs.ErrNotExist) {
			k, err = missingBlock(fmt.Sprintf("%s-run%d", id, i+1), rd, r.caseID), nil
		}
		if err != nil {
			return nil, err
		}
		k.Open = i == 0
		cb.Children = append(cb.Children, k)
	}
	b.Children = append(b.Children, cb)
	return b, nil
}

// siloRunBlock is the section of one information-silo run directory.
func siloRunBlock(id, dir, name string) (*block, error) {
	r, err := readSiloRun(dir)
	if err != nil {
		return nil, err
	}
	b := &block{ID: id, Heading: name, Level: 4, Collapsed: true, Paras: []string{r.summary()}}
	if r.callsErr != "" {
		b.Paras = append(b.Paras, r.callsErr)
	} else if r.res.N+1 > maxGraphNodes {
		b.Paras = append(b.Paras, fmt.Sprintf("N = %d: too many agents to draw the communication graph (at most %d).", r.res.N, maxGraphNodes-1))
	} else {
		b.Paras = append(b.Paras, "Communication graph from calls.jsonl: an arrow per sender and receiver (messages, broadcasts), agent → files for a file write, files → agent for a read; wider for more calls. All rounds first, then each round with any communication.")
		b.Figures = append(b.Figures, r.graph(id+"-graph", 0))
		rounds := r.roundList()
		for i, rnd := range rounds {
			if i == maxRoundsDrawn {
				b.Paras = append(b.Paras, fmt.Sprintf("Only the first %d rounds with communication are drawn; %d more are left out.", maxRoundsDrawn, len(rounds)-maxRoundsDrawn))
				break
			}
			b.Figures = append(b.Figures, r.graph(fmt.Sprintf("%s-graph-r%d", id, rnd), rnd))
		}
	}
	b.Tables = append(b.Tables, htmlTable(r.answersTable()))
	b.Pre = r.transcript
	if r.clipped > 0 {
		b.Pre += fmt.Sprintf("\n[… %d more bytes: run coordbench silo show %s for the whole transcript]\n", r.clipped, dir)
	}
	return b, nil
}
