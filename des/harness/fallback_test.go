package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// halfGarbage answers every other decision step with nothing (as a
// runner whose reply is malformed JSON half the time), the others as
// the rule does.
type halfGarbage struct{ rule policy.Rule }

func (halfGarbage) Name() string         { return "half-garbage" }
func (halfGarbage) Source() coord.Source { return coord.SourceExternal }
func (h halfGarbage) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	if d.Step%2 == 1 {
		return nil, nil
	}
	return h.rule.Act(ctx, d)
}

// scheduleMetrics are the metrics the fallback alone must not win on
// against the rule: the effectiveness and robustness families, each with
// its direction (true: higher is better).
var scheduleMetrics = []struct {
	key    string
	higher bool
	get    func(*Metrics) float64
}{
	{"G_mk", false, func(m *Metrics) float64 { return m.GMk }},
	{"G_td", false, func(m *Metrics) float64 { return m.GTd }},
	{"G_cj", true, func(m *Metrics) float64 { return float64(m.GCj) }},
	{"G_tr", false, func(m *Metrics) float64 { return float64(m.GTr) }},
	{"G_dj", false, func(m *Metrics) float64 { return float64(m.GDj) }},
	{"G_ut", false, func(m *Metrics) float64 { return m.GUt }},
	{"G_do", false, func(m *Metrics) float64 { return float64(m.GDo) }},
}

// TestFallbackAloneIsWeak: what the harness does on an agent's behalf
// must never out-schedule the agents. A controller that answers nothing
// (every decision is the contract-safe fallback) is no better than the
// rule on any effectiveness or robustness metric, in the mean over the
// seeds, on every A5C12 instance under every built-in paradigm. It logs
// the table of docs/metrics.md ("The fallback alone"), with greedy,
// random and a runner whose replies are unusable half the time:
//
//	go test ./des/harness -run TestFallbackAloneIsWeak -v
func TestFallbackAloneIsWeak(t *testing.T) {
	const seeds = 3
	refuse := funcController(func(*coord.Decision) (map[string]int, error) { return nil, nil })
	names := []string{"rule", "greedy", "random", "fallback alone", "half unusable"}
	var table strings.Builder
	fmt.Fprintf(&table, "| instance | paradigm | controller | G_mk | G_td | G_cj | G_tr | G_dj | G_ut | G_do | G_fb |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, ref := range []string{"A5C12-1", "A5C12-2", "A5C12-3"} {
		p := plantOf(t, ref)
		for _, m := range coord.Builtins() {
			mean := map[string][]float64{}
			for _, name := range names {
				sum := make([]float64, len(scheduleMetrics)+1)
				for _, seed := range p.Inst.Seeds.Test[:seeds] {
					var c coord.Controller
					switch name {
					case "fallback alone":
						c = refuse
					case "half unusable":
						c = halfGarbage{}
					default:
						c = builtin(t, name)(seed)
					}
					mt := play(t, p, m, seed, name, c)
					for i, k := range scheduleMetrics {
						sum[i] += k.get(&mt) / seeds
					}
					sum[len(scheduleMetrics)] += float64(mt.GFb) / seeds
				}
				mean[name] = sum
				fmt.Fprintf(&table, "| %s | %s | %s |", ref, m.ID, name)
				for _, x := range sum {
					fmt.Fprintf(&table, " %s |", fmtMean(x))
				}
				table.WriteByte('\n')
			}
			for i, k := range scheduleMetrics {
				fb, rule := mean["fallback alone"][i], mean["rule"][i]
				if k.higher && fb > rule || !k.higher && fb < rule {
					t.Errorf("%s %s: the fallback alone beats the rule on %s: %s against %s", ref, m.ID, k.key, fmtMean(fb), fmtMean(rule))
				}
			}
		}
	}
	t.Logf("means over test seeds: the first %d of each instance:\n%s", seeds, table.String())
}

// play runs one episode of controller c (called name in messages) and
// returns its metrics.
func play(t *testing.T, p *factory.Plant, m coord.AuthorityMode, seed uint64, name string, c coord.Controller) Metrics {
	t.Helper()
	r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: m, Controller: c})
	if r.Err != nil {
		t.Fatalf("%s %s %s seed %d: %v", p.Inst.Name, m.ID, name, seed, r.Err)
	}
	return r.Metrics
}

// fmtMean writes a mean with no decimals, or two if it is below 10 and
// not whole.
func fmtMean(x float64) string {
	if x < 10 && x != float64(int(x)) {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.0f", x)
}
