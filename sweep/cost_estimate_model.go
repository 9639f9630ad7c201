package sweep

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm"
)

// ruleModel is an in-memory model for estimates: it answers every des
// decision prompt as the rule controller would, and counts calls and
// tokens as the stub model does (despolicy.Stub). One episode uses it at a
// time.
type ruleModel struct {
	calls, in, out int64
}

// Complete implements llmctl.Completer.
func (r *ruleModel) Complete(ctx context.Context, msgs []llm.Message) (*llm.Response, error) {
	prompt, user := 0, ""
	for _, m := range msgs {
		prompt += len(m.Content)
		if m.Role == llm.RoleUser {
			user = m.Content
		}
	}
	v, err := llmctl.ParseView(user)
	if err != nil {
		return nil, err
	}
	acts, _ := policy.Rule{}.Act(ctx, &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
	reply := fmt.Sprintf(`{"action": %d}`, acts[v.AgentID])
	u := llm.Usage{PromptTokens: tokens(prompt), CompletionTokens: tokens(len(reply))}
	r.calls++
	r.in += u.PromptTokens
	r.out += u.CompletionTokens
	return &llm.Response{Content: reply, Usage: u}, nil
}

// tokens counts n bytes as tokens the way the stub model does: one per 4
// bytes, rounded up.
func tokens(n int) int64 { return int64(n+3) / 4 }
