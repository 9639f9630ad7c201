package telemetry

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
)

// MaxContent bounds one captured content attribute (the messages of a
// call, a tool's arguments or result), in bytes: longer text is cut at
// a rune boundary.
const MaxContent = 64 << 10

// Message is one chat message, for content capture.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is one function call a model asked for.
type ToolCall struct{ ID, Name, Arguments string }

// ChatRequest describes a model call (a chat completion).
type ChatRequest struct {
	Model       string
	ServerURL   string   // the API root; server.address and server.port come from it
	Temperature *float64 // nil: not sent (no attribute)
	MaxTokens   int
	Seed        *int64
	// Messages returns the messages sent; called only when content is
	// captured.
	Messages func() []Message
}

// ChatResult is what a model call returned.
type ChatResult struct {
	Model                     string
	FinishReason              string
	Content                   string
	ToolCalls                 []ToolCall
	InputTokens, OutputTokens int64
	CachedInputTokens         int64 // of InputTokens, from the provider's prompt cache
	Cached                    bool  // from coordbench's response cache
	Attempts                  int
}

// StartChat starts a chat span ("chat MODEL", kind client) under ctx's
// current span (an invoke_agent span, or a run span), and returns ctx
// carrying it (for AddEvent).
func StartChat(ctx context.Context, req ChatRequest) (context.Context, *Span) {
	p := From(ctx)
	if p == nil {
		return ctx, nil
	}
	kv := []KV{String(KeyOperation, OpChat), String(KeyProvider, "openai"), String(KeyRequestModel, req.Model)}
	if req.Temperature != nil {
		kv = append(kv, Float64(KeyTemperature, *req.Temperature))
	}
	if req.MaxTokens > 0 {
		kv = append(kv, Int(KeyMaxTokens, req.MaxTokens))
	}
	if req.Seed != nil {
		kv = append(kv, Int64(KeySeed, *req.Seed))
	}
	if u, err := url.Parse(req.ServerURL); err == nil && u.Hostname() != "" {
		kv = append(kv, String(KeyServerAddress, u.Hostname()))
		port := u.Port()
		if port == "" && u.Scheme == "https" {
			port = "443"
		} else if port == "" {
			port = "80"
		}
		if n, err := strconv.Atoi(port); err == nil {
			kv = append(kv, Int(KeyServerPort, n))
		}
	}
	ctx, s := p.start(ctx, "chat "+req.Model, trace.SpanKindClient, kv)
	if s.Capturing() && req.Messages != nil {
		s.Set(String(KeyInputMessages, capped(inputJSON(req.Messages()))))
	}
	return ctx, s
}

// EndChat records what the call returned (r, nil) or how it failed
// (nil or the usage of an unusable reply, class, err), and ends the span.
func (s *Span) EndChat(r *ChatResult, class string, err error) {
	if s == nil {
		return
	}
	if r != nil {
		s.Set(Int64(KeyInputTokens, r.InputTokens), Int64(KeyOutputTokens, r.OutputTokens),
			Bool(KeyCached, r.Cached), Int(KeyAttempts, r.Attempts))
		if r.CachedInputTokens > 0 {
			s.Set(Int64(KeyCachedTokens, r.CachedInputTokens))
		}
		if r.Model != "" {
			s.Set(String(KeyResponseModel, r.Model))
		}
		if r.FinishReason != "" {
			s.s.SetAttributes(attributeStrings(KeyFinishReasons, r.FinishReason))
		}
		if err == nil && s.Capturing() {
			s.Set(String(KeyOutputMessages, capped(outputJSON(r))))
		}
	}
	if err != nil {
		s.Fail(class, err.Error())
	}
	s.End()
}

// part is one message part of the conventions' message schema.
type part struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  string `json:"response,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

func parts(content string, calls []ToolCall) []part {
	ps := []part{}
	if content != "" {
		ps = append(ps, part{Type: "text", Content: content})
	}
	for _, c := range calls {
		ps = append(ps, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: arguments(c.Arguments)})
	}
	return ps
}

// arguments is a call's arguments as JSON when they are JSON (a model's
// text: untrusted), else as the text.
func arguments(s string) any {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}

func inputJSON(msgs []Message) string {
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		if m.ToolCallID != "" {
			out = append(out, message{Role: m.Role, Parts: []part{{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content}}})
			continue
		}
		out = append(out, message{Role: m.Role, Parts: parts(m.Content, m.ToolCalls)})
	}
	b, _ := json.Marshal(out) // strings and valid raw JSON only
	return string(b)
}

func outputJSON(r *ChatResult) string {
	b, _ := json.Marshal([]message{{Role: "assistant", Parts: parts(r.Content, r.ToolCalls), FinishReason: r.FinishReason}})
	return string(b)
}

// capped cuts s to MaxContent bytes at a rune boundary.
func capped(s string) string {
	if len(s) <= MaxContent {
		return s
	}
	n := MaxContent
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
