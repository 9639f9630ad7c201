package analyze

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// Bounds on a run's turn log.
const (
	// maxTurnsBytes bounds one turns.jsonl (it holds every prompt).
	maxTurnsBytes = 4 << 30
	// maxTurns bounds its records (the paper's largest run, 100 agents ×
	// 30 rounds, has 3,000).
	maxTurns = 1 << 20
)

// FileTurnsLog is an LLM run's turn log, read for context use.
const FileTurnsLog = llmagent.FileTurns

// ContextPercentiles are the percentiles of ContextRow, in its order.
var ContextPercentiles = []int{50, 90, 95, 99}

// ContextRow is the context use of one agent kind (the paper's appendix
// D): the prompt tokens of every model call the server counted, over the
// runs of the group.
type ContextRow struct {
	Agent string
	Runs  int // runs with a turn log
	Calls int // model calls with a prompt count
	Mean  float64
	P     []int64 // ContextPercentiles, nearest rank
	Max   int64
	// RunMaxMean is the mean over runs of a run's largest prompt.
	RunMaxMean float64
}

// readContext reads the prompt tokens of each model call of a turn log
// (a regular file of at most maxTurnsBytes, lines of at most
// llmagent.MaxTurnLine); none (nil, nil) without the file. Calls the server did not count
// (prompt_tokens 0: a model error) are left out.
func readContext(path string) ([]int64, error) {
	f, err := inputfile.OpenMax(path, "turn log", maxTurnsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int64
	n := 0
	err = inputfile.ScanLines(f, path, "turn log", llmagent.MaxTurnLine, func(line []byte) (bool, error) {
		if n++; n > maxTurns {
			return false, fmt.Errorf("more than %d records", maxTurns)
		}
		var rec struct {
			Usage struct {
				PromptTokens int64 `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return false, fmt.Errorf("record %d: %w", n, err)
		}
		if p := rec.Usage.PromptTokens; p < 0 {
			return false, fmt.Errorf("record %d: prompt_tokens %d", n, p)
		} else if p > 0 {
			out = append(out, p)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// contextRows groups the runs with a turn log by agent kind.
func contextRows(runs []Run) []ContextRow {
	type acc struct {
		runs   int
		tokens []int64
		runMax int64
	}
	groups := map[string]*acc{}
	for i := range runs {
		r := &runs[i]
		if len(r.Context) == 0 {
			continue
		}
		a := entry(groups, r.Agent)
		a.runs++
		a.tokens = append(a.tokens, r.Context...)
		a.runMax += slices.Max(r.Context)
	}
	var out []ContextRow
	for agent, a := range groups {
		s := slices.Clone(a.tokens)
		slices.Sort(s)
		var sum int64
		for _, x := range s {
			sum += x
		}
		row := ContextRow{Agent: agent, Runs: a.runs, Calls: len(s), Mean: float64(sum) / float64(len(s)),
			Max: s[len(s)-1], RunMaxMean: float64(a.runMax) / float64(a.runs)}
		for _, p := range ContextPercentiles {
			row.P = append(row.P, nearestRank(s, p))
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b ContextRow) int { return cmp.Compare(a.Agent, b.Agent) })
	return out
}

// nearestRank is the p-th percentile of sorted s (not empty) by the
// nearest-rank method: the smallest value with at least p% of s at or
// below it.
func nearestRank(s []int64, p int) int64 {
	k := (p*len(s) + 99) / 100 // ceil(p/100 · n)
	return s[max(k, 1)-1]
}
