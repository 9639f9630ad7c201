package inspect

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON writes the message as the schema's ChatMessage of its role:
// every property of that role, null where unknown.
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	v := map[string]any{"role": m.Role, "content": m.Content, "source": nil}
	switch m.Role {
	case "assistant":
		if len(m.ToolCalls) > 0 {
			v["tool_calls"] = m.ToolCalls
		} else {
			v["tool_calls"] = nil
		}
	case "tool":
		v["tool_call_id"], v["function"], v["error"] = nullable(m.ToolCallID), nullable(m.Function), nil
	}
	// As Encode does: no HTML escapes (a reply reads as it was).
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// nullable is s, or null for "".
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// chat converts a transcript message.
func chat(m Message) ChatMessage {
	c := ChatMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Function: m.Function}
	for _, tc := range m.ToolCalls {
		ct := ChatToolCall{ID: tc.ID, Function: tc.Function, Arguments: tc.Arguments, Type: "function"}
		if tc.ParseError != "" {
			pe := tc.ParseError
			ct.ParseError = &pe
		}
		c.ToolCalls = append(c.ToolCalls, ct)
	}
	return c
}
