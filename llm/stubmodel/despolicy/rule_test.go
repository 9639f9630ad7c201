package despolicy_test

import (
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

// Rule answers a payload with the exact contract and refuses anything
// else with a 400, never a panic.
func TestRuleHandler(t *testing.T) {
	payload := `{"agent":"plant","role":"plant","kind":"release","legal_actions":[1,2],"decision_factors":[],"options":[{"index":0,"action":"hold"},{"index":1,"action":"release"},{"index":2,"action":"release"}],"context":{},"observation":{"power_headroom_kw":1}}`
	r := despolicy.Rule(stubmodel.ChatRequest{Messages: []stubmodel.Message{{Role: "system", Content: "s"}, {Role: "user", Content: payload}}})
	if r.Fault != stubmodel.FaultNone || (r.Content != `{"action": 1}` && r.Content != `{"action": 2}`) {
		t.Errorf("reply to a payload: %+v", r)
	}
	for _, msgs := range [][]stubmodel.Message{nil, {{Role: "user", Content: "hello"}}} {
		if r := despolicy.Rule(stubmodel.ChatRequest{Messages: msgs}); r.Fault != stubmodel.FaultStatus || r.Status != 400 {
			t.Errorf("reply to %v: %+v", msgs, r)
		}
	}
}
