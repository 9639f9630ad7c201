package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/telemetry"
)

// withTracing gives c the --otel-* flags and wraps its RunE: the tracer
// they and the OTEL_* environment ask for (docs/telemetry.md) rides in
// the command's context, from which every run, agent and model call of
// the command starts its spans, and is flushed (within a bounded time)
// when the command ends. Off (no endpoint), nothing changes.
func withTracing(c *cobra.Command) *cobra.Command {
	var endpoint string
	var capture bool
	f := c.Flags()
	f.StringVar(&endpoint, "otel-endpoint", "", "export OpenTelemetry spans over OTLP/HTTP to this collector root, e.g. http://127.0.0.1:4318 (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT; none: off)")
	f.BoolVar(&capture, "otel-capture-content", false, "record prompts, replies and tool arguments and results on the spans (off: only counts, models, ids)")
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		p, err := telemetry.New(telemetry.Config{Endpoint: endpoint, CaptureContent: capture, Warn: cmd.ErrOrStderr()})
		if err != nil && endpoint != "" {
			return fmt.Errorf("--otel-endpoint: %w", err)
		} else if err != nil {
			return err // the environment's (the error names the variable)
		}
		if p != nil {
			cmd.SetContext(p.Context(cmd.Context()))
			defer p.Shutdown(cmd.Context())
		}
		return run(cmd, args)
	}
	return c
}
