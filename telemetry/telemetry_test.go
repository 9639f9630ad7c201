package telemetry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/otlptest"
	"github.com/coordbench/coordbench/telemetry"
)

// env is a fixed environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      telemetry.Config
		want     string
		capture  bool
		errMatch string
	}{
		{name: "off", cfg: telemetry.Config{Getenv: env()}},
		{name: "flag", cfg: telemetry.Config{Endpoint: "http://127.0.0.1:4318", Getenv: env()}, want: "http://127.0.0.1:4318/v1/traces"},
		{name: "flag with path", cfg: telemetry.Config{Endpoint: "http://127.0.0.1:4318/v1/traces/", Getenv: env()}, want: "http://127.0.0.1:4318/v1/traces/"},
		{name: "general variable", cfg: telemetry.Config{Getenv: env(telemetry.EnvEndpoint, "http://127.0.0.1:4318/")}, want: "http://127.0.0.1:4318/v1/traces"},
		{name: "traces variable as is", cfg: telemetry.Config{Getenv: env(telemetry.EnvEndpoint, "http://127.0.0.1:1", telemetry.EnvTracesEndpoint, "http://127.0.0.1:4318/custom")},
			want: "http://127.0.0.1:4318/custom"},
		{name: "flag first", cfg: telemetry.Config{Endpoint: "http://127.0.0.1:9", Getenv: env(telemetry.EnvTracesEndpoint, "http://127.0.0.1:4318/custom")}, want: "http://127.0.0.1:9/v1/traces"},
		{name: "sdk disabled", cfg: telemetry.Config{Endpoint: "http://127.0.0.1:9", Getenv: env(telemetry.EnvSDKDisabled, "TRUE")}},
		{name: "exporter none", cfg: telemetry.Config{Getenv: env(telemetry.EnvEndpoint, "http://127.0.0.1:9", telemetry.EnvTracesExporter, "none")}},
		{name: "capture variable", cfg: telemetry.Config{Endpoint: "https://collector.example", Getenv: env(telemetry.EnvCaptureContent, "true")},
			want: "https://collector.example/v1/traces", capture: true},
		{name: "no scheme", cfg: telemetry.Config{Endpoint: "127.0.0.1:4318", Getenv: env()}, errMatch: "http:// or https://"},
		{name: "credentials", cfg: telemetry.Config{Endpoint: "http://user:sk-secret@127.0.0.1:4318", Getenv: env()}, errMatch: "credentials"},
		{name: "bad headers", cfg: telemetry.Config{Endpoint: "http://127.0.0.1:4318", Getenv: env(telemetry.EnvHeaders, "sk-secret-token")}, errMatch: "key=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			got, err := cfg.Resolve()
			if tc.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMatch) || strings.Contains(err.Error(), "sk-secret") {
					t.Fatalf("error %v, want one saying %q without the secret", err, tc.errMatch)
				}
				return
			}
			if err != nil || got != tc.want || cfg.CaptureContent != tc.capture {
				t.Fatalf("Resolve = %q, capture %v, %v; want %q, capture %v", got, cfg.CaptureContent, err, tc.want, tc.capture)
			}
		})
	}
}

