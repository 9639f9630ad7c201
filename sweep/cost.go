package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/suiterun"
)

// Cost files, written beside the suite's summaries by sweep run and sweep
// collect. Like the summaries, they describe the finished cases and are
// byte-identical between a single-machine run and its collected shards.
const (
	FileCost        = "cost.csv"         // one row per finished model-backed case
	FileCostSummary = "cost_summary.csv" // one row per model, then the total
)

// maxLogLine bounds one line of a case's decision or turn log.
const maxLogLine = 64 << 20

// Usage is the model usage of a case, read from its artifacts: the calls
// the endpoint answered (billed) and those the response cache replayed
// (free: they were paid for when first made).
type Usage struct {
	Calls, InputTokens, OutputTokens                   int64
	CachedCalls, CachedInputTokens, CachedOutputTokens int64
}

// Add adds u to t.
func (t *Usage) Add(u Usage) {
	t.Calls += u.Calls
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedCalls += u.CachedCalls
	t.CachedInputTokens += u.CachedInputTokens
	t.CachedOutputTokens += u.CachedOutputTokens
}

// Cost is the billed tokens at price p, in US dollars.
func (t Usage) Cost(p Price) float64 { return CostOf(p, t.InputTokens, t.OutputTokens) }

// ReadUsage reads the model usage of the case in dir, a case directory of
// benchmark's suite: for des its decisions.jsonl (tokens per answer) and
// timing.jsonl (which answers came from the cache); for silo its
// turns.jsonl and timing.jsonl (one line per model call each, in the same
// order). A case without them (a built-in controller, scripted agents)
// used no model.
func ReadUsage(benchmark, dir string) (Usage, error) {
	if benchmark == BenchmarkSilo {
		return readSiloUsage(dir)
	}
	return readDesUsage(dir)
}

