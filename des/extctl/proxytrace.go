package extctl

import (
	"context"

	"github.com/coordbench/coordbench/telemetry"
)

// follow makes ctx the trace context of the calls the proxy serves from
// now on (telemetry): during a decision step, the step's context, whose
// agents' invoke_agent spans become the parents of the calls in turn;
// between steps, the episode's. An untraced ctx clears it.
func (p *Proxy) follow(ctx context.Context) {
	if telemetry.From(ctx) == nil {
		ctx = nil
	}
	p.mu.Lock()
	p.tctx = ctx
	p.mu.Unlock()
}

// traceCall returns r's context with the trace parent of the call it
// carries, when the proxy follows a traced episode.
func (p *Proxy) traceCall(ctx context.Context) context.Context {
	p.mu.Lock()
	t := p.tctx
	p.mu.Unlock()
	if t == nil {
		return ctx
	}
	return telemetry.Reparent(ctx, telemetry.NextCall(t))
}
