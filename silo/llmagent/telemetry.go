package llmagent

import (
	"context"
	"strconv"
	"time"

	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/telemetry"
)

// startTurn starts the invoke_agent span of one turn when ctx carries a
// tracer (telemetry): its model call and tool calls are its children.
func (a *Agent) startTurn(ctx context.Context, t *round.Turn) (context.Context, *telemetry.Span) {
	if telemetry.From(ctx) == nil {
		return ctx, nil
	}
	id := strconv.Itoa(a.id)
	kv := []telemetry.KV{telemetry.Int(telemetry.KeyRound, t.Round), telemetry.String(telemetry.KeySource, "llm")}
	if a.cfg.Label != "" {
		kv = append(kv, telemetry.String("coordbench.model_label", a.cfg.Label))
	}
	return telemetry.StartAgent(ctx, id, "agent "+id, kv...)
}

// endTurn records the turn's outcome (its last record) and ends its span.
func (a *Agent) endTurn(sp *telemetry.Span, err error) {
	if sp == nil {
		return
	}
	if k := len(a.records) - 1; k >= 0 {
		r := &a.records[k]
		sp.Set(telemetry.String("coordbench.outcome", r.Outcome), telemetry.Int("coordbench.tool_calls", len(r.Calls)))
	}
	if err != nil {
		sp.Fail("turn", err.Error())
	}
	sp.End()
}

// toolClock is the start of a tool call when the turn is traced.
func toolClock(ctx context.Context) time.Time {
	if telemetry.From(ctx) == nil {
		return time.Time{}
	}
	return time.Now()
}

// record appends cr to the turn's calls and, when traced, gives it an
// execute_tool span from start (zero: now) to now; callID is the model's
// id of the call ("" in the XML-like format).
func record(ctx context.Context, rec *TurnRecord, cr CallRecord, callID string, start time.Time) {
	rec.Calls = append(rec.Calls, cr)
	if telemetry.From(ctx) == nil {
		return
	}
	sp := telemetry.StartToolAt(ctx, start, cr.Tool, callID, telemetry.Bool("coordbench.executed", cr.Executed), telemetry.Int(telemetry.KeyRound, rec.Round))
	sp.SetContent(telemetry.KeyToolArguments, string(cr.Args))
	sp.SetContent(telemetry.KeyToolResult, string(cr.Result))
	sp.End()
}
