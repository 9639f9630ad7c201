package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/coordbench/coordbench/silo/llmagent"
)

// maxTimingLine bounds one line of a silo run's timing.jsonl.
const maxTimingLine = 1 << 16

// agentTiming is the wall-clock side of one agent's model calls in a silo
// run (timing.jsonl): calls, retries (attempts beyond the first), response
// cache hits and latency.
type agentTiming struct {
	calls, retries, cached int
	latencyMS              float64
}

// readAgentTiming sums timing.jsonl by agent; nil without the file (agents
// that call no model).
func readAgentTiming(dir string, n int) (map[int]*agentTiming, error) {
	path := filepath.Join(dir, llmagent.FileTiming)
	out := map[int]*agentTiming{}
	err := scanLines(path, maxTimingLine, func(line []byte, no int) error {
		var t llmagent.Timing
		if err := json.Unmarshal(line, &t); err != nil {
			return fmt.Errorf("%s:%d: not a timing record: %v", path, no, err)
		}
		if t.Agent < 0 || t.Agent >= n || t.Attempts < 0 || !(t.LatencyMS >= 0) {
			return fmt.Errorf("%s:%d: agent %d of %d, %d attempts, latency %v", path, no, t.Agent, n, t.Attempts, t.LatencyMS)
		}
		a := out[t.Agent]
		if a == nil {
			a = &agentTiming{}
			out[t.Agent] = a
		}
		a.calls++
		a.retries += max(0, t.Attempts-1)
		if t.Cached {
			a.cached++
		}
		a.latencyMS += t.LatencyMS
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// agentsUsageTable is each model-backed agent's usage (result.json) beside
// the wall-clock side of its calls (timing.jsonl); ok is false for a run
// whose agents called no model.
func (r *siloRun) agentsUsageTable() (t Table, ok bool, err error) {
	timing, err := readAgentTiming(r.dir, r.res.N)
	if err != nil {
		return t, false, err
	}
	t = Table{Title: "Model use by agent",
		Caption: "Model calls, tokens, replies without a valid tool call (wasted) and failed calls per agent (result.json, reproducible); retries, response-cache hits and latency of its calls (timing.jsonl: wall clock, the endpoint's and the cache's, not a result).",
		Head:    []string{"agent", "model", "calls", "input tokens", "output tokens", "wasted", "model errors", "max context", "retries", "cached", "latency ms"}, Left: []int{1}}
	for _, a := range r.res.Agents {
		if a.Usage == nil {
			continue
		}
		ok = true
		u := a.Usage
		tm := timing[a.ID]
		retries, cached, lat := "–", "–", "–"
		if tm != nil {
			retries, cached, lat = strconv.Itoa(tm.retries), strconv.Itoa(tm.cached), fnum(tm.latencyMS, 0)
		}
		model := a.Model
		if model == "" {
			model = "–"
		}
		t.Rows = append(t.Rows, []Cell{{Text: strconv.Itoa(a.ID)}, {Text: model}, {Text: strconv.Itoa(u.ModelCalls)},
			{Text: strconv.FormatInt(u.InputTokens, 10)}, {Text: strconv.FormatInt(u.OutputTokens, 10)}, {Text: strconv.Itoa(u.WastedCalls)},
			{Text: strconv.Itoa(u.ModelErrors)}, {Text: strconv.FormatInt(u.MaxContextTokens, 10)}, {Text: retries}, {Text: cached}, {Text: lat}})
	}
	return t, ok, nil
}
