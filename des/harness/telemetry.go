package harness

import (
	"context"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/telemetry"
)

// episodeTracer traces one episode when its ctx carries a tracer
// (telemetry, docs/telemetry.md): the episode's span, and per decision
// step one invoke_agent span per active agent, started before the
// controller answers (its model calls are their children) and ended with
// the step's audits. The zero value (tracing off) does nothing.
type episodeTracer struct {
	span *telemetry.Span
	ctx  context.Context // carries span
}

// startEpisode starts the episode's span.
func startEpisode(ctx context.Context, ep *Episode) (context.Context, episodeTracer) {
	if telemetry.From(ctx) == nil {
		return ctx, episodeTracer{}
	}
	ctx, sp := telemetry.StartRun(ctx, "des episode",
		telemetry.String(telemetry.KeyBenchmark, "des"), telemetry.String(telemetry.KeyInstance, ep.Plant.Inst.Name),
		telemetry.String(telemetry.KeyParadigm, ep.Mode.ID), telemetry.String(telemetry.KeyController, ep.Controller.Name()),
		telemetry.Int64(telemetry.KeySeedRun, int64(ep.Seed)))
	return ctx, episodeTracer{span: sp, ctx: ctx}
}

// on reports whether the episode is traced.
func (t *episodeTracer) on() bool { return t.span != nil }

// startStep starts the invoke_agent spans of decision step d, one per
// active agent in agent id order, and returns the context the controller
// answers under.
func (t *episodeTracer) startStep(d *coord.Decision, views []*coord.View) (context.Context, *telemetry.Step) {
	agents := make([]telemetry.Agent, len(views))
	for i, v := range views {
		agents[i] = telemetry.Agent{ID: v.AgentID, Role: v.Role}
	}
	slices.SortFunc(agents, func(a, b telemetry.Agent) int { return strings.Compare(a.ID, b.ID) })
	st := telemetry.StartStep(t.ctx, agents, telemetry.Int(telemetry.KeyStep, d.Step))
	return telemetry.WithStep(t.ctx, st), st
}

// endStep records each audit on its agent's span (who decided, the
// fallback and why) and ends the step's spans. An audited agent without a
// span (one the interpreter asked apart) gets one of its own.
func (t *episodeTracer) endStep(st *telemetry.Step, audits []coord.Audit) {
	for i := range audits {
		a := &audits[i]
		sp := st.Agent(a.AgentID)
		if sp == nil {
			_, sp = telemetry.StartAgent(t.ctx, a.AgentID, a.AgentID, telemetry.String(telemetry.KeyRole, a.Role), telemetry.Int(telemetry.KeyStep, a.Step))
			defer sp.End()
		}
		sp.Set(telemetry.String(telemetry.KeySource, string(a.Source)), telemetry.Int("coordbench.action", a.Action))
		if n := a.AgentNote; n != nil {
			sp.Set(telemetry.Int(telemetry.KeyCalls, n.Calls), telemetry.Bool(telemetry.KeyCached, n.Cached))
		}
		if a.Source == coord.SourceFallback {
			kv := []telemetry.KV{telemetry.String("coordbench.reason", a.Reason)}
			if a.Requested != nil {
				kv = append(kv, telemetry.Int("coordbench.requested", *a.Requested))
			}
			sp.Event(telemetry.EventFallback, kv...)
		}
	}
	st.End()
}

// end records the episode's outcome and ends its span.
func (t *episodeTracer) end(m *Metrics, err error) {
	if t.span == nil {
		return
	}
	t.span.Set(telemetry.String(telemetry.KeyStatus, m.Status), telemetry.Int(telemetry.KeyCalls, m.Secondary.LLMCalls),
		telemetry.Int64(telemetry.KeyInputTokens, m.Secondary.PromptTokens), telemetry.Int64(telemetry.KeyOutputTokens, m.Secondary.CompletionTokens))
	if err != nil {
		t.span.Fail("episode", err.Error())
	}
	t.span.End()
}
