package sweep

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/suite"
)

// Tokens per model call of a silo LLM agent, by estimate. They are a
// documented figure, not a measurement of each task: a turn's prompt holds
// the system prompt, the task prompt with the agent's shard and its
// history so far, so it grows over a run; 3,000 input tokens is a middle
// value for the published tasks with the default context budget, and 300
// output tokens a reply with a few tool calls. A case whose agents' first
// prompts are longer on average is estimated at that average instead
// (siloFirstPrompt). Output is bounded by the model's max_tokens when set.
const (
	SiloInputTokensPerCall  = 3000
	SiloOutputTokensPerCall = 300
)

// DesUncappedOutputTokens is the output a des model call is assumed to
// take at most when its model entry sets no max_tokens (the default, as
// the des commands' --llm-max-tokens: no cap). It is a documented figure,
// not a measurement: the contract's reply is a few tokens, but a reasoning
// model counts its thinking as output, and 4,096 tokens is a generous
// allowance for one decision of this benchmark. The output bound is then
// calls × this figure; set max_tokens to bound it exactly.
const DesUncappedOutputTokens = 4096

// CaseEstimate is what one case will take from its model, by estimate:
// nothing here calls a model.
type CaseEstimate struct {
	ID string
	// Model is the label of the case's model ("" for a case without one:
	// built-in controllers, scripted agents).
	Model string
	// Calls, InputTokens and OutputTokens are the estimate. For des,
	// the episode is played with the case's LLM controller and framework
	// against an in-memory model that answers as the rule controller
	// does; tokens are counted as the stub model counts them, one per 4
	// bytes of prompt (every message) and of reply: exact for the stub,
	// the usual rule of thumb for English and JSON with real tokenizers.
	// For silo, calls are the bound N agents × the round cap (one model
	// call per agent turn) and tokens per call SiloInputTokensPerCall and
	// SiloOutputTokensPerCall.
	Calls, InputTokens, OutputTokens int64
	// Bound: Calls is an upper bound (silo), not an estimate.
	Bound bool
	// MaxOutputTokens bounds OutputTokens where the model's max_tokens is
	// known (Calls × max_tokens), or for des, where it is not,
	// Calls × DesUncappedOutputTokens; 0 if unknown (silo without
	// max_tokens).
	MaxOutputTokens int64
	// CostUSD is the tokens at the model's price.
	CostUSD float64
	// Parts are a mixed team's case split by model, each with its agents'
	// share of the calls and tokens at its own price; the case's Model is
	// then the team's label and its figures their sums.
	Parts []CaseEstimate
}

// Estimate is the estimate of a shard's cases.
type Estimate struct {
	Cases []CaseEstimate // in suite order, every case of the shard
}

// ModelCases counts the cases with a model.
func (e Estimate) ModelCases() int {
	n := 0
	for _, c := range e.Cases {
		if c.Model != "" {
			n++
		}
	}
	return n
}

// Total sums the estimates of the cases with model label m ("" for all),
// a mixed team's case by its parts.
func (e Estimate) Total(m string) CaseEstimate {
	var t CaseEstimate
	for _, c := range e.Cases {
		for _, p := range c.modelParts() {
			if p.Model == "" || (m != "" && p.Model != m) {
				continue
			}
			t.Calls += p.Calls
			t.InputTokens += p.InputTokens
			t.OutputTokens += p.OutputTokens
			t.MaxOutputTokens += p.MaxOutputTokens
			t.CostUSD += p.CostUSD
			t.Bound = t.Bound || p.Bound
		}
	}
	t.Model = m
	return t
}

// modelParts are the estimates of c by model: its parts, or c itself.
func (c CaseEstimate) modelParts() []CaseEstimate {
	if len(c.Parts) > 0 {
		return c.Parts
	}
	return []CaseEstimate{c}
}

// Uses reports whether the case calls model label m: its model or one
// of its parts' ("" for any model).
func (c CaseEstimate) Uses(m string) bool {
	for _, p := range c.modelParts() {
		if p.Model != "" && (m == "" || p.Model == m) {
			return true
		}
	}
	return false
}

// byID maps case ids to their estimates.
func (e Estimate) byID() map[string]CaseEstimate {
	m := make(map[string]CaseEstimate, len(e.Cases))
	for _, c := range e.Cases {
		m[c.ID] = c
	}
	return m
}

// CostOf is the cost in US dollars of tokens at price p (per million).
// Every input token is priced at p.Input: estimates cannot know which
// input tokens a provider's prompt cache will serve, so they leave out
// its discount (p.CachedInput) and err high; Usage.Cost applies it to the
// real usage.
func CostOf(p Price, input, output int64) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output) / 1e6
}

// modelOf maps model labels to the experiment's model entries.
func (e *Experiment) modelOf() map[string]Model {
	m := map[string]Model{}
	for _, x := range e.ModelList() {
		m[x.Label()] = x
	}
	return m
}

