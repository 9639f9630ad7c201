package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/otlptest"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/suite"
)

// noOTel clears the OTEL_* variables a developer's shell may hold, so
// that only the flags of a test turn tracing on.
func noOTel(t *testing.T) {
	t.Helper()
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"} {
		t.Setenv(v, "")
	}
}

// jsonLines decodes every line of file into a T.
func jsonLines[T any](t *testing.T, file string) []T {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, v)
	}
	return out
}

// desAudit is what a des span check reads of decisions.jsonl.
type desAudit struct {
	Step    int    `json:"step"`
	AgentID string `json:"agent_id"`
	Source  string `json:"source"`
	Calls   int    `json:"calls"`
}

// checkDesSpans checks the spans of one des episode against its
// artifacts in dir: one invoke_agent span per audited decision (agent id,
// step, source as audited, a fallback event on each fallback), chats
// children of them, and as many chats as wantChats (the audit's count of
// model calls). It returns the chat spans.
func checkDesSpans(t *testing.T, spans []otlptest.Span, dir string, wantChats int) []otlptest.Span {
	t.Helper()
	audits := jsonLines[desAudit](t, filepath.Join(dir, harness.FileDecisions))
	run, agents, chats, _ := otlptest.CheckTree(t, spans, otlptest.Want{Run: "des episode", Agents: len(audits), Chats: wantChats})
	m := readMetrics(t, dir)
	if run.Str("coordbench.paradigm") != m.Paradigm || run.Str("coordbench.instance") != m.Instance || run.Int("coordbench.llm_calls") != int64(m.Secondary.LLMCalls) {
		t.Errorf("run span attributes %v, metrics %s %s %d calls", run.Attrs, m.Instance, m.Paradigm, m.Secondary.LLMCalls)
	}
	type key struct {
		step  int64
		agent string
	}
	byKey := map[key]otlptest.Span{}
	for _, a := range agents {
		byKey[key{a.Int("coordbench.step"), a.Str("gen_ai.agent.id")}] = a
	}
	for _, a := range audits {
		sp, ok := byKey[key{int64(a.Step), a.AgentID}]
		if !ok {
			t.Fatalf("no invoke_agent span for step %d agent %s", a.Step, a.AgentID)
		}
		if sp.Str("coordbench.source") != a.Source || sp.Name != "invoke_agent "+a.AgentID {
			t.Errorf("step %d agent %s: span %q source %q, audit %q", a.Step, a.AgentID, sp.Name, sp.Str("coordbench.source"), a.Source)
		}
		fell := len(sp.Events) > 0 && sp.Events[0].Name == "coordbench.fallback"
		if fell != (a.Source == "fallback") {
			t.Errorf("step %d agent %s: source %s, events %v", a.Step, a.AgentID, a.Source, sp.Events)
		}
	}
	var in int64
	for _, c := range chats {
		if c.Str("gen_ai.request.model") == "" || c.Name != "chat "+c.Str("gen_ai.request.model") || c.Kind != 3 /* client */ {
			t.Errorf("chat span %q: %v", c.Name, c.Attrs)
		}
		if _, ok := c.Attrs["gen_ai.input.messages"]; ok {
			t.Errorf("chat span %q carries the prompt without --otel-capture-content", c.Name)
		}
		in += c.Int("gen_ai.usage.input_tokens")
	}
	if in != m.Secondary.PromptTokens {
		t.Errorf("chat spans: %d input tokens, metrics %d", in, m.Secondary.PromptTokens)
	}
	return chats
}

// sameArtifacts fails t unless dirs a and b hold byte-identical files.
func sameArtifacts(t *testing.T, a, b string, files ...string) {
	t.Helper()
	for _, f := range files {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", f, err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs with tracing on and off", f)
		}
	}
}