// Spans started from a provider's context reach a real OTLP/HTTP
// receiver, nested, with the configured and the environment's headers.
func TestExportNestsSpans(t *testing.T) {
	rcv := otlptest.Start(t)
	tp, err := telemetry.New(telemetry.Config{Endpoint: rcv.URL(), ServiceName: "svc", Headers: map[string]string{"X-Team": "b"},
		Getenv: env(telemetry.EnvHeaders, "X-Tenant=a%20b,X-Team=a")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := telemetry.WithAttrs(tp.Context(context.Background()), telemetry.String(telemetry.KeyCaseID, "c1"))
	ctx, run := telemetry.StartRun(ctx, "silo run")
	actx, agent := telemetry.StartAgent(ctx, "0", "agent 0")
	_, chat := telemetry.StartChat(actx, telemetry.ChatRequest{Model: "m", ServerURL: "https://api.example/v1", Messages: func() []telemetry.Message {
		t.Error("messages asked for without content capture")
		return nil
	}})
	telemetry.AddEvent(actx, "mark")
	chat.EndChat(&telemetry.ChatResult{Model: "m-1", InputTokens: 3, OutputTokens: 2, FinishReason: "stop"}, "", nil)
	tool := telemetry.StartToolAt(actx, time.Time{}, "wait", "call_1")
	tool.SetContent(telemetry.KeyToolArguments, "{}")
	tool.End()
	agent.End()
	run.End()
	tp.Shutdown(context.Background())

	r, agents, chats, tools := otlptest.CheckTree(t, rcv.Spans(), otlptest.Want{Run: "silo run", Agents: 1, Chats: 1, Tools: 1})
	if r.Str(telemetry.KeyCaseID) != "c1" || r.Service != "svc" {
		t.Errorf("run span: %v, service %q", r.Attrs, r.Service)
	}
	c := chats[0]
	if c.Name != "chat m" || c.Str(telemetry.KeyResponseModel) != "m-1" || c.Int(telemetry.KeyInputTokens) != 3 || c.Int(telemetry.KeyOutputTokens) != 2 ||
		c.Int(telemetry.KeyServerPort) != 443 || c.Str(telemetry.KeyServerAddress) != "api.example" {
		t.Errorf("chat span %q: %v", c.Name, c.Attrs)
	}
	if len(agents[0].Events) != 1 || agents[0].Events[0].Name != "mark" {
		t.Errorf("agent events: %v", agents[0].Events)
	}
	if tools[0].Name != "execute_tool wait" || tools[0].Str(telemetry.KeyToolCallID) != "call_1" || tools[0].Attrs[telemetry.KeyToolArguments] != nil {
		t.Errorf("tool span %q: %v", tools[0].Name, tools[0].Attrs)
	}
	h := rcv.Headers()
	if len(h) == 0 || h[0].Get("X-Tenant") != "a b" || h[0].Get("X-Team") != "b" {
		t.Errorf("export headers: %v", h)
	}
}

// Captured content is cut to MaxContent bytes, whole runes.
func TestCapturedContentIsBounded(t *testing.T) {
	rcv := otlptest.Start(t)
	tp, err := telemetry.New(telemetry.Config{Endpoint: rcv.URL(), CaptureContent: true, Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, run := telemetry.StartRun(tp.Context(context.Background()), "r")
	long := strings.Repeat("é", telemetry.MaxContent)
	_, chat := telemetry.StartChat(ctx, telemetry.ChatRequest{Model: "m", Messages: func() []telemetry.Message {
		return []telemetry.Message{{Role: "user", Content: long}, {Role: "assistant", ToolCalls: []telemetry.ToolCall{{ID: "1", Name: "f", Arguments: "not json"}}},
			{Role: "tool", ToolCallID: "1", Content: "ok"}}
	}})
	chat.EndChat(&telemetry.ChatResult{Content: "fine"}, "", nil)
	run.End()
	tp.Shutdown(context.Background())
	spans := otlptest.Op(rcv.Spans(), telemetry.OpChat)
	if len(spans) != 1 {
		t.Fatalf("%d chat spans", len(spans))
	}
	in := spans[0].Str(telemetry.KeyInputMessages)
	if len(in) > telemetry.MaxContent || len(in) < telemetry.MaxContent-1 || !strings.HasPrefix(in, `[{"role":"user","parts":[{"type":"text","content":"éé`) {
		t.Errorf("input messages: %d bytes, %.80q", len(in), in)
	}
	if out := spans[0].Str(telemetry.KeyOutputMessages); out != `[{"role":"assistant","parts":[{"type":"text","content":"fine"}]}]` {
		t.Errorf("output messages: %s", out)
	}
}

// warnings collects what a provider warns, one Write a warning.
type warnings chan string

func (w warnings) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// A collector that is not there, refuses, or never answers costs one
// warning: starting and ending spans never waits for it, and Shutdown
// gives up after its timeout.
func TestDeadOrSlowCollectorWarnsOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); slow.Close() })
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadRequest) // permanent: not retried
	}))
	t.Cleanup(refusing.Close)
	for name, url := range map[string]string{"closed": closed, "slow": slow.URL, "refusing": refusing.URL} {
		t.Run(name, func(t *testing.T) {
			warn := make(warnings, 10)
			tp, err := telemetry.New(telemetry.Config{Endpoint: url, Getenv: env(), Warn: warn,
				ExportTimeout: 50 * time.Millisecond, ShutdownTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, run := telemetry.StartRun(tp.Context(context.Background()), "r")
			for range 3000 { // more than a batch
				_, s := telemetry.StartAgent(ctx, "a", "a")
				s.End()
			}
			run.End()
			tp.Shutdown(context.Background())
			tp.Shutdown(context.Background()) // twice: still one warning
			if len(warn) != 1 {
				t.Fatalf("%d warnings, want 1", len(warn))
			}
			if w := <-warn; !strings.HasSuffix(w, "\n") || !strings.Contains(w, "spans are dropped (the run goes on)") {
				t.Errorf("warning: %q", w)
			}
		})
	}
}

// Without a provider every helper is a no-op on a nil span, and the
// hooks on a model call's path allocate nothing. (Span.Set's arguments
// escape: callers build attributes only for a non-nil span.)
func TestOffIsNoOp(t *testing.T) {
	ctx := context.Background()
	if telemetry.From(ctx) != nil || telemetry.WithAttrs(ctx, telemetry.String("k", "v")) != ctx {
		t.Fatal("a provider out of nowhere")
	}
	var nilProvider *telemetry.Provider
	if nilProvider.Context(ctx) != ctx {
		t.Fatal("a nil provider changed the context")
	}
	nilProvider.Shutdown(ctx)
	fail, agents := errors.New("e"), []telemetry.Agent{{ID: "a"}}
	allocs := testing.AllocsPerRun(100, func() {
		c, run := telemetry.StartRun(ctx, "r")
		c, agent := telemetry.StartAgent(c, "a", "a")
		_, chat := telemetry.StartChat(telemetry.ForAgent(c, "a"), telemetry.ChatRequest{Model: "m"})
		telemetry.AddEvent(c, "e")
		chat.EndChat(nil, "x", fail)
		telemetry.StartToolAt(c, time.Time{}, "t", "").End()
		st := telemetry.StartStep(c, agents)
		st.Agent("a").Event("e")
		st.End()
		agent.End()
		run.Fail("x", "y")
		run.End()
	})
	if allocs != 0 {
		t.Errorf("tracing off: %v allocations", allocs)
	}
}
