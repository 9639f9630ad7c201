package sweep

import (
	"bufio"
	"bytes"
	"crypto/sha256"

	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/suiterun"
)

// Cost files, written beside the suite's summaries by sweep run and sweep
// collect. Like the summaries, they describe the finished cases and are
// byte-identical between a single-machine run and its collected shards.
const (
	FileCost        = "cost.csv"         // one row per finished model-backed case
	FileCostSummary = "cost_summary.csv" // one row per model, then the total
	// FileCostParts splits cost.csv by role (des: plant, area, cell,
	// selector) or agent (silo: agent 0, agent 1, …): one row per
	// finished model-backed case and part that used a model.
	FileCostParts = "cost_parts.csv"
)

// maxLogLine bounds one line of a case's decision or turn log.
const maxLogLine = 64 << 20

// Usage is the model usage of a case, read from its artifacts: the calls
// the endpoint answered (billed) and those the response cache replayed
// (free: they were paid for when first made; the Cached* fields).
//
// PromptCachedInputTokens is another cache: the provider's prompt cache.
// It is the part of InputTokens (billed calls only) that the server
// reported as served from its prompt cache (the logs' prompt_cached_tokens,
// OpenAI's usage.prompt_tokens_details.cached_tokens), which providers
// bill at a discount (Price.CachedInput). It is never more than
// InputTokens.
//
// Parts splits the usage of a mixed team's run by model label (the
// model each turn of its turns.jsonl names), so that each model's part is
// priced at its own price (UsageCost); nil for a run of one model, whose
// usage is priced at its case's model. (A pointer, so that Usage values
// stay comparable.)
type Usage struct {
	Calls                   int64       `json:"calls"`
	InputTokens             int64       `json:"input_tokens"`
	PromptCachedInputTokens int64       `json:"prompt_cached_input_tokens,omitempty"`
	OutputTokens            int64       `json:"output_tokens"`
	CachedCalls             int64       `json:"cached_calls"`
	CachedInputTokens       int64       `json:"cached_input_tokens"`
	CachedOutputTokens      int64       `json:"cached_output_tokens"`
	Parts                   *ModelUsage `json:"parts,omitempty"`
}

// ModelUsage is usage by model label (Usage.Parts).
type ModelUsage map[string]Usage

// parts is t's usage by model, nil without parts.
func (t Usage) parts() ModelUsage {
	if t.Parts == nil {
		return nil
	}
	return *t.Parts
}

func (t Usage) over(n int64) bool {
	for _, p := range t.parts() {
		if p.over(n) {
			return true
		}
	}
	return t.Calls > n || t.InputTokens > n || t.PromptCachedInputTokens > n || t.OutputTokens > n ||
		t.CachedCalls > n || t.CachedInputTokens > n || t.CachedOutputTokens > n
}

func (t Usage) negative() bool {
	for _, p := range t.parts() {
		if p.negative() {
			return true
		}
	}
	return t.Calls < 0 || t.InputTokens < 0 || t.PromptCachedInputTokens < 0 || t.OutputTokens < 0 ||
		t.CachedCalls < 0 || t.CachedInputTokens < 0 || t.CachedOutputTokens < 0
}

// Add adds u to t, parts by model (a map of t's own: t's earlier copies
// keep theirs).
func (t *Usage) Add(u Usage) {
	t.add(u)
	if len(u.parts()) == 0 {
		return
	}
	parts := make(ModelUsage, len(t.parts())+len(u.parts()))
	for k, v := range t.parts() {
		parts[k] = v
	}
	for k, v := range u.parts() {
		p := parts[k]
		p.add(v)
		parts[k] = p
	}
	t.Parts = &parts
}

// add adds u's counts to t's, not its parts.
func (t *Usage) add(u Usage) {
	t.Calls += u.Calls
	t.InputTokens += u.InputTokens
	t.PromptCachedInputTokens += u.PromptCachedInputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedCalls += u.CachedCalls
	t.CachedInputTokens += u.CachedInputTokens
	t.CachedOutputTokens += u.CachedOutputTokens
}

// partsAddUp reports whether the parts, if any, sum to the counts.
func (t Usage) partsAddUp() bool {
	if t.Parts == nil {
		return true
	}
	var sum Usage
	for _, p := range t.parts() {
		if p.Parts != nil {
			return false
		}
		sum.add(p)
	}
	t.Parts = nil
	return sum == t
}