// TestOTelDesLLMEpisode: a des episode of the LLM controller against the
// stub model, traced to a real OTLP/HTTP receiver, exports the episode's
// span tree with one chat per audited model call, and writes the same
// artifacts as without tracing.
func TestOTelDesLLMEpisode(t *testing.T) {
	noOTel(t)
	rcv, upstream := otlptest.Start(t), desStub(t).URL+"/v1"
	args := []string{"des", "run", "--instance", "A3C9-1", "--paradigm", "hierarchical", "--controller", "llm",
		"--llm-model", "plant=stub-big,area=stub-small,cell=stub-small", "--llm-base-url", upstream}
	on, off := filepath.Join(t.TempDir(), "on"), filepath.Join(t.TempDir(), "off")
	if out, err := run(t, append(args, "--out", on, "--otel-endpoint", rcv.URL())...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := readMetrics(t, on)
	if m.Secondary.LLMCalls == 0 {
		t.Fatal("no model calls")
	}
	var calls int
	for _, a := range jsonLines[desAudit](t, filepath.Join(on, harness.FileDecisions)) {
		calls += a.Calls
	}
	if calls != m.Secondary.LLMCalls {
		t.Fatalf("decisions.jsonl: %d calls, metrics %d", calls, m.Secondary.LLMCalls)
	}
	chats := checkDesSpans(t, rcv.Spans(), on, calls)
	t.Logf("%d spans: %d model calls", len(rcv.Spans()), calls)
	for _, c := range chats {
		if c.Str("gen_ai.provider.name") != "openai" || c.Str("gen_ai.operation.name") != "chat" || c.Str("server.address") != "127.0.0.1" {
			t.Fatalf("chat span attributes: %v", c.Attrs)
		}
	}
	if out, err := run(t, append(args, "--out", off)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sameArtifacts(t, on, off, harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileMetrics)
}

// TestOTelDesExternalProxy: an external runner whose decisions come from
// a model behind the audit proxy (--llm-proxy-upstream): each proxied
// call is a chat span under an agent of its step, as many as the
// proxy's totals in controller.json.
func TestOTelDesExternalProxy(t *testing.T) {
	noOTel(t)
	py := testenv.LookPath(t, "python3")
	script, err := filepath.Abs("../../des/extctl/testdata/proxy_runner.py")
	if err != nil {
		t.Fatal(err)
	}
	otelProxyRun(t, "'"+py+"' '"+script+"'", desStub(t).URL+"/v1", "stub-model")
}

// TestOTelDesLangGraph: the same of the LangGraph.js example in its
// model-backed mode (ChatOpenAI through the proxy) against the in-process
// generic stub: a multi-agent system in another language, traced without
// a line of it changed.
func TestOTelDesLangGraph(t *testing.T) {
	noOTel(t)
	node := testenv.LookPath(t, "node")
	root, err := filepath.Abs(filepath.Join("..", "..", "examples", "langgraph-js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"langgraph", "openai"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", "@langchain", pkg)); err != nil {
			testenv.Missing(t, "the LangGraph.js example's npm packages (npm ci --prefix examples/langgraph-js): %v", err)
		}
	}
	otelProxyRun(t, "COORDBENCH_LANGGRAPH_LLM=1 '"+node+"' '"+filepath.Join(root, "runner.mjs")+"'", "stub:generic", "")
}

// otelProxyRun runs command as an external runner of a centralized
// A3C9-1 episode whose model calls go through the proxy to upstream, with
// tracing on, and checks the span tree against the run's audit: an
// invoke_agent span per audited decision, a chat span per proxied call
// (controller.json llm_proxy.calls) with the proxy's tokens, each asking
// for model (any model when "").
func otelProxyRun(t *testing.T, command, upstream, model string) {
	t.Helper()
	rcv := otlptest.Start(t)
	dir := filepath.Join(t.TempDir(), "run")
	out, err := run(t, "des", "run", "--instance", "A3C9-1", "--paradigm", "centralized", "--controller-command", command,
		"--controller-timeout", "60s", "--llm-proxy-upstream", upstream, "--out", dir, "--otel-endpoint", rcv.URL())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var summary struct {
		Proxy extctl.ProxyTotals `json:"llm_proxy"`
	}
	b, err := os.ReadFile(filepath.Join(dir, extctl.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	p := summary.Proxy
	if p.Calls == 0 || p.Unattributed != 0 || p.Failures != 0 {
		t.Fatalf("proxy totals: %+v", p)
	}
	chats := checkDesSpans(t, rcv.Spans(), dir, p.Calls)
	t.Logf("%d spans: %d proxied calls", len(rcv.Spans()), p.Calls)
	var in, outTok int64
	for _, c := range chats {
		in += c.Int("gen_ai.usage.input_tokens")
		outTok += c.Int("gen_ai.usage.output_tokens")
		if got := c.Str("gen_ai.request.model"); got == "" || (model != "" && got != model) {
			t.Errorf("proxied chat: model %q", got)
		}
	}
	if in != p.PromptTokens || outTok != p.CompletionTokens {
		t.Errorf("chat spans: %d/%d tokens, proxy totals %d/%d", in, outTok, p.PromptTokens, p.CompletionTokens)
	}
}

// siloTurn is what a silo span check reads of turns.jsonl.
type siloTurn struct {
	Round int `json:"round"`
	Agent int `json:"agent"`
	Calls []struct {
		Tool string `json:"tool"`
	} `json:"calls"`
	Outcome string `json:"outcome"`
}

// TestOTelSiloRun: a silo run of LLM agents against the silo-gather stub
// exports one invoke_agent span per turn, one chat per model call and
// one execute_tool per tool call of turns.jsonl; with
// --otel-capture-content the prompts and tool arguments ride along, and
// the API key never does.
func TestOTelSiloRun(t *testing.T) {
	noOTel(t)
	const keyEnv, key = "COORDBENCH_OTEL_TEST_KEY", "sk-otel-test-secret-81d2"
	t.Setenv(keyEnv, key)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, _, _ := startStub(t, ctx, "--policy", "silo-gather")
	for _, format := range []string{"xml", "native"} {
		t.Run(format, func(t *testing.T) { siloRunSpans(t, url, keyEnv, key, format) })
	}
}

// siloRunSpans is TestOTelSiloRun in one tool format.
func siloRunSpans(t *testing.T, url, keyEnv, key, format string) {
	rcv := otlptest.Start(t)
	args := []string{"silo", "run", "--agent", "llm", "--llm-model", "stub", "--llm-base-url", url, "--llm-api-key-env", keyEnv,
		"--task", "I-01", "--agents", "3", "--tool-format", format}
	on, off := filepath.Join(t.TempDir(), "on"), filepath.Join(t.TempDir(), "off")
	if out, err := run(t, append(args, "--out", on, "--otel-endpoint", rcv.URL(), "--otel-capture-content")...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	turns := jsonLines[siloTurn](t, filepath.Join(on, llmagent.FileTurns))
	var tools int
	for _, tr := range turns {
		tools += len(tr.Calls)
	}
	if len(turns) == 0 || tools == 0 {
		t.Fatalf("%d turns, %d tool calls", len(turns), tools)
	}
	spans := rcv.Spans()
	t.Logf("%d spans: %d turns, %d tool calls", len(spans), len(turns), tools)
	run0, agents, chats, toolSpans := otlptest.CheckTree(t, spans, otlptest.Want{Run: "silo run", Agents: len(turns), Chats: len(turns), Tools: tools})
	if run0.Str("coordbench.task") != "I-01" || run0.Str("coordbench.protocol") == "" {
		t.Errorf("run span: %v", run0.Attrs)
	}
	for _, a := range agents {
		if a.Str("gen_ai.agent.name") != "agent "+a.Str("gen_ai.agent.id") || a.Int("coordbench.round") < 1 {
			t.Errorf("agent span %q: %v", a.Name, a.Attrs)
		}
	}
	for _, c := range chats {
		if !strings.Contains(c.Str("gen_ai.input.messages"), `"parts"`) || c.Str("gen_ai.output.messages") == "" {
			t.Fatalf("chat span without the captured content: %v", c.Attrs)
		}
	}
	byName := map[string]int{}
	for _, tr := range turns {
		for _, c := range tr.Calls {
			byName["execute_tool "+c.Tool]++
		}
	}
	for _, s := range toolSpans {
		byName[s.Name]--
		if _, ok := s.Attrs["gen_ai.tool.call.arguments"]; !ok {
			t.Errorf("tool span %q without its captured arguments", s.Name)
		}
		if id := s.Str("gen_ai.tool.call.id"); (id != "") != (format == "native") {
			t.Errorf("%s tool span %q: call id %q", format, s.Name, id)
		}
	}
	for name, n := range byName {
		if n != 0 {
			t.Errorf("%s: %d more in turns.jsonl than spans", name, n)
		}
	}
	for _, s := range spans {
		if b, _ := json.Marshal(s.Attrs); strings.Contains(string(b), key) {
			t.Fatalf("span %q carries the API key", s.Name)
		}
	}
	for _, h := range rcv.Headers() {
		if b, _ := json.Marshal(h); strings.Contains(string(b), key) {
			t.Fatal("an export request carries the API key")
		}
	}
	if out, err := run(t, append(args, "--out", off)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sameArtifacts(t, on, off, llmagent.FileTurns, "result.json", "calls.jsonl")
}

// TestOTelSuitesNameTheirCases: in a suite, each run's span carries its
// case id, the name of its directory.
func TestOTelSuitesNameTheirCases(t *testing.T) {
	noOTel(t)
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL()) // the environment alone turns tracing on
	base := t.TempDir()
	des, silo := filepath.Join(base, "des"), filepath.Join(base, "silo")
	if out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1,2", "--out", des); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := run(t, "silo", "suite", "--tasks", "I-01", "--agents", "2,3", "--protocols", "p2p", "--agent", "reference",
		"--max-rounds", "3", "--out", silo); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, tc := range []struct{ span, dir string }{
		{"des episode", filepath.Join(des, harness.SuiteCasesDir)},
		{"silo run", filepath.Join(silo, suite.RunsDir)},
	} {
		entries, err := os.ReadDir(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, e := range entries {
			want = append(want, e.Name())
		}
		for _, s := range otlptest.Named(rcv.Spans(), tc.span) {
			got = append(got, s.Str("coordbench.case_id"))
		}
		slices.Sort(got)
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("%s spans name cases %q; the suite ran %q", tc.span, got, want)
		}
	}
}

// TestOTelSweepRun: sweep run traces the cases it runs.
func TestOTelSweepRun(t *testing.T) {
	noOTel(t)
	rcv := otlptest.Start(t)
	tmp := t.TempDir()
	file := oneCaseExperiment(t)(filepath.Join(tmp, "e"), desStub(t).URL, "")
	if out, err := run(t, "sweep", "run", file, "--out", filepath.Join(tmp, "out"), "--otel-endpoint", rcv.URL()); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	spans := rcv.Spans()
	runs, agents, chats := otlptest.Named(spans, "des episode"), otlptest.Op(spans, "invoke_agent"), otlptest.Op(spans, "chat")
	if len(runs) != 1 || runs[0].Str("coordbench.case_id") == "" || len(chats) == 0 {
		t.Fatalf("%d episode spans, %d chats", len(runs), len(chats))
	}
	otlptest.CheckParents(t, agents, runs)
	otlptest.CheckParents(t, chats, agents)
}

// TestOTelWorker: a worker of a distributed sweep traces the cases it
// runs.
func TestOTelWorker(t *testing.T) {
	noOTel(t)
	rcv := otlptest.Start(t)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, desStub(t).URL, "1", "")
	emb := startNATS(t)
	out := filepath.Join(tmp, "dist")
	serve := served(t, context.Background(), serveConfig{file: file, out: out, natsURL: emb.URL()})
	if wout, err := run(t, "worker", "--nats", emb.URL(), "--out", out, "--scratch", t.TempDir(), "--name", "w",
		"--otel-endpoint", rcv.URL()); err != nil {
		t.Fatalf("%v\n%s", err, wout)
	}
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	runs, chats := otlptest.Named(spans, "des episode"), otlptest.Op(spans, "chat")
	if len(runs) != 1 || runs[0].Str("coordbench.case_id") == "" || len(chats) == 0 {
		t.Fatalf("%d episode spans, %d chats", len(runs), len(chats))
	}
	otlptest.CheckParents(t, otlptest.Op(spans, "invoke_agent"), runs)
}

// TestOTelDeadCollector: a collector that is not there costs a des run
// one warning on stderr, not its result; a malformed endpoint in the
// environment is refused before the run, naming the variable.
func TestOTelDeadCollector(t *testing.T) {
	noOTel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	on, off := filepath.Join(t.TempDir(), "on"), filepath.Join(t.TempDir(), "off")
	args := []string{"des", "run", "--instance", "A3C9-1", "--seed", "4"}
	out, err := run(t, append(args, "--out", on, "--otel-endpoint", dead)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "coordbench: warning: exporting spans"); n != 1 {
		t.Errorf("%d export warnings, want 1:\n%s", n, out)
	}
	if out, err := run(t, append(args, "--out", off)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sameArtifacts(t, on, off, harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileMetrics)

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318")
	out, err = run(t, append(args, "--out", filepath.Join(t.TempDir(), "bad"))...)
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL") {
		t.Errorf("a malformed endpoint variable: %v\n%s", err, out)
	}
}
