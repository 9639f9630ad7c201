package sweep

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"
)

// RenderPlan prints what sweep plan shows of s (read from file): the
// experiment, its cases (those of s's shard), the first show case ids with
// their estimates and, per model and in total, the estimated calls, tokens
// and cost.
func (s *Suite) RenderPlan(w io.Writer, file string, est Estimate, show int) {
	sh := s.Shard
	e := s.Experiment
	name := e.Name
	if name == "" {
		name = filepath.Base(file)
	}
	fmt.Fprintf(w, "experiment %s (%s), id %s\n", name, e.Benchmark, e.ID()[:12])
	if sh == Whole() {
		fmt.Fprintf(w, "cases: %d\n", len(s.IDs))
	} else {
		fmt.Fprintf(w, "cases: %d, of which shard %s runs %d\n", len(s.IDs), sh, s.Cases())
	}
	if n := min(show, len(est.Cases)); n > 0 {
		if est.ModelCases() > 0 {
			fmt.Fprintf(w, "first %d (estimated calls, input and output tokens, cost):\n", n)
		} else {
			fmt.Fprintf(w, "first %d:\n", n)
		}
		for _, c := range est.Cases[:n] {
			if c.Model == "" {
				fmt.Fprintf(w, "  %s\n", c.ID)
				continue
			}
			fmt.Fprintf(w, "  %s  %s%d calls, %d in, %d out, $%s\n", c.ID, atMost(c.Bound), c.Calls, c.InputTokens, c.OutputTokens, usd(c.CostUSD))
		}
	}
	if est.ModelCases() == 0 {
		fmt.Fprintln(w, "model calls: none (no model-backed controller or agents)")
		return
	}
	if e.Benchmark == BenchmarkSilo {
		fmt.Fprintf(w, "model calls: %d cases with LLM agents; estimate (an upper bound on calls: N agents × the round cap, one call per agent turn; %d input and %d output tokens per call):\n",
			est.ModelCases(), SiloInputTokensPerCall, SiloOutputTokensPerCall)
	} else {
		fmt.Fprintf(w, "model calls: %d cases with a model-backed controller; estimate (one call per agent decision, as the rule controller plays the episode; 1 token per 4 bytes of prompt and reply):\n", est.ModelCases())
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  model\tcases\tcalls\tinput tokens\toutput tokens\toutput bound (max_tokens)\tprice in/out USD per 1M\testimated cost USD")
	rows := append(slices.Clone(e.ModelList()), Model{})
	for _, m := range rows {
		t := est.Total(m.Label())
		n := 0
		for _, c := range est.Cases {
			if c.Uses(m.Label()) { // a mixed team's case counts under each of its models
				n++
			}
		}
		label, prices := m.Label(), fmt.Sprintf("%s/%s", price(m.Price.Input), price(m.Price.Output))
		if label == "" {
			label, prices = "total", ""
		}
		bound := "-"
		if t.MaxOutputTokens > 0 {
			bound = strconv.FormatInt(t.MaxOutputTokens, 10)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s%d\t%d\t%d\t%s\t%s\t%s\n", label, n, atMost(t.Bound), t.Calls, t.InputTokens, t.OutputTokens, bound, prices, usd(t.CostUSD))
	}
	tw.Flush()
	if e.Benchmark == BenchmarkDes && slices.ContainsFunc(e.ModelList(), func(m Model) bool { return m.MaxTokens == 0 }) {
		fmt.Fprintf(w, "output bound of a model without max_tokens (no cap, the default): %d tokens per call, a generous allowance for a reasoning model's thinking; set max_tokens to bound it exactly\n", DesUncappedOutputTokens)
	}
	fmt.Fprintln(w, "these are estimates: real replies differ (cached replies cost nothing); sweep run writes the real cost to cost.csv and cost_summary.csv")
	for _, m := range e.ModelList() {
		if m.Price.CachedInput > 0 {
			fmt.Fprintln(w, "estimates price every input token at price.input: the prompt-cache discount (price.cached_input) applies to the real cost, to the input tokens the server reports as prompt-cached")
			break
		}
	}
}

// atMost marks an upper bound.
func atMost(bound bool) string {
	if bound {
		return "≤"
	}
	return ""
}
