package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// KV is one span attribute.
type KV = attribute.KeyValue

// Attribute constructors, so that callers need not import OpenTelemetry.
func String(k, v string) KV          { return attribute.String(k, v) }
func Int(k string, v int) KV         { return attribute.Int(k, v) }
func Int64(k string, v int64) KV     { return attribute.Int64(k, v) }
func Bool(k string, v bool) KV       { return attribute.Bool(k, v) }
func Float64(k string, v float64) KV { return attribute.Float64(k, v) }

// Attribute keys of the GenAI semantic conventions (v1.41.0).
const (
	KeyOperation      = "gen_ai.operation.name"
	KeyProvider       = "gen_ai.provider.name"
	KeyRequestModel   = "gen_ai.request.model"
	KeyResponseModel  = "gen_ai.response.model"
	KeyTemperature    = "gen_ai.request.temperature"
	KeyMaxTokens      = "gen_ai.request.max_tokens"
	KeySeed           = "gen_ai.request.seed"
	KeyFinishReasons  = "gen_ai.response.finish_reasons"
	KeyInputTokens    = "gen_ai.usage.input_tokens"
	KeyOutputTokens   = "gen_ai.usage.output_tokens"
	KeyAgentID        = "gen_ai.agent.id"
	KeyAgentName      = "gen_ai.agent.name"
	KeyConversationID = "gen_ai.conversation.id"
	KeyToolName       = "gen_ai.tool.name"
	KeyToolCallID     = "gen_ai.tool.call.id"
	KeyToolType       = "gen_ai.tool.type"
	KeyToolArguments  = "gen_ai.tool.call.arguments" // opt-in (CaptureContent)
	KeyToolResult     = "gen_ai.tool.call.result"    // opt-in (CaptureContent)
	KeyInputMessages  = "gen_ai.input.messages"      // opt-in (CaptureContent)
	KeyOutputMessages = "gen_ai.output.messages"     // opt-in (CaptureContent)
	KeyErrorType      = "error.type"
	KeyServerAddress  = "server.address"
	KeyServerPort     = "server.port"
)

// Operation names (gen_ai.operation.name).
const (
	OpChat        = "chat"
	OpInvokeAgent = "invoke_agent"
	OpExecuteTool = "execute_tool"
)

// coordbench's own attribute keys.
const (
	KeyBenchmark    = "coordbench.benchmark" // des or silo
	KeyCaseID       = "coordbench.case_id"
	KeyInstance     = "coordbench.instance"
	KeyParadigm     = "coordbench.paradigm"
	KeyProtocol     = "coordbench.protocol"
	KeyTask         = "coordbench.task"
	KeySeedRun      = "coordbench.seed"
	KeyController   = "coordbench.controller"
	KeyRole         = "coordbench.role"
	KeyStep         = "coordbench.step"
	KeyRound        = "coordbench.round"
	KeySource       = "coordbench.source" // builtin, llm, external or fallback
	KeyCached       = "coordbench.cached" // answered from the response cache
	KeyAttempts     = "coordbench.attempts"
	KeyCachedTokens = "coordbench.usage.prompt_cached_tokens"
	KeyCalls        = "coordbench.llm_calls"
	KeyStatus       = "coordbench.status"
)

// Event names.
const (
	EventRetry    = "coordbench.retry"    // a failed attempt of a model call, about to be retried
	EventFallback = "coordbench.fallback" // the interpreter's fallback replaced an agent's answer
)

type providerKey struct{}
type attrsKey struct{}

// Context returns ctx carrying p: the spans started from it (and from
// contexts derived from it) are p's. A nil p returns ctx.
func (p *Provider) Context(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, providerKey{}, p)
}

// From returns the provider ctx carries, or nil (tracing off).
func From(ctx context.Context) *Provider {
	p, _ := ctx.Value(providerKey{}).(*Provider)
	return p
}

// WithAttrs returns ctx whose next run span (StartRun) also carries kv:
// what a suite knows of a case (its id) and the run does not. Without a
// provider in ctx it returns ctx.
func WithAttrs(ctx context.Context, kv ...KV) context.Context {
	if From(ctx) == nil {
		return ctx
	}
	prev, _ := ctx.Value(attrsKey{}).([]KV)
	return context.WithValue(ctx, attrsKey{}, append(prev[:len(prev):len(prev)], kv...))
}