// readDesUsage pairs the answers of decisions.jsonl with the cache flags
// of timing.jsonl by step and agent.
func readDesUsage(dir string) (Usage, error) {
	var u Usage
	type key struct {
		step  int
		agent string
	}
	cached := map[key]bool{}
	err := eachLine(filepath.Join(dir, harness.FileTiming), func(b []byte) error {
		var t harness.TimingLine
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		if t.Cached {
			cached[key{t.Step, t.AgentID}] = true
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	err = eachLine(filepath.Join(dir, harness.FileDecisions), func(b []byte) error {
		var a struct {
			Step             int    `json:"step"`
			AgentID          string `json:"agent_id"`
			PromptTokens     int64  `json:"prompt_tokens"`
			CompletionTokens int64  `json:"completion_tokens"`
			Calls            int64  `json:"calls"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		if a.Calls < 0 || a.PromptTokens < 0 || a.CompletionTokens < 0 {
			return errNegativeUsage
		}
		if a.Calls == 0 && a.PromptTokens == 0 && a.CompletionTokens == 0 {
			return nil // no model call, or one that failed without a reply
		}
		if a.Calls == 0 {
			a.Calls = 1 // a failed call's unusable reply: billed all the same
		}
		if cached[key{a.Step, a.AgentID}] {
			u.CachedCalls += a.Calls
			u.CachedInputTokens += a.PromptTokens
			u.CachedOutputTokens += a.CompletionTokens
		} else {
			u.Calls += a.Calls
			u.InputTokens += a.PromptTokens
			u.OutputTokens += a.CompletionTokens
		}
		return nil
	})
	return u, err
}

// readSiloUsage pairs the turn records of turns.jsonl with the timing
// lines of timing.jsonl, in order.
func readSiloUsage(dir string) (Usage, error) {
	var u Usage
	var cached []bool
	err := eachLine(filepath.Join(dir, llmagent.FileTiming), func(b []byte) error {
		var t llmagent.Timing
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		cached = append(cached, t.Cached)
		return nil
	})
	if err != nil {
		return u, err
	}
	i := 0
	err = eachLine(filepath.Join(dir, llmagent.FileTurns), func(b []byte) error {
		var r struct {
			Outcome string `json:"outcome"`
			Usage   struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if r.Usage.PromptTokens < 0 || r.Usage.CompletionTokens < 0 {
			return errNegativeUsage
		}
		if r.Outcome == llmagent.OutcomeModelError && r.Usage.PromptTokens == 0 && r.Usage.CompletionTokens == 0 {
			// The call failed without a reply (a dead endpoint, a
			// refused request): nothing was billed.
			i++
			return nil
		}
		if i < len(cached) && cached[i] {
			u.CachedCalls++
			u.CachedInputTokens += r.Usage.PromptTokens
			u.CachedOutputTokens += r.Usage.CompletionTokens
		} else {
			u.Calls++
			u.InputTokens += r.Usage.PromptTokens
			u.OutputTokens += r.Usage.CompletionTokens
		}
		i++
		return nil
	})
	return u, err
}

// errNegativeUsage is a log line whose calls or tokens are negative: no
// run writes one, and counting it would lower the money spent.
var errNegativeUsage = errors.New("negative calls or token counts")

// eachLine calls f with every non-empty line of the file at path; a
// missing file has none.
func eachLine(path string, f func([]byte) error) error {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	r := bufio.NewReaderSize(fh, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if len(line) > 0 {
			if ferr := f(line); ferr != nil {
				return fmt.Errorf("%s:%d: %v", path, n, ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
}

// readLine reads one line, without its newline, of at most maxLogLine
// bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := r.ReadLine()
		line = append(line, part...)
		if len(line) > maxLogLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLogLine)
		}
		if err != nil || !isPrefix {
			return line, err
		}
	}
}

// CaseCost is the usage and cost of one finished model-backed case.
type CaseCost struct {
	ID, Model string
	Usage     Usage
	Price     Price
	CostUSD   float64
}

// Costs are the costs of a suite directory's finished cases.
type Costs struct {
	Cases []CaseCost // in suite order
	// Models are the labels of the experiment's models, in file order.
	Models []string
	prices map[string]Price
}

// ModelTotal sums the cases of model label m, priced at its price; ""
// sums every model (the cost is the sum of the models' costs).
func (c *Costs) ModelTotal(m string) (cases int, u Usage, usd float64) {
	if m == "" {
		for _, x := range c.Models {
			n, mu, v := c.ModelTotal(x)
			cases += n
			u.Add(mu)
			usd += v
		}
		return cases, u, usd
	}
	for _, x := range c.Cases {
		if x.Model == m {
			cases++
			u.Add(x.Usage)
		}
	}
	return cases, u, u.Cost(c.prices[m])
}

// ReadCosts reads the usage of every model-backed case of the shard that
// has finished in dir (dir/<cases>/<id>/) and prices it.
func (s *Suite) ReadCosts(dir string) (*Costs, error) {
	e := s.Experiment
	c := &Costs{prices: map[string]Price{}}
	for _, m := range e.ModelList() {
		c.Models = append(c.Models, m.Label())
		c.prices[m.Label()] = m.Price
	}
	casesDir := filepath.Join(dir, CasesDir(e.Benchmark))
	for _, cm := range s.caseModels() {
		if cm[1] == "" {
			continue
		}
		d := filepath.Join(casesDir, cm[0])
		if _, err := os.Stat(d); err != nil {
			continue
		}
		u, err := ReadUsage(e.Benchmark, d)
		if err != nil {
			return nil, err
		}
		p := c.prices[cm[1]]
		c.Cases = append(c.Cases, CaseCost{ID: cm[0], Model: cm[1], Usage: u, Price: p, CostUSD: u.Cost(p)})
	}
	return c, nil
}

// usd formats dollars with 6 decimals (a millionth of a dollar is the
// price of one token at $1 per million): the same bytes everywhere.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// price formats a price per million tokens as written in the file.
func price(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func usageCols(u Usage) []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{i(u.Calls), i(u.InputTokens), i(u.OutputTokens), i(u.CachedCalls), i(u.CachedInputTokens), i(u.CachedOutputTokens)}
}

var usageHeader = []string{"calls", "input_tokens", "output_tokens", "cached_calls", "cached_input_tokens", "cached_output_tokens"}

// Write writes FileCost and FileCostSummary into dir and returns their
// paths.
func (c *Costs) Write(dir string) ([]string, error) {
	var rows, sum [][]string
	rows = append(rows, append(append([]string{"case_id", "model"}, usageHeader...), "price_input_usd_per_mtok", "price_output_usd_per_mtok", "cost_usd"))
	for _, x := range c.Cases {
		row := append([]string{x.ID, x.Model}, usageCols(x.Usage)...)
		rows = append(rows, append(row, price(x.Price.Input), price(x.Price.Output), usd(x.CostUSD)))
	}
	sum = append(sum, append(append([]string{"model", "cases"}, usageHeader...), "cost_usd"))
	for _, m := range append(append([]string{}, c.Models...), "") {
		n, u, v := c.ModelTotal(m)
		label := m
		if m == "" {
			label = "total"
		}
		sum = append(sum, append(append([]string{label, strconv.Itoa(n)}, usageCols(u)...), usd(v)))
	}
	files := []string{filepath.Join(dir, FileCost), filepath.Join(dir, FileCostSummary)}
	for i, table := range [][][]string{rows, sum} {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll(table); err != nil {
			return nil, err
		}
		if err := atomicfs.WriteFile(files[i], suiterun.TmpPrefix, b.Bytes()); err != nil {
			return nil, err
		}
	}
	return files, nil
}
