package extctl

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/httplimit"
	"github.com/coordbench/coordbench/llm"
)

// Environment variables the controller gives a runner when a proxy is
// configured (docs/external.md, "Model-call audit").
const (
	EnvLLMBaseURL    = "COORDBENCH_LLM_BASE_URL"
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	EnvOpenAIAPIKey  = "OPENAI_API_KEY"
)

// TokenPrefix starts every proxy token (Issue): a runner's OPENAI_API_KEY
// while it runs. The real key stays in coordbench's process.
const TokenPrefix = "coordbench-proxy-"

// ProxyConfig configures a model-call proxy.
type ProxyConfig struct {
	// Upstream is the endpoint calls are forwarded to: its BaseURL
	// (required), APIKeyEnv ("" for none) and Limits. The model and the
	// sampling settings are each request's own; Upstream's are ignored.
	Upstream llm.Spec
	// Options apply to every model's client. Their Endpoints owns the
	// upstream's limits and connection pool, shared with the program's
	// other clients of the same base URL (nil: the proxy's clients share
	// state of their own).
	Options llm.Options
	// MaxFailures is how many calls in a row through the proxy may fail
	// (after their retries, without a model reply) before the episode of
	// the runner making them aborts: the upstream is down. A call that
	// returns a reply resets the count. 0 means DefaultMaxProxyFailures.
	MaxFailures int
	// HTTP are the limits of the proxy's listener (zero fields: the
	// defaults of httplimit; MaxBody is always maxProxyBody).
	HTTP httplimit.Config
}

// maxProxyBody bounds a chat request sent to the proxy.
const maxProxyBody = 16 << 20

// DefaultMaxProxyFailures is ProxyConfig.MaxFailures when unset: the
// built-in LLM controller's default (llmctl.DefaultMaxModelFailures).
const DefaultMaxProxyFailures = 3

// ProxyCall is one model call made through the proxy.
type ProxyCall struct {
	Model              string
	PromptTokens       int64
	CompletionTokens   int64
	PromptCachedTokens int64 // of PromptTokens, served from the provider's prompt cache
	Cached             bool  // answered from the response cache
	Failed             bool
	Retries            int // attempts beyond the first
	// Class and Error say why a failed call failed (llm.ErrorClass, and
	// the error's text, which never holds the key); "" when it did not.
	Class, Error string
}

