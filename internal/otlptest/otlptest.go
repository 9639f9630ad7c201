// Package otlptest is an OTLP/HTTP trace receiver for tests: a real HTTP
// server on loopback that decodes the protobuf export requests
// (ExportTraceServiceRequest) the OpenTelemetry exporters send, and keeps
// their spans for the test to check (names, attributes, nesting, counts).
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// maxBody bounds one export request.
const maxBody = 64 << 20

// Span is one received span, its ids in hex.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      int32
	Attrs                     map[string]any // string, int64, float64, bool or []any
	Events                    []Event
	Error                     bool // status code Error
	Service                   string
}

// Event is one span event.
type Event struct {
	Name  string
	Attrs map[string]any
}

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
}

// Start starts a receiver on loopback, closed when the test ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's root, for OTEL_EXPORTER_OTLP_ENDPOINT or
// --otel-endpoint (spans are accepted at /v1/traces).
func (r *Receiver) URL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "POST /v1/traces only", http.StatusNotFound)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxBody)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = io.LimitReader(zr, maxBody)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		service, _ := attrs(rs.GetResource().GetAttributes())["service.name"].(string)
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: int32(s.GetKind()),
					Attrs: attrs(s.GetAttributes()), Error: s.GetStatus().GetCode() == 2, Service: service}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), Attrs: attrs(e.GetAttributes())})
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out) //nolint:errcheck
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Headers returns the headers of every export request so far.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Reset forgets the spans received so far.
func (r *Receiver) Reset() {
	r.mu.Lock()
	r.spans, r.headers = nil, nil
	r.mu.Unlock()
}

// Op returns the spans whose gen_ai.operation.name is op.
func Op(spans []Span, op string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Attrs["gen_ai.operation.name"] == op {
			out = append(out, s)
		}
	}
	return out
}

// Named returns the spans named name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// ByID indexes spans by span id.
func ByID(spans []Span) map[string]Span {
	m := make(map[string]Span, len(spans))
	for _, s := range spans {
		m[s.SpanID] = s
	}
	return m
}

// Int returns attribute k of s as an int64 (0 if absent or not an int).
func (s Span) Int(k string) int64 {
	n, _ := s.Attrs[k].(int64)
	return n
}

// Str returns attribute k of s as a string ("" if absent or not one).
func (s Span) Str(k string) string {
	v, _ := s.Attrs[k].(string)
	return v
}

// CheckParents fails t unless every span of child is a child of a span
// of parent, in one trace.
func CheckParents(t testing.TB, child, parent []Span) {
	t.Helper()
	ids := ByID(parent)
	for _, c := range child {
		p, ok := ids[c.ParentID]
		if !ok {
			t.Errorf("span %q (%s): parent %s is not one of the %d expected parents", c.Name, c.SpanID, c.ParentID, len(parent))
			return
		}
		if p.TraceID != c.TraceID {
			t.Errorf("span %q: trace %s, its parent's %s", c.Name, c.TraceID, p.TraceID)
			return
		}
	}
}

// Want is the shape of the spans of one run: its run span's name, and
// how many invoke_agent, chat and execute_tool spans it has.
type Want struct {
	Run                  string
	Agents, Chats, Tools int
}

// CheckTree fails t unless spans are exactly one run's, shaped as want:
// one span named want.Run, the root of their one trace; want.Agents
// invoke_agent spans, children of the run span; want.Chats chat spans
// and want.Tools execute_tool spans, children of invoke_agent spans. It
// returns the spans by operation for further checks.
func CheckTree(t testing.TB, spans []Span, want Want) (run Span, agents, chats, tools []Span) {
	t.Helper()
	runs := Named(spans, want.Run)
	if len(runs) != 1 {
		t.Fatalf("%d spans named %q, want 1 (of %d spans)", len(runs), want.Run, len(spans))
	}
	run = runs[0]
	if run.ParentID != "" {
		t.Errorf("run span %q has a parent %s", run.Name, run.ParentID)
	}
	agents, chats, tools = Op(spans, "invoke_agent"), Op(spans, "chat"), Op(spans, "execute_tool")
	if len(agents) != want.Agents || len(chats) != want.Chats || len(tools) != want.Tools {
		t.Errorf("invoke_agent %d, chat %d, execute_tool %d spans; want %d, %d, %d",
			len(agents), len(chats), len(tools), want.Agents, want.Chats, want.Tools)
	}
	if n := 1 + len(agents) + len(chats) + len(tools); n != len(spans) {
		t.Errorf("%d spans, of which only %d are the run's, its agents', chats and tools", len(spans), n)
	}
	CheckParents(t, agents, runs)
	CheckParents(t, chats, agents)
	CheckParents(t, tools, agents)
	return run, agents, chats, tools
}
