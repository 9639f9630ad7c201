// Package telemetry adapts OpenTelemetry tracing to coordbench: it builds
// a tracer provider exporting spans over OTLP/HTTP from a [Config] (or
// from the standard OTEL_EXPORTER_OTLP_* environment variables), and
// gives the benchmarks small helpers that start the spans of the GenAI
// semantic conventions (v1.41.0, status Development): a run span, an
// invoke_agent span per agent decision or turn, a chat span per model
// call, an execute_tool span per tool call.
//
// Nothing here is process-global: the [Provider] travels in a context
// ([Provider.Context]), spans nest through the context as well, and no
// global tracer provider, propagator or error handler is set. Without a
// provider in the context every helper returns a nil *[Span], whose
// methods do nothing, so that tracing off costs a context lookup per call.
//
// Tracing never changes a run: spans are written by a batch processor in
// the background, an export that fails or hangs is dropped after a
// bounded time with one warning, and [Provider.Shutdown] gives up after
// its timeout. Prompts and replies are recorded only with
// Config.CaptureContent; API keys never are.
package telemetry
