package analyze

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

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

// readContext reads the prompt tokens of each model call of a turn log;
// none (nil, nil) without the file. Calls the server did not count
// (prompt_tokens 0: a model error) are left out.
func readContext(path string) ([]int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: maxTurnsBytes + 1}
	dec := json.NewDecoder(lr)
	var out []int64
	for n := 0; ; n++ {
		var rec struct {
			Usage struct {
				PromptTokens int64 `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := dec.Decode(&rec); err == io.EOF {
			break
		} else if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("%s: larger than %d bytes", path, int64(maxTurnsBytes))
			}
			return nil, fmt.Errorf("%s: record %d: %w", path, n+1, err)
		}
		if n >= maxTurns {
			return nil, fmt.Errorf("%s: more than %d records", path, maxTurns)
		}
		if p := rec.Usage.PromptTokens; p < 0 {
			return nil, fmt.Errorf("%s: record %d: prompt_tokens %d", path, n+1, p)
		} else if p > 0 {
			out = append(out, p)
		}
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, int64(maxTurnsBytes))
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
