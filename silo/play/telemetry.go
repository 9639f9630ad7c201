package play

import (
	"context"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
	"github.com/coordbench/coordbench/telemetry"
)

// startRun starts the span of a run when ctx carries a tracer
// (telemetry): the LLM agents' invoke_agent spans are its children.
func startRun(ctx context.Context, in *task.Instance, p proto.Protocol, players Players) (context.Context, *telemetry.Span) {
	if telemetry.From(ctx) == nil {
		return ctx, nil
	}
	return telemetry.StartRun(ctx, "silo run", telemetry.String(telemetry.KeyBenchmark, "silo"),
		telemetry.String(telemetry.KeyTask, in.Task.ID), telemetry.String(telemetry.KeyProtocol, string(p)),
		telemetry.String(telemetry.KeyParadigm, in.Task.Paradigm), telemetry.Int("coordbench.n", in.N),
		telemetry.String("coordbench.instance_mode", in.Mode), telemetry.Int64(telemetry.KeySeedRun, int64(in.Seed)),
		telemetry.String("coordbench.agent_kind", players.Kind))
}

// endRun records the run's outcome and ends its span.
func endRun(sp *telemetry.Span, res *round.Result, err error) {
	if sp == nil {
		return
	}
	if res != nil {
		sp.Set(telemetry.Float64("coordbench.S", res.S), telemetry.Bool("coordbench.success", res.Success),
			telemetry.Int("coordbench.rounds", res.Rounds))
	}
	if err != nil {
		sp.Fail("run", err.Error())
	}
	sp.End()
}
