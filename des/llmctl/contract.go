package llmctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
)

// SystemPrompt fixes the output contract. Only the payload values change
// between calls, so prompts are comparable across models and frameworks.
const SystemPrompt = "You are one agent of a factory-scheduling benchmark, deciding for your role only. " +
	"Read the JSON payload: your role, the decision kind, your local observation, the protocol context " +
	"(work item, contract, feedback, recent events, working memory), the options and the decision factors. " +
	"Pick exactly one index from legal_actions. " +
	"Reply with exactly one JSON object and nothing else: {\"action\": <index>}. " +
	"No explanation, no markdown, no code fences."

// agentPayload is the agent-local payload sent to the model: the view
// without the redundant action mask, plus the framework's own state.
type agentPayload struct {
	Agent           string            `json:"agent"`
	Role            string            `json:"role"`
	Kind            string            `json:"kind"`
	LegalActions    []int             `json:"legal_actions"`
	DecisionFactors []string          `json:"decision_factors"`
	Options         []coord.Option    `json:"options"`
	Context         coord.Context     `json:"context"`
	Observation     coord.Observation `json:"observation"`
	Framework       *frameworkState   `json:"framework,omitempty"`
}

// frameworkState is controller-side memory shown to the model (never
// benchmark state): graph summaries or relay history and handoffs.
type frameworkState struct {
	Name    string   `json:"name"`
	Shared  []string `json:"shared_state,omitempty"`
	History []string `json:"history,omitempty"`
	Handoff []string `json:"handoff,omitempty"`
}

// UserMessage renders the agent-local payload of view v.
func UserMessage(v *coord.View, fw *frameworkState) (string, error) {
	p := agentPayload{Agent: v.AgentID, Role: v.Role, Kind: v.Kind, LegalActions: v.LegalActions,
		DecisionFactors: v.DecisionFactors, Options: v.Options, Context: v.Context, Observation: v.Observation, Framework: fw}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode payload of %s: %w", v.AgentID, err)
	}
	return string(b), nil
}

// ParseView reads back the view of a user message (used by the stub model).
func ParseView(msg string) (*coord.View, error) {
	var p agentPayload
	if err := json.Unmarshal([]byte(msg), &p); err != nil {
		return nil, fmt.Errorf("not a coordbench payload: %w", err)
	}
	if p.Agent == "" || p.Kind == "" || len(p.Options) == 0 {
		return nil, fmt.Errorf("not a coordbench payload: agent, kind and options are required")
	}
	v := &coord.View{AgentID: p.Agent, Role: p.Role, Kind: p.Kind, LegalActions: p.LegalActions,
		DecisionFactors: p.DecisionFactors, Options: p.Options, Context: p.Context, Observation: p.Observation}
	v.ActionMask = make([]bool, len(v.Options))
	for _, i := range v.LegalActions {
		if i >= 0 && i < len(v.ActionMask) {
			v.ActionMask[i] = true
		}
	}
	return v, nil
}

// ParseReply accepts exactly the contract: one JSON object whose only key
// is "action", an integer in legal. Anything else is an error saying what
// was wrong; the caller keeps the raw reply for the audit.
func ParseReply(raw string, legal []int) (int, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return 0, fmt.Errorf("empty reply")
	case strings.HasPrefix(s, "```"):
		return 0, fmt.Errorf("code fence instead of a bare JSON object")
	case !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}"):
		return 0, fmt.Errorf("not a single JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var r struct {
		Action json.RawMessage `json:"action"`
	}
	if err := dec.Decode(&r); err != nil {
		return 0, fmt.Errorf("not the contract object: %v", err)
	}
	if dec.More() || dec.InputOffset() != int64(len(s)) {
		return 0, fmt.Errorf("more than one JSON value")
	}
	a := string(r.Action)
	if a == "" || a == "null" {
		return 0, fmt.Errorf(`missing "action"`)
	}
	if !strings.ContainsAny(a[:1], "-0123456789") {
		return 0, fmt.Errorf("not the contract object: action %s is not a number", clip(a))
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("action %s is not an integer", clip(a))
	}
	for _, i := range legal {
		if int64(i) == n {
			return i, nil
		}
	}
	return 0, &IllegalIndexError{Lit: strconv.FormatInt(n, 10), Index: n, Integer: true}
}

// clip shortens a reply fragment for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
