package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Environment variables read by [Resolve] (the OpenTelemetry SDK's
// standard ones, and the GenAI instrumentations' content switch).
const (
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// Defaults of Config.
const (
	DefaultServiceName     = "coordbench"
	DefaultExportTimeout   = 5 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
	// MaxQueuedSpans bounds the spans waiting for export; past it new
	// spans are dropped (never waited for).
	MaxQueuedSpans = 16384
)

// Config says where spans go. The zero value, with no OTEL_* variables
// set, is tracing off.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP root, as in
	// OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://127.0.0.1:4318): spans go
	// to Endpoint + "/v1/traces", or to Endpoint itself when its path
	// already ends in /v1/traces. Empty: the environment's endpoint, if any.
	Endpoint string
	// Headers are sent with every export (after the environment's
	// OTEL_EXPORTER_OTLP_HEADERS, which they override).
	Headers map[string]string
	// CaptureContent records prompts, replies and tool arguments and
	// results on the spans (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.tool.call.arguments, gen_ai.tool.call.result). Off by
	// default; also on with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
	CaptureContent bool
	// ServiceName is the resource's service.name (default "coordbench").
	ServiceName string
	// ExportTimeout bounds one export, retries included (default 5 s);
	// ShutdownTimeout bounds the final flush (default 5 s).
	ExportTimeout   time.Duration
	ShutdownTimeout time.Duration
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Warn receives the one warning of a failed export or shutdown (nil:
	// none is written).
	Warn io.Writer
}

// Resolve fills cfg from the environment: the endpoint (the traces
// endpoint first, used as is, then the general one), headers, content
// capture. It returns the URL spans go to, "" when tracing is off: no
// endpoint anywhere, OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none.
func (cfg *Config) Resolve() (string, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv(EnvTracesExporter)), "none") {
		return "", nil
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvCaptureContent)), "true") {
		cfg.CaptureContent = true
	}
	raw, full, src := cfg.Endpoint, false, "the OTLP endpoint"
	if raw == "" {
		if raw = getenv(EnvTracesEndpoint); raw != "" {
			full, src = true, "the OTLP endpoint in "+EnvTracesEndpoint
		} else {
			raw, src = getenv(EnvEndpoint), "the OTLP endpoint in "+EnvEndpoint
		}
	}
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	// The URL is not quoted back: it may hold a secret.
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("telemetry: %s must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:4318", src)
	}
	if u.User != nil {
		return "", fmt.Errorf("telemetry: %s must not contain credentials; put them in %s", src, EnvHeaders)
	}
	if !full && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1/traces") {
		u.Path = strings.TrimRight(u.Path, "/") + "/v1/traces"
	}
	headers := map[string]string{}
	for _, name := range []string{EnvHeaders, EnvTracesHeaders} {
		if err := parseHeaders(getenv(name), headers); err != nil {
			return "", fmt.Errorf("telemetry: %s: %w", name, err)
		}
	}
	for k, v := range cfg.Headers {
		headers[k] = v
	}
	cfg.Headers = headers
	return u.String(), nil
}

// parseHeaders reads "k1=v1,k2=v2" (values URL-encoded) into into. The
// values are never echoed: they often hold a key.
func parseHeaders(s string, into map[string]string) error {
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return errors.New("want key=value pairs separated by commas")
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		into[k] = v
	}
	return nil
}

// Provider is a tracer provider exporting over OTLP/HTTP, with the
// settings its spans follow. A nil *Provider is tracing off.
type Provider struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	capture bool
	timeout time.Duration
	warn    *warner
}

// New returns the provider cfg asks for, or nil (and no error) when
// tracing is off (Config.Resolve). Only a malformed endpoint or header
// variable is an error: a collector that cannot be reached is a warning
// at the first failed export.
func New(cfg Config) (*Provider, error) {
	endpoint, err := cfg.Resolve()
	if err != nil || endpoint == "" {
		return nil, err
	}
	timeout := cfg.ExportTimeout
	if timeout <= 0 {
		timeout = DefaultExportTimeout
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithTimeout(timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: timeout}),
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...) // connects lazily
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	w := &warner{out: cfg.Warn, endpoint: endpoint}
	name := cfg.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
		sdktrace.WithBatcher(quietExporter{exp, w},
			sdktrace.WithMaxQueueSize(MaxQueuedSpans),
			sdktrace.WithMaxExportBatchSize(1024),
			sdktrace.WithBatchTimeout(time.Second),
			sdktrace.WithExportTimeout(timeout)),
	)
	st := cfg.ShutdownTimeout
	if st <= 0 {
		st = DefaultShutdownTimeout
	}
	return &Provider{tp: tp, tracer: tp.Tracer(scope), capture: cfg.CaptureContent, timeout: st, warn: w}, nil
}

// scope is the instrumentation scope of every span.
const scope = "github.com/coordbench/coordbench/telemetry"

// Shutdown flushes the spans not yet exported and stops the provider,
// giving up after Config.ShutdownTimeout (a cancelled ctx does not cut it
// shorter: the run is over either way). A failure is the provider's one
// warning, never an error of the run. Nil-safe.
func (p *Provider) Shutdown(ctx context.Context) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	if err := p.tp.Shutdown(ctx); err != nil {
		p.warn.once(err)
	}
}

// warner writes one warning, for the first failure only.
type warner struct {
	out      io.Writer
	endpoint string
	mu       sync.Once
}

func (w *warner) once(err error) {
	w.mu.Do(func() {
		if w.out != nil {
			fmt.Fprintf(w.out, "coordbench: warning: exporting spans to %s failed, spans are dropped (the run goes on): %v\n", w.endpoint, err)
		}
	})
}

// quietExporter turns export failures into the provider's one warning,
// so that the SDK never hands them to OpenTelemetry's global error
// handler (which would log every failed batch).
type quietExporter struct {
	sdktrace.SpanExporter
	w *warner
}

func (q quietExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := q.SpanExporter.ExportSpans(ctx, spans); err != nil {
		q.w.once(err)
	}
	return nil
}

func (q quietExporter) Shutdown(ctx context.Context) error {
	if err := q.SpanExporter.Shutdown(ctx); err != nil {
		q.w.once(err)
	}
	return nil
}
