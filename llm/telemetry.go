package llm

import (
	"context"
	"errors"

	"github.com/coordbench/coordbench/telemetry"
)

// startChat starts the chat span of one call when ctx carries a tracer
// (telemetry): its request, and with content capture its messages.
func (c *Client) startChat(ctx context.Context, msgs []Message) (context.Context, *telemetry.Span) {
	if telemetry.From(ctx) == nil {
		return ctx, nil
	}
	return telemetry.StartChat(ctx, telemetry.ChatRequest{
		Model: c.cfg.Model, ServerURL: c.cfg.BaseURL, Temperature: c.cfg.Temperature, MaxTokens: c.cfg.MaxTokens, Seed: c.cfg.Seed,
		Messages: func() []telemetry.Message {
			out := make([]telemetry.Message, len(msgs))
			for i, m := range msgs {
				out[i] = telemetry.Message{Role: m.Role, Content: m.Content, ToolCalls: spanCalls(m.ToolCalls), ToolCallID: m.ToolCallID}
			}
			return out
		},
	})
}

// endChat ends the chat span with the call's outcome.
func endChat(sp *telemetry.Span, resp *Response, err error) {
	if sp == nil {
		return
	}
	if err != nil {
		var r *telemetry.ChatResult
		if le := (*Error)(nil); errors.As(err, &le) { // an unusable reply's tokens are spent all the same
			r = &telemetry.ChatResult{InputTokens: le.Usage.PromptTokens, OutputTokens: le.Usage.CompletionTokens,
				CachedInputTokens: le.Usage.PromptCachedTokens, Attempts: le.Attempts}
		}
		sp.EndChat(r, ErrorClass(err), err)
		return
	}
	sp.EndChat(&telemetry.ChatResult{Model: resp.Model, FinishReason: resp.FinishReason, Content: resp.Content,
		ToolCalls: spanCalls(resp.ToolCalls), InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens,
		CachedInputTokens: resp.Usage.PromptCachedTokens, Cached: resp.Cached, Attempts: resp.Attempts}, "", nil)
}

func spanCalls(calls []ToolCall) []telemetry.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]telemetry.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = telemetry.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}

// retryEvent records a failed attempt about to be retried on the call's
// chat span.
func retryEvent(ctx context.Context, r Retry) {
	if telemetry.From(ctx) == nil {
		return
	}
	telemetry.AddEvent(ctx, telemetry.EventRetry, telemetry.Int("coordbench.attempt", r.Attempt),
		telemetry.Int("coordbench.max_attempts", r.MaxAttempts), telemetry.Float64("coordbench.wait_ms", float64(r.Wait.Microseconds())/1000),
		telemetry.String(telemetry.KeyErrorType, ErrorClass(r.Err)), telemetry.String("coordbench.reason", r.Err.Error()))
}
