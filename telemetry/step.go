package telemetry

import (
	"context"
	"sync/atomic"
)

// Agent names one agent of a step.
type Agent struct{ ID, Role string }

// Step holds the invoke_agent spans of one decision step of the
// scheduling benchmark, started before the controller answers, so that
// the model calls of each agent are children of its span, whoever makes
// them: an LLM controller (ForAgent) or a model-call proxy (NextCall). A
// nil *Step does nothing.
type Step struct {
	ids   []string
	ctxs  []context.Context
	spans []*Span
	calls atomic.Int64
}

type stepKey struct{}

// StartStep starts one invoke_agent span per agent, children of ctx's
// current span, each with the step's kv. Nil without a provider.
func StartStep(ctx context.Context, agents []Agent, kv ...KV) *Step {
	p := From(ctx)
	if p == nil {
		return nil
	}
	s := &Step{ids: make([]string, len(agents)), ctxs: make([]context.Context, len(agents)), spans: make([]*Span, len(agents))}
	for i, a := range agents {
		s.ids[i] = a.ID
		s.ctxs[i], s.spans[i] = StartAgent(ctx, a.ID, a.ID, append([]KV{String(KeyRole, a.Role)}, kv...)...)
	}
	return s
}

// WithStep returns ctx carrying s (nil s: a context that carries no step).
func WithStep(ctx context.Context, s *Step) context.Context {
	if s == nil && ctx.Value(stepKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, stepKey{}, s)
}

func stepOf(ctx context.Context) *Step {
	s, _ := ctx.Value(stepKey{}).(*Step)
	return s
}

// ForAgent returns ctx with agent id's span of ctx's step as the current
// span (ctx itself without a step or without that agent).
func ForAgent(ctx context.Context, id string) context.Context {
	s := stepOf(ctx)
	if s == nil {
		return ctx
	}
	for i, x := range s.ids {
		if x == id {
			return Reparent(ctx, s.ctxs[i])
		}
	}
	return ctx
}

// NextCall returns the parent context of the next model call made for
// ctx's step by someone who cannot tell which agent it is for (the
// model-call proxy of an external controller): the agents' spans in turn,
// in the order of the step's agents, as the proxy's audit attributes
// calls. Without a step, ctx.
func NextCall(ctx context.Context) context.Context {
	s := stepOf(ctx)
	if s == nil || len(s.ctxs) == 0 {
		return ctx
	}
	i := int((s.calls.Add(1) - 1) % int64(len(s.ctxs)))
	return s.ctxs[i]
}

// Agent returns agent id's span (nil if the step has none).
func (s *Step) Agent(id string) *Span {
	if s == nil {
		return nil
	}
	for i, x := range s.ids {
		if x == id {
			return s.spans[i]
		}
	}
	return nil
}

// End ends every agent span.
func (s *Step) End() {
	if s == nil {
		return
	}
	for _, sp := range s.spans {
		sp.End()
	}
}
