package llmctl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/llm"
)

// prompt is what one agent's call sends: the messages, and the
// framework memory that went into the user message (kept in the audit so
// that the request can be rebuilt from decisions.jsonl).
type prompt struct {
	msgs      []llm.Message
	framework *json.RawMessage // nil without framework memory
}

// newPrompt renders the messages of view v's call with framework memory fw.
func newPrompt(v *coord.View, fw *frameworkState) (prompt, error) {
	user, err := UserMessage(v, fw)
	if err != nil {
		return prompt{}, err
	}
	p := prompt{msgs: Messages(user)}
	if fw != nil {
		raw, err := json.Marshal(fw)
		if err != nil {
			return prompt{}, fmt.Errorf("encode framework state of %s: %w", v.AgentID, err)
		}
		p.framework = (*json.RawMessage)(&raw)
	}
	return p, nil
}

// Messages are the messages of one call: the system prompt, then the
// user message.
func Messages(user string) []llm.Message {
	return []llm.Message{{Role: llm.RoleSystem, Content: SystemPrompt}, {Role: llm.RoleUser, Content: user}}
}

// PromptSHA256 is the audit's prompt_sha256 of the messages of a call:
// the hex SHA-256 of their JSON array of {"role","content"} objects, as
// encoding/json writes it (docs/trace-format.md).
func PromptSHA256(msgs []llm.Message) string {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	ms := make([]message, len(msgs))
	for i, m := range msgs {
		ms[i] = message{m.Role, m.Content}
	}
	b, _ := json.Marshal(ms) // strings and a slice of them always encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Request rebuilds the messages an LLM controller sent for an audited
// decision: payload is the audit's view (decisions.jsonl "payload") and
// framework the framework memory its note recorded ("framework_state",
// nil if none). The caller compares PromptSHA256 of the result with the
// audit's prompt_sha256.
func Request(payload *coord.View, framework *json.RawMessage) ([]llm.Message, error) {
	var fw *frameworkState
	if framework != nil && len(*framework) > 0 && string(*framework) != "null" {
		fw = new(frameworkState)
		if err := json.Unmarshal(*framework, fw); err != nil {
			return nil, fmt.Errorf("framework_state: %w", err)
		}
	}
	user, err := UserMessage(payload, fw)
	if err != nil {
		return nil, err
	}
	return Messages(user), nil
}