// UsageCost is the cost of u: its parts, each at its model's price, or
// without parts all of it at model's.
func UsageCost(u Usage, model string, price func(model string) Price) float64 {
	if len(u.parts()) == 0 {
		return u.Cost(price(model))
	}
	v := 0.0
	for _, k := range slices.Sorted(maps.Keys(u.parts())) { // one order: the same bits every time
		v += u.parts()[k].Cost(price(k))
	}
	return v
}

// Cost is the billed tokens at price p, in US dollars: the input tokens
// the provider's prompt cache served (PromptCachedInputTokens) at
// p.PromptCachedInput(), the other input tokens at p.Input, the output
// tokens at p.Output. Without prompt-cache hits it is CostOf(p, input,
// output), to the last bit.
func (t Usage) Cost(p Price) float64 {
	pc := t.PromptCachedInputTokens
	return (float64(t.InputTokens-pc)*p.Input + float64(pc)*p.PromptCachedInput() + float64(t.OutputTokens)*p.Output) / 1e6
}

// errPromptCachedOver is a usage whose prompt-cached input tokens exceed
// its input tokens: no run writes one, and pricing it would give a
// discount on tokens never sent.
var errPromptCachedOver = errors.New("more prompt-cached input tokens than input tokens")

// ReadUsage reads the model usage of the case in dir, a case directory of
// benchmark's suite: for des its decisions.jsonl (tokens per answer) and
// timing.jsonl (which answers came from the cache); for silo its
// turns.jsonl and timing.jsonl (one line per model call each, in the same
// order). A case without them (a built-in controller, scripted agents)
// used no model. A line's prompt_cached_tokens (the provider's
// prompt-cache hits) count for billed calls only, at most its prompt
// tokens; a negative count is an error.
func ReadUsage(benchmark, dir string) (Usage, error) {
	return readUsage(benchmark, dir, false)
}

// ReadPartialUsage is ReadUsage of the logs of a run that did not finish:
// its process was killed, or it failed (a write that failed on a full
// disk leaves a line cut short). The logs' last lines, if cut short, are
// left out: the usage counts up to the last whole line.
func ReadPartialUsage(benchmark, dir string) (Usage, error) {
	return readUsage(benchmark, dir, true)
}

func readUsage(benchmark, dir string, partial bool) (Usage, error) {
	return readUsageParts(benchmark, dir, partial, nil)
}

// readUsageParts is readUsage that also sums, when byPart is not nil, the
// usage of each part of the case into it: by role for des (the audits'
// role), by agent for silo ("agent 3").
func readUsageParts(benchmark, dir string, partial bool, byPart map[string]Usage) (Usage, error) {
	if benchmark == BenchmarkSilo {
		return readSiloUsage(dir, partial, byPart)
	}
	return readDesUsage(dir, partial, byPart)
}

// addPart adds u to byPart[k], when byPart is not nil.
func addPart(byPart map[string]Usage, k string, u Usage) {
	if byPart != nil {
		p := byPart[k]
		p.Add(u)
		byPart[k] = p
	}
}