// Reparent returns ctx (keeping its deadline and cancellation) with the
// provider and the current span of from: spans started from it are
// children of from's span. Nil from returns ctx.
func Reparent(ctx, from context.Context) context.Context {
	if from == nil {
		return ctx
	}
	p := From(from)
	if p == nil {
		return ctx
	}
	return trace.ContextWithSpan(p.Context(ctx), trace.SpanFromContext(from))
}

// Span is one started span. A nil *Span (tracing off) does nothing.
type Span struct {
	s trace.Span
	p *Provider
}

// start starts a span of p under ctx's current span.
func (p *Provider) start(ctx context.Context, name string, kind trace.SpanKind, kv []KV) (context.Context, *Span) {
	ctx, s := p.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(kv...))
	return ctx, &Span{s: s, p: p}
}

// StartRun starts the span of one run (an episode, a silo run), with
// the attributes of WithAttrs and kv, and returns ctx carrying it.
func StartRun(ctx context.Context, name string, kv ...KV) (context.Context, *Span) {
	p := From(ctx)
	if p == nil {
		return ctx, nil
	}
	if prev, _ := ctx.Value(attrsKey{}).([]KV); len(prev) > 0 {
		kv = append(prev[:len(prev):len(prev)], kv...)
	}
	return p.start(ctx, name, trace.SpanKindInternal, kv)
}

// StartAgent starts an invoke_agent span ("invoke_agent NAME") for one
// agent's decision or turn, and returns ctx carrying it: the model calls
// made with that ctx are its children.
func StartAgent(ctx context.Context, id, name string, kv ...KV) (context.Context, *Span) {
	p := From(ctx)
	if p == nil {
		return ctx, nil
	}
	return p.start(ctx, "invoke_agent "+name, trace.SpanKindInternal, agentAttrs(id, name, kv))
}

func agentAttrs(id, name string, kv []KV) []KV {
	return append([]KV{String(KeyOperation, OpInvokeAgent), String(KeyAgentID, id), String(KeyAgentName, name)}, kv...)
}

// StartToolAt starts an execute_tool span ("execute_tool NAME") for one
// tool call, begun at start (zero: now); callID may be empty.
func StartToolAt(ctx context.Context, start time.Time, name, callID string, kv ...KV) *Span {
	p := From(ctx)
	if p == nil {
		return nil
	}
	kv = append([]KV{String(KeyOperation, OpExecuteTool), String(KeyToolName, name), String(KeyToolType, "function")}, kv...)
	if callID != "" {
		kv = append(kv, String(KeyToolCallID, callID))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(kv...)}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	_, s := p.tracer.Start(ctx, "execute_tool "+name, opts...)
	return &Span{s: s, p: p}
}

// Capturing reports whether content (prompts, replies, tool arguments
// and results) is to be recorded on this span.
func (s *Span) Capturing() bool { return s != nil && s.p.capture }

// Set adds attributes.
func (s *Span) Set(kv ...KV) {
	if s != nil {
		s.s.SetAttributes(kv...)
	}
}

// Event adds an event.
func (s *Span) Event(name string, kv ...KV) {
	if s != nil {
		s.s.AddEvent(name, trace.WithAttributes(kv...))
	}
}

// Fail marks the span failed: error.type is class (a low-cardinality
// name), the status carries msg.
func (s *Span) Fail(class, msg string) {
	if s != nil {
		if class == "" {
			class = "_OTHER"
		}
		s.s.SetAttributes(String(KeyErrorType, class))
		s.s.SetStatus(codes.Error, msg)
	}
}

// End ends the span.
func (s *Span) End() {
	if s != nil {
		s.s.End()
	}
}

func attributeStrings(k string, v ...string) KV { return attribute.StringSlice(k, v) }

// SetContent records content under key (KeyToolArguments, KeyToolResult)
// when the provider captures content, cut to MaxContent.
func (s *Span) SetContent(key, content string) {
	if s.Capturing() {
		s.s.SetAttributes(String(key, capped(content)))
	}
}

// AddEvent adds an event to ctx's current span when tracing is on.
func AddEvent(ctx context.Context, name string, kv ...KV) {
	if From(ctx) != nil {
		trace.SpanFromContext(ctx).AddEvent(name, trace.WithAttributes(kv...))
	}
}
