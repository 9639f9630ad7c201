package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/harness"
)

// The sections of the HTML page, one builder per kind of input: a des
// suite, a silo suite, and the per-case sections of a des run and a silo
// run directory.

// casesNote says which cases have a section and how to get others.
// rule says how the default chose them.
func casesNote(choice caseChoice, shown, total int, what, rule string) string {
	switch {
	case choice.none:
		return fmt.Sprintf("No %s has a section of its own (--cases none); %d are in the suite.", what, total)
	case choice.all:
		return fmt.Sprintf("Every %s of the suite has a section of its own (--cases all).", what)
	case choice.ids != nil:
		return fmt.Sprintf("%d of the suite's %d %ss have a section of their own, as --cases asked; --cases all shows every one.", shown, total, what)
	}
	return fmt.Sprintf("%d of the suite's %d %ss have a section of their own (by default %s, at most %d); "+
		"the other %d are left out of this page. Name others with --cases ID,ID (the ids in the summary file), or --cases all.", shown, total, what, rule, DefaultCases, total-shown)
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
	var inst distinct[string]
	for _, g := range s.groups {
		inst.add(g.block[0])
	}
	instances := inst.list
	fb := &block{ID: id + "-families", Heading: "The four metric families side by side, per instance", Level: 3,
		Paras: []string{"No single score: each family is read on its own. A panel per metric, on its own axis: each paradigm's mean with its 95% interval over seeds (mind the arrows: ↑ higher is better, ↓ lower); the tables give the values, bold marking the best mean of its column within its block, as in the matrix, and the complete column how many episodes finished every job."}}
	for ii, inst := range instances {
		ib := &block{ID: fmt.Sprintf("%s-families-%d", id, ii), Heading: "Instance " + inst, Level: 4, Side: true,
			Figures: s.familyFigures(fmt.Sprintf("%s-fam%d", id, ii), inst)}
		for _, t := range matrix.Tables[:len(harness.MetricFamilies())] {
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
	sc, err := readScale(s)
	if err != nil {
		return nil, err
	}
	if sc != nil {
		b.Children = append(b.Children, sc.scalingBlock(id, s.scalingSection(sc)))
	}
	roles, err := readRoles(s)
	if err != nil {
		return nil, err
	}
	if len(roles) > 0 {
		rb := &block{ID: id + "-roles", Heading: "Model use by role", Level: 3,
			Paras: []string{"Which level of the organisation spends the tokens and whose answers fall back: each role's share of the decisions, calls and tokens, per episode."}}
		for _, t := range s.rolesSection(roles).Tables {
			rb.Tables = append(rb.Tables, htmlTable(t))
		}
		b.Children = append(b.Children, rb)
	}
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
		// The first episode of each group that left work undone, else its
		// first seed: a deadlock is what a reader wants to look into.
		for _, g := range s.groups {
			if len(g.cases) > 0 && len(pick) < DefaultCases {
				i := max(slices.IndexFunc(g.cases, func(c *desCase) bool { return !c.complete }), 0)
				pick = append(pick, g.cases[i])
			}
		}
	}
	for _, c := range all {
		seen[c.id] = true
	}
	cb := &block{ID: id + "-cases", Heading: "Cases", Level: 3, Paras: []string{casesNote(choice, len(pick), s.cases, "case", "the first incomplete episode of each group, else its first seed")}}
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
	for _, t := range siloSection(dir, agg, runs).Tables {
		tb.Tables = append(tb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, tb)
	pb := &block{ID: id + "-paired", Heading: "Paired differences between protocols", Level: 3}
	for _, t := range siloPairedSection(dir, runs).Tables {
		pb.Tables = append(pb.Tables, htmlTable(t))
	}
	b.Children = append(b.Children, pb)
	models, err := readSiloModels(dir)
	if err != nil {
		return nil, err
	}
	if models != nil {
		mb := &block{ID: id + "-models", Heading: "Mixed teams by model", Level: 3}
		for _, t := range siloModelsSection(dir, models).Tables {
			mb.Tables = append(mb.Tables, htmlTable(t))
		}
		b.Children = append(b.Children, mb)
	}
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
		// Per level × protocol × agent, the first run at the largest N,
		// the first failed one (success 0) at that N if any: the
		// informative runs, not the easiest.
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
			if !ok || r.n > runs[j].n || r.n == runs[j].n && r.success == 0 && runs[j].success != 0 {
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
	cb := &block{ID: id + "-runs", Heading: "Runs", Level: 3, Paras: []string{casesNote(choice, len(pick), len(runs), "run", "per level × protocol × agent, a run at the largest N, one that failed if any did")}}
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
	if t, ok, err := r.agentsUsageTable(); err != nil {
		return nil, err
	} else if ok {
		b.Tables = append(b.Tables, htmlTable(t))
	}
	b.Pre = r.transcript
	if r.clipped > 0 {
		b.Pre += fmt.Sprintf("\n[… %d more bytes: run coordbench silo show %s for the whole transcript]\n", r.clipped, dir)
	}
	return b, nil
}