// readDesUsage pairs the answers of decisions.jsonl with the cache flags
// of timing.jsonl by step and agent.
func readDesUsage(dir string, partial bool, byRole map[string]Usage) (Usage, error) {
	var u Usage
	type key struct {
		step  int
		agent string
	}
	cached := map[key]bool{}
	err := eachLine(filepath.Join(dir, harness.FileTiming), partial, func(b []byte) error {
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
	err = eachLine(filepath.Join(dir, harness.FileDecisions), partial, func(b []byte) error {
		var a struct {
			Step               int    `json:"step"`
			AgentID            string `json:"agent_id"`
			Role               string `json:"role"`
			PromptTokens       int64  `json:"prompt_tokens"`
			CompletionTokens   int64  `json:"completion_tokens"`
			PromptCachedTokens int64  `json:"prompt_cached_tokens"`
			Calls              int64  `json:"calls"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		if a.Calls < 0 || a.PromptTokens < 0 || a.CompletionTokens < 0 || a.PromptCachedTokens < 0 {
			return errNegativeUsage
		}
		if a.Calls == 0 && a.PromptTokens == 0 && a.CompletionTokens == 0 {
			return nil // no model call, or one that failed without a reply
		}
		if a.Calls == 0 {
			a.Calls = 1 // a failed call's unusable reply: billed all the same
		}
		var line Usage
		if cached[key{a.Step, a.AgentID}] {
			line = Usage{CachedCalls: a.Calls, CachedInputTokens: a.PromptTokens, CachedOutputTokens: a.CompletionTokens}
		} else {
			line = Usage{Calls: a.Calls, InputTokens: a.PromptTokens, PromptCachedInputTokens: min(a.PromptCachedTokens, a.PromptTokens), OutputTokens: a.CompletionTokens}
		}
		u.add(line)
		addPart(byRole, a.Role, line)
		return nil
	})
	return u, err
}

// readSiloUsage pairs the turn records of turns.jsonl with the timing
// lines of timing.jsonl (which say which came from the cache) by round
// and agent: the two files of a run whose end was cut short (killed
// between rewriting one and the other) need not be in the same order.
func readSiloUsage(dir string, partial bool, byAgent map[string]Usage) (Usage, error) {
	var u Usage
	// A turn is one model call of one agent in one round.
	type key struct{ round, agent int }
	cached := map[key]bool{}
	err := eachLine(filepath.Join(dir, llmagent.FileTiming), partial, func(b []byte) error {
		var t llmagent.Timing
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		if t.Cached {
			cached[key{t.Round, t.Agent}] = true
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	err = eachLine(filepath.Join(dir, llmagent.FileTurns), partial, func(b []byte) error {
		var r struct {
			Round   int    `json:"round"`
			Agent   int    `json:"agent"`
			Model   string `json:"model"` // a mixed team's: the agent's model
			Outcome string `json:"outcome"`
			Usage   struct {
				PromptTokens       int64 `json:"prompt_tokens"`
				CompletionTokens   int64 `json:"completion_tokens"`
				PromptCachedTokens int64 `json:"prompt_cached_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if r.Usage.PromptTokens < 0 || r.Usage.CompletionTokens < 0 || r.Usage.PromptCachedTokens < 0 {
			return errNegativeUsage
		}
		if r.Outcome == llmagent.OutcomeModelError && r.Usage.PromptTokens == 0 && r.Usage.CompletionTokens == 0 {
			// The call failed without a reply (a dead endpoint, a
			// refused request): nothing was billed.
			return nil
		}
		var line Usage
		if cached[key{r.Round, r.Agent}] {
			line = Usage{CachedCalls: 1, CachedInputTokens: r.Usage.PromptTokens, CachedOutputTokens: r.Usage.CompletionTokens}
		} else {
			line = Usage{Calls: 1, InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens,
				PromptCachedInputTokens: min(r.Usage.PromptCachedTokens, r.Usage.PromptTokens)}
		}
		if r.Model != "" {
			line.Parts = &ModelUsage{r.Model: line}
		}
		u.Add(line)
		addPart(byAgent, "agent "+strconv.Itoa(r.Agent), line)
		return nil
	})
	return u, err
}

// errNegativeUsage is a log line whose calls or tokens are negative: no
// run writes one, and counting it would lower the money spent.
var errNegativeUsage = errors.New("negative calls or token counts")

// eachLine calls f with every non-empty line of the file at path; a
// missing file has none. With partial, a last line without its newline
// (a write cut short by a killed process) is left out.
func eachLine(path string, partial bool, f func([]byte) error) error {
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
		line, ended, err := readLine(r, maxLogLine)
		if len(line) > 0 && (ended || !partial) {
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

// readLine reads one line of at most limit bytes, without its newline
// ("\n" or "\r\n"); ended reports whether a newline ended it.
func readLine(r *bufio.Reader, limit int) (line []byte, ended bool, err error) {
	tooLong := func() error { return fmt.Errorf("line longer than %d bytes", limit) }
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > limit+2 {
			return nil, false, tooLong()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = bytes.TrimSuffix(line[:n-1], []byte{'\r'})
			if len(line) > limit {
				return nil, false, tooLong()
			}
			return line, true, err
		}
		if len(line) > limit {
			return nil, false, tooLong()
		}
		return line, false, err
	}
}

// CaseCost is the usage and cost of one finished model-backed case, or
// of one discarded attempt at one (Outcome set).
type CaseCost struct {
	ID, Model string
	Outcome   string // "" for a finished case, else the attempt's (AttemptFailed, …)
	Usage     Usage
	Price     Price
	CostUSD   float64
	// part numbers the rows of a mixed team's case or attempt, one per
	// model (0 for the first, and for any other row).
	part int
}

// Costs are the costs of a suite directory: its finished cases, and the
// attempts that spent model calls without giving a case's result.
type Costs struct {
	Cases []CaseCost // finished, in suite order
	// Parts split the finished cases by role or agent (FileCostParts),
	// in suite order, then by part.
	Parts []PartCost
	// Discarded are the discarded attempts (FileAttempts), in the
	// ledger's order.
	Discarded []CaseCost
	// Models are the labels of the experiment's models, in file order.
	Models    []string
	prices    map[string]Price
	benchmark string
}

// PartCost is the usage and cost of one role (des) or agent (silo) of a
// finished case: its usage without the model parts (a mixed team's agent
// has one model, named in Model).
type PartCost struct {
	ID, Model, Part string
	Usage           Usage
	CostUSD         float64
}

// pricedParts prices the parts of case id (of model label model), in part
// order: roles top down, agents by number.
func (c *Costs) pricedParts(id, model string, parts map[string]Usage) []PartCost {
	keys := slices.SortedFunc(maps.Keys(parts), comparePart)
	out := make([]PartCost, 0, len(keys))
	for _, k := range keys {
		u := parts[k]
		m := model
		if len(u.parts()) == 1 { // a mixed team's agent: its own model
			for label := range u.parts() {
				m = label
			}
		}
		cost := UsageCost(u, model, func(l string) Price { return c.prices[l] })
		u.Parts = nil
		out = append(out, PartCost{ID: id, Model: m, Part: k, Usage: u, CostUSD: cost})
	}
	return out
}

// partRank orders des roles top down; silo agents ("agent N") by number.
var partRank = map[string]int{"plant": 0, "selector": 1, "area": 2, "cell": 3}

func comparePart(a, b string) int {
	ra, oka := partRank[a]
	rb, okb := partRank[b]
	switch {
	case oka && okb:
		return ra - rb
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	na, ea := strconv.Atoi(strings.TrimPrefix(a, "agent "))
	nb, eb := strconv.Atoi(strings.TrimPrefix(b, "agent "))
	if ea == nil && eb == nil {
		return na - nb
	}
	return strings.Compare(a, b)
}

// ModelTotal sums the finished cases of model label m, priced at its
// price; "" sums every model (the cost is the sum of the models' costs).
func (c *Costs) ModelTotal(m string) (cases int, u Usage, usd float64) {
	return c.total(c.Cases, m)
}

// DiscardedTotal is ModelTotal of the discarded attempts.
func (c *Costs) DiscardedTotal(m string) (attempts int, u Usage, usd float64) {
	return c.total(c.Discarded, m)
}

func (c *Costs) total(list []CaseCost, m string) (n int, u Usage, usd float64) {
	if m == "" {
		for _, x := range c.Models {
			_, mu, v := c.total(list, x)
			u.Add(mu)
			usd += v
		}
		// A mixed team's case (or attempt) has a row per model: count it once.
		for _, x := range list {
			if slices.Contains(c.Models, x.Model) && x.part == 0 {
				n++
			}
		}
		return n, u, usd
	}
	for _, x := range list {
		if x.Model == m {
			n++
			u.Add(x.Usage)
		}
	}
	return n, u, u.Cost(c.prices[m])
}

// Spent is the money spent in all: the finished cases and the discarded
// attempts.
func (c *Costs) Spent() float64 {
	_, _, a := c.ModelTotal("")
	_, _, b := c.DiscardedTotal("")
	return a + b
}

// ReadCosts reads the usage of every model-backed case of the shard that
// has finished in dir (dir/<cases>/<id>/) and of the discarded attempts
// recorded there (Discarded), and prices them.
func (s *Suite) ReadCosts(dir string) (*Costs, error) {
	e := s.Experiment
	c := &Costs{prices: map[string]Price{}, benchmark: e.Benchmark}
	for _, m := range e.ModelList() {
		c.Models = append(c.Models, m.Label())
		c.prices[m.Label()] = m.Price
	}
	casesDir := filepath.Join(dir, CasesDir(e.Benchmark))
	modelOf := map[string]string{}
	for _, cm := range s.caseModels() {
		if cm[1] == "" {
			continue
		}
		modelOf[cm[0]] = cm[1]
		d := filepath.Join(casesDir, cm[0])
		if _, err := os.Stat(d); err != nil {
			continue
		}
		parts := map[string]Usage{}
		u, err := readUsageParts(e.Benchmark, d, false, parts)
		if err != nil {
			return nil, err
		}
		c.Cases = append(c.Cases, c.priced(CaseCost{ID: cm[0], Model: cm[1], Usage: u})...)
		c.Parts = append(c.Parts, c.pricedParts(cm[0], cm[1], parts)...)
	}
	att, err := Discarded(e.Benchmark, []string{dir}, modelOf)
	if err != nil {
		return nil, err
	}
	for _, a := range att {
		c.Discarded = append(c.Discarded, c.priced(a)...)
	}
	return c, nil
}

// priced prices x at its model's price; a mixed team's run (usage with
// parts) becomes one row per model, in the models' order, each at its
// price.
func (c *Costs) priced(x CaseCost) []CaseCost {
	if len(x.Usage.parts()) == 0 {
		x.Price = c.prices[x.Model]
		x.CostUSD = x.Usage.Cost(x.Price)
		return []CaseCost{x}
	}
	var out []CaseCost
	for _, m := range c.Models {
		if p, ok := x.Usage.parts()[m]; ok {
			out = append(out, CaseCost{ID: x.ID, Model: m, Outcome: x.Outcome, Usage: p, Price: c.prices[m], CostUSD: p.Cost(c.prices[m]), part: len(out)})
		}
	}
	return out
}

// Discarded reads the discarded attempts at the cases of modelOf (case
// id → model label) recorded in the sweep directories dirs (one run's or
// shards'): their ledgers' lines, each attempt id once however many
// directories hold it, and, for a failed case whose failed/<id>/ no
// ledger line of outcome failed names (a directory written before there
// was a ledger, see MigrateFailed), the usage in that failed/<id>/ of the
// first directory holding one (as DirProgress reads it). A ledger line of
// another case is an error: it cannot be priced.
func Discarded(benchmark string, dirs []string, modelOf map[string]string) ([]CaseCost, error) {
	var out []CaseCost
	seen, named := map[string]bool{}, map[string]bool{}
	for _, dir := range dirs {
		att, err := ReadAttempts(dir)
		if err != nil {
			return nil, err
		}
		for _, a := range att {
			m, ok := modelOf[a.CaseID]
			if !ok {
				return nil, fmt.Errorf("%s: attempt %s is at %q, not a model-backed case of this experiment", filepath.Join(dir, FileAttempts), a.ID, a.CaseID)
			}
			if a.Outcome == AttemptFailed {
				named[a.CaseID] = true
			}
			if !seen[a.ID] {
				seen[a.ID] = true
				out = append(out, CaseCost{ID: a.CaseID, Model: m, Outcome: a.Outcome, Usage: a.Usage})
			}
		}
	}
	for _, id := range unnamedFailed(dirs, modelOf, named) {
		d := find(dirs, suiterun.FailedDir, id)
		u, err := ReadPartialUsage(benchmark, d)
		if err != nil {
			return nil, err
		}
		out = append(out, CaseCost{ID: id, Model: modelOf[id], Outcome: AttemptFailed, Usage: u})
	}
	return out, nil
}

// unnamedFailed are the model-backed cases of modelOf with a failed/<id>/
// in one of dirs that named leaves out, sorted.
func unnamedFailed[V any](dirs []string, modelOf map[string]V, named map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, dir := range dirs {
		for _, id := range entries(filepath.Join(dir, suiterun.FailedDir)) {
			if _, ok := modelOf[id]; ok && !named[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// MigrateFailed writes into dir's ledger, as a failed attempt, the usage
// of every failed/<id>/ of a case of modelOf that no failed line of the
// ledger names: a directory from before there was a ledger. The next run
// of the case replaces or removes failed/<id>/; without the line its
// money would be lost then. The line's id derives from the case id, so
// migrating twice writes it once. sweep run and sweep serve call it when
// they open a directory.
func MigrateFailed[V any](benchmark, dir string, modelOf map[string]V, log *AttemptLog) error {
	att, err := ReadAttempts(dir)
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, a := range att {
		if a.Outcome == AttemptFailed {
			named[a.CaseID] = true
		}
	}
	for _, id := range unnamedFailed([]string{dir}, modelOf, named) {
		u, err := ReadPartialUsage(benchmark, filepath.Join(dir, suiterun.FailedDir, id))
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte("failed before the ledger\x00" + id))
		if err := log.Append(Attempt{ID: "pre-ledger-" + hex.EncodeToString(sum[:12]), CaseID: id, Outcome: AttemptFailed, Usage: u}); err != nil {
			return err
		}
	}
	return nil
}

// usd formats dollars with 6 decimals (a millionth of a dollar is the
// price of one token at $1 per million): the same bytes everywhere.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// price formats a price per million tokens as written in the file.
func price(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func usageCols(u Usage) []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{i(u.Calls), i(u.InputTokens), i(u.PromptCachedInputTokens), i(u.OutputTokens), i(u.CachedCalls), i(u.CachedInputTokens), i(u.CachedOutputTokens)}
}

// usageHeader names usageCols. prompt_cached_input_tokens (the part of
// input_tokens the provider's prompt cache served, priced at
// price.cached_input) is not a cached_* column: those count the replies
// the response cache replayed for free.
var usageHeader = []string{"calls", "input_tokens", "prompt_cached_input_tokens", "output_tokens", "cached_calls", "cached_input_tokens", "cached_output_tokens"}

// FileCostAttempts lists the discarded attempts, one row each (header
// only if there were none).
const FileCostAttempts = "cost_attempts.csv"

// Write writes FileCost, FileCostAttempts and FileCostSummary into dir
// and returns their paths.
func (c *Costs) Write(dir string) ([]string, error) {
	// The price of a prompt-cached input token is the one applied:
	// price.cached_input, or price.input when that is not set.
	priceCols := []string{"price_input_usd_per_mtok", "price_prompt_cached_input_usd_per_mtok", "price_output_usd_per_mtok", "cost_usd"}
	row := func(x CaseCost, lead ...string) []string {
		r := append(lead, usageCols(x.Usage)...)
		return append(r, price(x.Price.Input), price(x.Price.PromptCachedInput()), price(x.Price.Output), usd(x.CostUSD))
	}
	rows := [][]string{append(append([]string{"case_id", "model"}, usageHeader...), priceCols...)}
	for _, x := range c.Cases {
		rows = append(rows, row(x, x.ID, x.Model))
	}
	att := [][]string{append(append([]string{"case_id", "model", "outcome"}, usageHeader...), priceCols...)}
	for _, x := range c.Discarded {
		att = append(att, row(x, x.ID, x.Model, x.Outcome))
	}
	sum := [][]string{append(append([]string{"model", "cases"}, usageHeader...), "cost_usd",
		"discarded_attempts", "discarded_calls", "discarded_input_tokens", "discarded_prompt_cached_input_tokens", "discarded_output_tokens", "discarded_cost_usd", "spent_usd")}
	for _, m := range append(append([]string{}, c.Models...), "") {
		n, u, v := c.ModelTotal(m)
		dn, du, dv := c.DiscardedTotal(m)
		label := m
		if m == "" {
			label = "total"
		}
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		r := append(append([]string{label, strconv.Itoa(n)}, usageCols(u)...), usd(v))
		sum = append(sum, append(r, strconv.Itoa(dn), i(du.Calls), i(du.InputTokens), i(du.PromptCachedInputTokens), i(du.OutputTokens), usd(dv), usd(v+dv)))
	}
	partCol := "role"
	if c.benchmark == BenchmarkSilo {
		partCol = "agent"
	}
	parts := [][]string{append(append([]string{"case_id", "model", partCol}, usageHeader...), "cost_usd")}
	for _, x := range c.Parts {
		parts = append(parts, append(append([]string{x.ID, x.Model, x.Part}, usageCols(x.Usage)...), usd(x.CostUSD)))
	}
	files := []string{filepath.Join(dir, FileCost), filepath.Join(dir, FileCostAttempts), filepath.Join(dir, FileCostSummary), filepath.Join(dir, FileCostParts)}
	for i, table := range [][][]string{rows, att, sum, parts} {
		var b bytes.Buffer
		w := untrusted.NewCSVWriter(&b)
		if err := w.WriteAll(table); err != nil {
			return nil, err
		}
		if err := atomicfs.WriteFile(files[i], suiterun.TmpPrefix, b.Bytes()); err != nil {
			return nil, err
		}
	}
	return files, nil
}