// caseModels are the id and model label ("" for none) of every case of
// the shard, in suite order; a mixed team's case has the team's label.
func (s *Suite) caseModels() [][2]string {
	var out [][2]string
	if s.Des != nil {
		for _, c := range s.Des.Cases {
			out = append(out, [2]string{c.ID, c.Model})
		}
		return out
	}
	for _, c := range s.Silo.Cases {
		label := ""
		switch {
		case c.Players.Kind == play.AgentLLM && c.Players.LLM != nil:
			label = c.Players.LLM.ModelLabel()
		case c.Players.Kind == play.AgentTeam && c.Players.Team != nil:
			label = c.Players.Label() // its usage is priced by its parts (Usage.Parts)
		}
		out = append(out, [2]string{c.ID, label})
	}
	return out
}

// Estimate estimates the model calls, tokens and cost of the shard's
// cases (see CaseEstimate). For des it plays each distinct instance ×
// paradigm × seed × framework of a model-backed case once, offline and in
// memory.
func (s *Suite) Estimate(ctx context.Context) (Estimate, error) {
	models := s.Experiment.modelOf()
	var est Estimate
	if s.Silo != nil {
		for _, c := range s.Silo.Cases {
			ce := CaseEstimate{ID: c.ID}
			switch {
			case c.Players.Kind == play.AgentLLM && c.Players.LLM != nil:
				ce = siloEstimate(c, models[c.Players.LLM.ModelLabel()], c.N, siloFirstPrompt(c, c.Players.LLM.Config))
			case c.Players.Kind == play.AgentTeam && c.Players.Team != nil:
				tm := c.Players.Team
				counts, err := tm.Counts(c.N)
				if err != nil {
					return est, err
				}
				ce.Model = c.Players.Label()
				first := siloFirstPrompt(c, tm.Members[0].LLM.Config) // the members share their agents' configuration
				for i, m := range tm.Members {
					p := siloEstimate(c, models[m.LLM.ModelLabel()], counts[i], first)
					ce.Parts = append(ce.Parts, p)
					ce.Calls += p.Calls
					ce.InputTokens += p.InputTokens
					ce.OutputTokens += p.OutputTokens
					ce.MaxOutputTokens += p.MaxOutputTokens
					ce.CostUSD += p.CostUSD
					ce.Bound = true
				}
			}
			est.Cases = append(est.Cases, ce)
		}
		return est, nil
	}
	type played struct{ calls, in, out int64 }
	memo := map[string]played{}
	for _, c := range s.Des.Cases {
		ce := CaseEstimate{ID: c.ID}
		if c.Model != "" {
			m := models[c.Model]
			ce.Model = c.Model
			fw := c.Framework
			if fw == "" {
				fw = llmctl.Frameworks()[0]
			}
			key := fmt.Sprintf("%s\x00%s\x00%d\x00%s", c.Instance.Token, c.Paradigm.ID, c.Seed, fw)
			p, ok := memo[key]
			if !ok {
				counter := &ruleModel{}
				ctrl, err := llmctl.New(fw, map[string]llmctl.Model{"": {Name: "estimate", Client: counter}})
				if err != nil {
					return est, err
				}
				ep := harness.Episode{Plant: factory.Compile(c.Instance.Inst), Seed: c.Seed, Mode: c.Paradigm, Controller: ctrl}
				harness.Run(ctx, ep)
				p = played{counter.calls, counter.in, counter.out}
				memo[key] = p
			}
			ce.Calls, ce.InputTokens, ce.OutputTokens = p.calls, p.in, p.out
			maxTokens := m.MaxTokens
			if maxTokens == 0 {
				maxTokens = DesUncappedOutputTokens
			}
			ce.MaxOutputTokens = ce.Calls * int64(maxTokens)
			ce.CostUSD = CostOf(m.Price, ce.InputTokens, ce.OutputTokens)
		}
		est.Cases = append(est.Cases, ce)
	}
	return est, nil
}

// siloEstimate is the estimate of agents of case c's agents playing
// model m, whose first prompts hold first tokens on average.
func siloEstimate(c suite.Case, m Model, agents int, first int64) CaseEstimate {
	ce := CaseEstimate{ID: c.ID, Model: m.Label()}
	ce.Calls, ce.Bound = int64(agents)*int64(c.Limits.MaxRounds), true
	perCall := max(int64(SiloInputTokensPerCall), first)
	ce.InputTokens, ce.OutputTokens = ce.Calls*perCall, ce.Calls*SiloOutputTokensPerCall
	if m.MaxTokens > 0 {
		ce.MaxOutputTokens = ce.Calls * int64(m.MaxTokens)
		ce.OutputTokens = min(ce.OutputTokens, ce.MaxOutputTokens)
	}
	ce.CostUSD = CostOf(m.Price, ce.InputTokens, ce.OutputTokens)
	return ce
}

// siloFirstPrompt is the mean size, in tokens (one per 4 bytes), of the
// first prompt of case c's LLM agents, configured as cfg: system prompt,
// task prompt and shard; 0 if the instance cannot be built.
func siloFirstPrompt(c suite.Case, cfg llmagent.Config) int64 {
	in, err := suite.InstanceOf(c)
	if err != nil || in.N == 0 {
		return 0
	}
	var total int64
	for id := range in.N {
		total += tokens(len(llmagent.SystemPrompt(c.Protocol, id, in.N, cfg.Native, cfg.Scaffold)) +
			len(in.Prompt(id, !cfg.Scaffold.NoTopologyHint)))
	}
	return total / int64(in.N)
}
