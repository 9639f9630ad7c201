package despolicy

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// Rule is a stubmodel.Server handler that answers the payload in a
// request's last message with the rule controller's choice, in the exact
// contract ({"action": n}), as the builtin policy does; a request without
// a payload gets a 400. With stubmodel.NewServer it is a stub model that
// records what it received (Server.Requests).
func Rule(req stubmodel.ChatRequest) stubmodel.Reply {
	if len(req.Messages) == 0 {
		return stubmodel.Status(400, "no messages")
	}
	v, err := llmctl.ParseView(req.Messages[len(req.Messages)-1].Content)
	if err != nil {
		return stubmodel.Status(400, err.Error())
	}
	a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
	return stubmodel.Text(fmt.Sprintf(`{"action": %d}`, a[v.AgentID]))
}
