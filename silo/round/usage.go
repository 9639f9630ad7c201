package round

import "errors"

// Usage is what a model-backed agent spent over a run. Agents that call a
// model implement UsageReporter; Run then reports each agent's Usage in
// its AgentResult, their sum in Result.Usage, and the token cost C in both
// published forms (Result.C and Result.CCode). Scripted agents report
// nothing and their results carry no usage and no C.
type Usage struct {
	ModelCalls   int   `json:"model_calls"`   // model requests made (one per turn taken)
	InputTokens  int64 `json:"input_tokens"`  // prompt tokens, as the server reported them
	OutputTokens int64 `json:"output_tokens"` // completion tokens, as the server reported them
	// WastedCalls are replies that held no valid tool call: the turn was
	// spent and the agent got the format feedback instead.
	WastedCalls int `json:"wasted_calls"`
	// ModelErrors are calls that failed after the model layer's retries
	// (the turn was spent without a reply).
	ModelErrors int `json:"model_errors"`
	// MaxContextTokens is the largest prompt (input tokens) of one call,
	// the seed's appendix-D context-window figure.
	MaxContextTokens int64 `json:"max_context_tokens"`
	// TruncatedTurns counts earlier turns dropped from the context to fit
	// the context budget (0 with full history).
	TruncatedTurns int `json:"truncated_turns"`
}

// Add adds o to u; MaxContextTokens takes the larger of the two.
func (u *Usage) Add(o Usage) {
	u.ModelCalls += o.ModelCalls
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.WastedCalls += o.WastedCalls
	u.ModelErrors += o.ModelErrors
	u.MaxContextTokens = max(u.MaxContextTokens, o.MaxContextTokens)
	u.TruncatedTurns += o.TruncatedTurns
}

// UsageReporter is implemented by agents that spend model tokens. Run
// calls Usage once, after the last round.
type UsageReporter interface {
	Usage() Usage
}

// ErrAbort, wrapped in an agent's Turn error, ends the whole run with that
// error instead of recording the agent as failed: a run that cannot be
// played as configured (a response-cache miss in replay mode, say) must
// fail rather than be scored as if the agent had given up.
var ErrAbort = errors.New("run aborted")

// cost fills the token cost C of a run whose agents report usage:
//
//	C      = output tokens / MaxRounds            (the paper's definition)
//	C_code = (input + output tokens) / rounds run (the published code's)
//
// C_code is 0 when no round ran.
func cost(res *Result, agents []Agent) {
	var total Usage
	reported := false
	for i, a := range agents {
		ur, ok := a.(UsageReporter)
		if !ok {
			continue
		}
		u := ur.Usage()
		res.Agents[i].Usage = &u
		total.Add(u)
		reported = true
	}
	if !reported {
		return
	}
	res.Usage = &total
	costOf(res, total)
}

// costOf sets C and C_code of a run from its agents' total usage.
func costOf(res *Result, total Usage) {
	c := float64(total.OutputTokens) / float64(res.MaxRounds)
	cc := 0.0
	if res.Rounds > 0 {
		cc = float64(total.InputTokens+total.OutputTokens) / float64(res.Rounds)
	}
	res.C, res.CCode = &c, &cc
}