// ProxyTotals sums up the calls made through a proxy (controller.json
// "llm_proxy").
type ProxyTotals struct {
	Upstream         string `json:"upstream"`
	Calls            int    `json:"calls"`
	Failures         int    `json:"failures"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	// PromptCachedTokens are the part of PromptTokens the provider served
	// from its prompt cache (omitted when 0).
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
	CacheHits          int   `json:"cache_hits"`
	// Unattributed counts the calls made outside a decision step (before
	// the decision was sent, or after its reply was read): they are in
	// these totals but in no decision's notes.
	Unattributed int `json:"unattributed_calls"`
}

type clientKey struct {
	model       string
	temperature float64
	hasTemp     bool // the request sent a temperature (else none is forwarded)
	maxTokens   int
	seed        int64
	hasSeed     bool
}

// Proxy is an OpenAI-compatible chat-completions endpoint on loopback that
// forwards every call through an llm.Client (one per model and generation
// parameters, created on first use): same retries, limits, cache and key
// hygiene as the built-in LLM controller. It tallies the calls, so that
// the Controller can attribute them to decision steps.
type Proxy struct {
	cfg       ProxyConfig
	endpoints *llm.Endpoints
	key       string // the upstream key's value, only to keep it out of the runner's environment

	mu      sync.Mutex
	tokens  map[string]bool // the tokens of the runners now running (Issue, Revoke)
	clients map[clientKey]*llm.Client
	pending []ProxyCall
	totals  ProxyTotals
	n       int
	tctx    context.Context // the trace context calls follow (proxytrace.go)

	ln  net.Listener
	srv *http.Server
}

// NewProxy validates cfg (the key's variable must be set unless in replay
// mode) and returns a proxy that is not listening yet (Start).
func NewProxy(cfg ProxyConfig) (*Proxy, error) {
	if strings.TrimSpace(cfg.Upstream.BaseURL) == "" {
		return nil, errors.New("extctl: proxy: empty upstream URL")
	}
	if cfg.MaxFailures < 0 {
		return nil, fmt.Errorf("extctl: proxy: MaxFailures %d: must be at least 1 (0: the default, %d)", cfg.MaxFailures, DefaultMaxProxyFailures)
	}
	p := &Proxy{cfg: cfg, clients: map[clientKey]*llm.Client{}, tokens: map[string]bool{}, endpoints: cfg.Options.Endpoints}
	if p.endpoints == nil {
		p.endpoints = llm.NewEndpoints() // the proxy's models share one upstream's limits
	}
	p.totals.Upstream = cfg.Upstream.BaseURL
	if _, err := p.client(clientKey{model: "coordbench-probe"}); err != nil { // validate now, not at the first call
		return nil, err
	}
	delete(p.clients, clientKey{model: "coordbench-probe"})
	if cfg.Upstream.APIKeyEnv != "" {
		p.key = os.Getenv(cfg.Upstream.APIKeyEnv)
	}
	return p, nil
}

// Start listens on 127.0.0.1 (a free port) and serves until Close. It
// returns the base URL, e.g. http://127.0.0.1:PORT/v1.
func (p *Proxy) Start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	p.ln = ln
	// The runner's calls, within the limits of every listener: a request
	// that sends its body slowly, or does not read the answer, does not
	// hold a connection; a bounded number are open at once.
	lim := p.cfg.HTTP
	lim.MaxBody = maxProxyBody
	p.srv = httplimit.Server(p, lim)
	go p.srv.Serve(httplimit.Listener(ln, lim)) //nolint:errcheck // ErrServerClosed after Close
	return p.BaseURL(), nil
}

// BaseURL is the proxy's API root ("" before Start).
func (p *Proxy) BaseURL() string {
	if p.ln == nil {
		return ""
	}
	return "http://" + p.ln.Addr().String() + "/v1"
}

// Close stops serving.
func (p *Proxy) Close() error {
	if p.srv == nil {
		return nil
	}
	return p.srv.Close()
}

// Issue returns a new random token that the proxy accepts (as "Authorization:
// Bearer TOKEN") until Revoke. Each runner gets its own, for as long as it
// runs, so that a call needs a secret that only that runner's environment
// holds: without one, any local process could spend the key through the
// proxy during an episode.
func (p *Proxy) Issue() string {
	t := TokenPrefix + rand.Text()
	p.mu.Lock()
	p.tokens[t] = true
	p.mu.Unlock()
	return t
}

// Revoke makes the proxy refuse token.
func (p *Proxy) Revoke(token string) {
	p.mu.Lock()
	delete(p.tokens, token)
	p.mu.Unlock()
}

// authorized reports whether r carries a token now issued.
func (p *Proxy) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	good := false
	for t := range p.tokens { // constant time in the token's content
		good = subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 || good
	}
	return good
}

// Env is what a runner with token gets: the proxy's URL, and token as
// its OpenAI key.
func (p *Proxy) Env(token string) []string {
	u := p.BaseURL()
	return []string{EnvLLMBaseURL + "=" + u, EnvOpenAIBaseURL + "=" + u, EnvOpenAIAPIKey + "=" + token}
}

// runnerEnv filters env for a runner and adds Env with a token of its own
// (returned, for Revoke when the runner is done): the upstream key's
// variable, and every variable whose value contains the key (a URL or a
// header line with the key in it, say), are left out.
func (p *Proxy) runnerEnv(env []string) ([]string, string) {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if (p.cfg.Upstream.APIKeyEnv != "" && name == p.cfg.Upstream.APIKeyEnv) || (p.key != "" && strings.Contains(val, p.key)) {
			continue
		}
		out = append(out, kv)
	}
	tok := p.Issue()
	return append(out, p.Env(tok)...), tok
}

// Take returns the calls completed since the last Take.
func (p *Proxy) Take() []ProxyCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.pending
	p.pending = nil
	return c
}

// Totals sums up every call so far (calls not yet taken count as
// unattributed).
func (p *Proxy) Totals() ProxyTotals {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.totals
	t.Unattributed += len(p.pending)
	return t
}

func (p *Proxy) unattributed(n int) {
	p.mu.Lock()
	p.totals.Unattributed += n
	p.mu.Unlock()
}

func (p *Proxy) client(k clientKey) (*llm.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[k]; ok {
		return c, nil
	}
	spec := p.cfg.Upstream
	spec.Temperature, spec.MaxTokens, spec.Seed = nil, k.maxTokens, nil // the request's
	if k.hasTemp {
		t := k.temperature
		spec.Temperature = &t
	}
	if k.hasSeed {
		s := k.seed
		spec.Seed = &s
	}
	o := p.cfg.Options
	o.Endpoints = p.endpoints
	c, err := llm.New(spec.Config(k.model, o))
	if err != nil {
		return nil, err
	}
	p.clients[k] = c
	return c, nil
}

func (p *Proxy) record(c ProxyCall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, c)
	p.totals.Calls++
	if c.Failed {
		p.totals.Failures++
	}
	if c.Cached {
		p.totals.CacheHits++
	}
	p.totals.PromptTokens += c.PromptTokens
	p.totals.CompletionTokens += c.CompletionTokens
	p.totals.PromptCachedTokens += c.PromptCachedTokens
}

type proxyRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []wireCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Seed                *int64          `json:"seed"`
	Stream              bool            `json:"stream"`
}

// wireCall is a tool call in OpenAI's shape.
type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// forwarded is the part of a request the proxy forwards besides the
// messages: the tools, tool_choice and response_format (null is none).
func (req *proxyRequest) forwarded(msgs []llm.Message) (llm.Request, error) {
	r := llm.Request{Messages: msgs}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return r, fmt.Errorf("tools[%d]: type %q: the proxy forwards function tools only", i, t.Type)
		}
		r.Tools = append(r.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: nonNull(t.Function.Parameters)})
	}
	r.ToolChoice, r.ResponseFormat = nonNull(req.ToolChoice), nonNull(req.ResponseFormat)
	return r, nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// replyMessage is the assistant message of a response: its content, and
// its tool calls (content null when there are calls and no text).
func replyMessage(resp *llm.Response) map[string]any {
	m := map[string]any{"role": "assistant", "content": resp.Content}
	if len(resp.ToolCalls) == 0 {
		return m
	}
	calls := make([]wireCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		calls[i].ID, calls[i].Type = c.ID, "function"
		calls[i].Function.Name, calls[i].Function.Arguments = c.Name, c.Arguments
	}
	m["tool_calls"] = calls
	if resp.Content == "" {
		m["content"] = nil
	}
	return m
}

// content reads a message content: a string, or an array of text parts.
func content(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("message content is neither a string nor an array of text parts")
	}
	var b strings.Builder
	for _, pt := range parts {
		if pt.Type != "text" {
			return "", fmt.Errorf("unsupported content part %q (text only)", pt.Type)
		}
		b.WriteString(pt.Text)
	}
	return b.String(), nil
}

// ServeHTTP implements POST /v1/chat/completions (and .../chat/completions).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		proxyError(w, http.StatusNotFound, "not found: the coordbench proxy serves POST /v1/chat/completions")
		return
	}
	if !p.authorized(r) { // before reading the body
		proxyError(w, http.StatusUnauthorized, "missing or wrong proxy token: send the OPENAI_API_KEY the runner was started with as \"Authorization: Bearer TOKEN\"")
		return
	}
	var req proxyRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxProxyBody)).Decode(&req); err != nil {
		proxyError(w, http.StatusBadRequest, "malformed chat request: "+err.Error())
		return
	}
	if req.Stream {
		proxyError(w, http.StatusBadRequest, "streaming is not supported by the coordbench proxy (send stream: false)")
		return
	}
	if req.Model == "" || len(req.Messages) == 0 {
		proxyError(w, http.StatusBadRequest, "model and messages are required")
		return
	}
	msgs := make([]llm.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		s, err := content(m.Content)
		if err != nil {
			proxyError(w, http.StatusBadRequest, err.Error())
			return
		}
		msg := llm.Message{Role: m.Role, Content: s, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		msgs = append(msgs, msg)
	}
	fwd, err := req.forwarded(msgs)
	if err != nil {
		proxyError(w, http.StatusBadRequest, err.Error())
		return
	}
	k := clientKey{model: req.Model, maxTokens: req.MaxCompletionTokens}
	if k.maxTokens == 0 {
		k.maxTokens = req.MaxTokens
	}
	if req.Temperature != nil {
		k.temperature, k.hasTemp = *req.Temperature, true
	}
	if req.Seed != nil {
		k.seed, k.hasSeed = *req.Seed, true
	}
	cl, err := p.client(k)
	if err != nil {
		proxyError(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := cl.CompleteRequest(p.traceCall(r.Context()), fwd)
	if err != nil {
		// An unusable reply's tokens were spent all the same.
		c := ProxyCall{Model: req.Model, Failed: true, Class: llm.ErrorClass(err), Error: err.Error()}
		if le := (*llm.Error)(nil); errors.As(err, &le) {
			c.PromptTokens, c.CompletionTokens, c.PromptCachedTokens = le.Usage.PromptTokens, le.Usage.CompletionTokens, le.Usage.PromptCachedTokens
			c.Retries = max(0, le.Attempts-1)
		}
		p.record(c)
		proxyError(w, http.StatusBadGateway, err.Error()) // llm errors never hold the key
		return
	}
	p.record(ProxyCall{Model: req.Model, PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, PromptCachedTokens: resp.Usage.PromptCachedTokens, Cached: resp.Cached,
		Retries: max(0, resp.Attempts-1)})
	p.mu.Lock()
	p.n++
	id := fmt.Sprintf("coordbench-proxy-%d", p.n)
	p.mu.Unlock()
	model := resp.Model
	if model == "" {
		model = req.Model
	}
	finish := resp.FinishReason
	if finish == "" {
		finish = "stop"
	}
	usage := map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
		"total_tokens": resp.Usage.PromptTokens + resp.Usage.CompletionTokens}
	if resp.Usage.PromptCachedTokens > 0 { // passed on as the upstream reported it (clamped)
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": resp.Usage.PromptCachedTokens}
	}
	out := map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"message": replyMessage(resp)}},
		"usage": usage,
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out) //nolint:errcheck // the client sees a short body
}

func proxyError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "coordbench_proxy_error"}}) //nolint:errcheck
}

// attribute puts the calls of one decision step into the notes of its
// agents, in turn (sorted agent ids, round robin): with one call per agent
// each agent's note holds its own call. An agent's note is Cached when
// every call given to it was a cache hit. The proxy's figures replace
// whatever the runner reported itself.
func attribute(notes map[string]coord.AgentNote, ids []string, calls []ProxyCall) {
	if len(ids) == 0 {
		return
	}
	per := make([][]ProxyCall, len(ids))
	for i, c := range calls {
		per[i%len(ids)] = append(per[i%len(ids)], c)
	}
	for i, id := range ids {
		n := notes[id]
		n.Calls, n.PromptTokens, n.CompletionTokens, n.PromptCachedTokens, n.Cached, n.Retries = 0, 0, 0, 0, false, 0
		var models []string
		cached := true
		for _, c := range per[i] {
			if !slices.Contains(models, c.Model) {
				models = append(models, c.Model)
			}
			n.Retries += c.Retries
			if c.Failed && c.PromptTokens+c.CompletionTokens == 0 {
				continue // failed without a reply: not a billed call, and no reply to cache
			}
			n.Calls++
			n.PromptTokens += c.PromptTokens
			n.CompletionTokens += c.CompletionTokens
			n.PromptCachedTokens += c.PromptCachedTokens
			cached = cached && c.Cached
		}
		n.Cached = n.Calls > 0 && cached
		if len(models) > 0 {
			n.Model = strings.Join(models, ",")
		}
		notes[id] = n
	}
}
