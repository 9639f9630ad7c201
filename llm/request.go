package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/openai/openai-go/v3"
)

// Request is one call: the messages, and what the call offers or asks of
// the model beyond them. Complete and CompleteWithTools are CompleteRequest
// with only Messages (and Tools) set.
type Request struct {
	Messages []Message
	Tools    []Tool
	// ToolChoice, if set, is sent as "tool_choice": the JSON string
	// "auto", "none" or "required", or {"type":"function","function":
	// {"name":NAME}} naming one of Tools. It needs Tools.
	ToolChoice json.RawMessage
	// ResponseFormat, if set, is sent as "response_format": {"type":
	// "text"}, {"type":"json_object"} or {"type":"json_schema",
	// "json_schema":{"name":NAME,"schema":{…},…}}.
	ResponseFormat json.RawMessage
}

// maxRequestOption bounds the JSON of ToolChoice and of ResponseFormat.
const maxRequestOption = 256 << 10

// CompleteRequest is Complete with everything of r sent: tools, tool
// choice and response format. Each is part of the cache key; a request
// without ToolChoice and ResponseFormat has the key it had before they
// existed.
func (c *Client) CompleteRequest(ctx context.Context, r Request) (*Response, error) {
	c.ep.stats.calls.Add(1)
	ctx, sp := c.startChat(ctx, r.Messages)
	resp, err := c.complete(ctx, r)
	endChat(sp, resp, err)
	if err != nil {
		c.ep.stats.failures.Add(1)
		return nil, err
	}
	return resp, nil
}

// normalizeOptions checks ToolChoice and ResponseFormat and returns them
// compacted (nil when unset).
func (r Request) normalizeOptions() (choice, format json.RawMessage, err error) {
	compact := func(what string, raw json.RawMessage) (json.RawMessage, error) {
		if len(raw) > maxRequestOption {
			return nil, fmt.Errorf("llm: %s: longer than %d bytes", what, maxRequestOption)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("llm: %s is not JSON: %v", what, err)
		}
		return b.Bytes(), nil
	}
	if len(r.ToolChoice) > 0 {
		if choice, err = compact("tool choice", r.ToolChoice); err != nil {
			return nil, nil, err
		}
		if err := checkToolChoice(choice, r.Tools); err != nil {
			return nil, nil, err
		}
	}
	if len(r.ResponseFormat) > 0 {
		if format, err = compact("response format", r.ResponseFormat); err != nil {
			return nil, nil, err
		}
		if err := checkResponseFormat(format); err != nil {
			return nil, nil, err
		}
	}
	return choice, format, nil
}

func checkToolChoice(choice json.RawMessage, tools []Tool) error {
	if len(tools) == 0 {
		return fmt.Errorf("llm: a tool choice needs tools")
	}
	var s string
	if json.Unmarshal(choice, &s) == nil {
		if !slices.Contains([]string{"auto", "none", "required"}, s) {
			return fmt.Errorf("llm: tool choice %q: want auto, none, required or a function", s)
		}
		return nil
	}
	var f struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(choice, &f) != nil || f.Type != "function" {
		return fmt.Errorf(`llm: tool choice: want "auto", "none", "required" or {"type":"function","function":{"name":...}}`)
	}
	if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == f.Function.Name }) {
		return fmt.Errorf("llm: tool choice names %q, which is not among the tools", f.Function.Name)
	}
	return nil
}

func checkResponseFormat(format json.RawMessage) error {
	var f struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(format, &f); err != nil {
		return fmt.Errorf("llm: response format: want a JSON object with a type (%v)", err)
	}
	switch f.Type {
	case "text", "json_object":
		return nil
	case "json_schema":
		if f.JSONSchema == nil || f.JSONSchema.Name == "" {
			return fmt.Errorf("llm: response format json_schema: needs json_schema.name")
		}
		var obj map[string]json.RawMessage
		if len(f.JSONSchema.Schema) > 0 && json.Unmarshal(f.JSONSchema.Schema, &obj) != nil {
			return fmt.Errorf("llm: response format json_schema: schema must be a JSON object")
		}
		return nil
	}
	return fmt.Errorf("llm: response format type %q: want text, json_object or json_schema", f.Type)
}

// setRequestOptions puts kr's tool choice and response format into the
// request body verbatim.
func setRequestOptions(params *openai.ChatCompletionNewParams, kr keyRequest) {
	extra := map[string]any{}
	if len(kr.ToolChoice) > 0 {
		extra["tool_choice"] = kr.ToolChoice
	}
	if len(kr.ResponseFormat) > 0 {
		extra["response_format"] = kr.ResponseFormat
	}
	if len(extra) > 0 {
		params.SetExtraFields(extra)
	}
}
