package report

// The per-model table of a silo suite with mixed teams, from its
// aggregate_models.csv (suites without teams have none, and no section).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/coordbench/coordbench/silo/suite"
)

// SectionSiloModels is the kind of the per-model section of a suite with
// mixed teams.
const SectionSiloModels = "silo-models"

// siloModelCols are the number columns of the per-model table (their
// names in aggregate_models.csv).
var siloModelCols = []siloCol{
	{"S_mean", "S", "↑", 4},
	{"success_rate", "success", "↑", 4},
	{"P_mean", "P", "↑", 4},
	{"P_paper_mean", "P_paper", "↑", 4},
	{"D_mean", "D", "", 4},
	{"messages_mean", "messages", "", 1},
	{"turns_per_agent", "turns/agent", "↓", 1},
	{"input_tokens_per_agent", "input tok/agent", "↓", 1},
	{"output_tokens_per_agent", "output tok/agent", "↓", 1},
	{"premature_submission_rate", "premature", "↓", 4},
	{"consensus_failure_rate", "consensus failure", "↓", 4},
	{"computation_error_rate", "computation error", "↓", 4},
	{"no_submission_rate", "no submission", "↓", 4},
}

// siloModelRow is one row of aggregate_models.csv.
type siloModelRow struct {
	team, model, level, protocol string
	n, runs, agents              int
	vals                         []float64
}

// readSiloModels reads dir's aggregate_models.csv; none (nil, nil) when
// the suite has no mixed team.
func readSiloModels(dir string) ([]siloModelRow, error) {
	path := filepath.Join(dir, suite.FileAggregateModels)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	need := []string{"agent", "model", "level", "N", "protocol", "runs", "agents"}
	for _, c := range siloModelCols {
		need = append(need, c.csv)
	}
	f, err := readCSV(path, need)
	if err != nil {
		return nil, err
	}
	var rows []siloModelRow
	for _, r := range f.rows {
		row := siloModelRow{team: f.get(r, "agent"), model: f.get(r, "model"), level: f.get(r, "level"), protocol: f.get(r, "protocol")}
		if _, ok := levels[row.level]; !ok {
			return nil, fmt.Errorf("%s:%d: column level: %q is not a level (I, II or III)", path, r.line, row.level)
		}
		for _, c := range []struct {
			col string
			to  *int
		}{{"N", &row.n}, {"runs", &row.runs}, {"agents", &row.agents}} {
			v, err := f.count(r, c.col)
			if err != nil {
				return nil, err
			}
			*c.to = v
		}
		for _, c := range siloModelCols {
			v, err := f.float(r, c.csv, false)
			if err != nil {
				return nil, err
			}
			row.vals = append(row.vals, v)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// siloModelsSection is the per-model table of a suite with mixed teams.
func siloModelsSection(dir string, rows []siloModelRow) Section {
	sec := Section{Suite: dir, Kind: SectionSiloModels, Title: dir + ": mixed teams by model (silo suite)"}
	t := Table{Title: "S, P, D, turns, tokens and failure labels of each model's agents in the mixed teams",
		Caption: "From the suite's aggregate_models.csv: each row is the agents one model played in the runs of one mixed team, level, N and protocol. " +
			"S: mean fraction of the model's agents with a correct answer; success: fraction of runs in which all of them are correct; P, P_paper: their mean partial correctness; " +
			"D: the part of the run's density their messages make; messages: per run; turns and tokens: per agent of the model; failure labels: the fraction of its agents carrying each. " +
			"↑ higher is better, ↓ lower. docs/silo-llm.md (Mixed teams) defines each column.",
		Head: []string{"team", "model", "level", "N", "protocol", "runs", "agents"},
		Left: []int{0, 1, 2, 4}}
	sec.CSVHead = []string{"team", "model", "level", "N", "protocol", "runs", "agents"}
	for _, c := range siloModelCols {
		t.Head = append(t.Head, c.head())
		sec.CSVHead = append(sec.CSVHead, c.csv)
	}
	for _, r := range rows {
		row := []Cell{{Text: r.team}, {Text: r.model}, {Text: r.level}, {Text: strconv.Itoa(r.n)}, {Text: r.protocol},
			{Text: strconv.Itoa(r.runs)}, {Text: strconv.Itoa(r.agents)}}
		csvRow := []string{r.team, r.model, r.level, strconv.Itoa(r.n), r.protocol, strconv.Itoa(r.runs), strconv.Itoa(r.agents)}
		for i, v := range r.vals {
			row = append(row, Cell{Text: fnum(v, siloModelCols[i].dec)})
			csvRow = append(csvRow, fcsv(v))
		}
		t.Rows = append(t.Rows, row)
		sec.CSVRows = append(sec.CSVRows, csvRow)
	}
	sec.Tables = []Table{t}
	return sec
}
