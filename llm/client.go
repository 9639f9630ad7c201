package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool" // the result of a tool call; Message.ToolCallID names the call
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
	// ToolCalls, on assistant messages only, are the calls the model made
	// (Response.ToolCalls, sent back as the conversation continues). Such a
	// message may have empty Content.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID, on tool messages only (required there), is the ID of the
	// call that Content answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call the model asked for.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // the raw JSON text the model produced (may be invalid JSON: untrusted)
}

// Tool is one function offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object; nil means no parameters
}

// emptyParameters is sent for a Tool with nil Parameters.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// Response is the result of one Complete call.
type Response struct {
	Content      string // choices[0].message.content ("" if the server sent null)
	FinishReason string // choices[0].finish_reason, e.g. "stop", "length" or "tool_calls"
	Model        string // model named by the server (the configured model if it named none)
	// ToolCalls are choices[0].message.tool_calls (nil if none), in order.
	// Arguments are passed through exactly as the server sent them: they
	// may be invalid JSON, and the caller decides what to do with that.
	ToolCalls []ToolCall
	// Usage is the server's "usage" (zero if the server sent none). A cached
	// response carries the original usage.
	Usage Usage
	// Latency is the wall time of the call: for a network call from the first
	// attempt to the answer, including waits for slots, retries and backoff;
	// for a cache hit, the lookup. It is for monitoring, never for results.
	Latency time.Duration
	// Attempts is the number of HTTP attempts made (0 for a cache hit).
	Attempts int
	// Cached is true when the response came from the cache.
	Cached bool
}

// Client sends chat completions to one OpenAI-compatible endpoint with one
// model and one set of generation parameters. It is safe for concurrent use
// and cheap to create: the concurrency and rate limits, connection pool and
// Stats belong to the endpoint (base URL) and are shared by all Clients in
// the process that point at it.
type Client struct {
	cfg      Config
	ep       *endpoint
	key      *secret // a pointer, so that printing a Client shows an address, not the key
	svc      openai.ChatCompletionService
	endpoint string // BaseURL + "/chat/completions", for messages

	rngMu sync.Mutex
	rng   *rand.Rand // jitter only; seeded, so the sequence of delays is reproducible
}

type secret struct{ v string }

func (s *secret) String() string   { return "[REDACTED]" }
func (s *secret) GoString() string { return "[REDACTED]" }

// New validates cfg, fills defaults, reads the API key from the environment
// variable cfg.APIKeyEnv (once), and returns a Client. It is an error if
// APIKeyEnv names a variable that is unset or empty, except in replay mode,
// which never uses the network.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	key, err := readKey(cfg)
	if err != nil {
		return nil, err
	}
	ep, err := endpointFor(cfg)
	if err != nil {
		return nil, err
	}
	base, endpoint := cfg.BaseURL, cfg.BaseURL+"/chat/completions"
	if IsStubURL(base) {
		base, endpoint = stubBase, cfg.BaseURL // served in-process (stub.go)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(ep.http),
		option.WithMaxRetries(0), // this package owns the retry policy, so retries are visible and counted
		option.WithMiddleware(limitBodies),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	h := fnv.New64a()
	h.Write([]byte(cfg.BaseURL + "\x00" + cfg.Model))
	var seed uint64
	if cfg.Seed != nil {
		seed = uint64(*cfg.Seed)
	}
	return &Client{
		cfg: cfg,
		ep:  ep,
		key: &secret{key},
		// NewChatCompletionService (unlike openai.NewClient) reads no
		// OPENAI_* environment variables: the only key used is ours.
		svc:      openai.NewChatCompletionService(opts...),
		endpoint: endpoint,
		rng:      rand.New(rand.NewPCG(h.Sum64(), seed)),
	}, nil
}

// Config returns the configuration in effect, defaults filled in. It holds
// the name of the key's environment variable, never the key.
func (c *Client) Config() Config { return c.cfg }

// Stats returns the live counters of this Client's endpoint (base URL),
// shared by every Client of the same Config.Endpoints with that base URL.
func (c *Client) Stats() *Stats { return &c.ep.stats }

// Complete sends msgs and returns the first choice. Depending on the cache
// mode it may answer from the cache (Response.Cached) or, in replay mode,
// fail with a *CacheMissError without any network call. Other failures are
// *Error values naming the endpoint and model.
func (c *Client) Complete(ctx context.Context, msgs []Message) (*Response, error) {
	return c.CompleteWithTools(ctx, msgs, nil)
}

// CompleteWithTools is Complete with tools offered to the model (native
// function calling; tool_choice is left to the server default, "auto"). The
// model's calls are in Response.ToolCalls; to continue, append an assistant
// message carrying them and one RoleTool message per call with the result.
// The tools are part of the cache key. With len(tools) == 0 it is exactly
// Complete (same request, same cache key).
func (c *Client) CompleteWithTools(ctx context.Context, msgs []Message, tools []Tool) (*Response, error) {
	return c.CompleteRequest(ctx, Request{Messages: msgs, Tools: tools})
}

func (c *Client) complete(ctx context.Context, r Request) (*Response, error) {
	msgs, tools := r.Messages, r.Tools
	if len(msgs) == 0 {
		return nil, fmt.Errorf("llm: no messages to send (model %q)", c.cfg.Model)
	}
	if err := validateMessages(msgs); err != nil {
		return nil, err
	}
	ktools, err := normalizeTools(tools)
	if err != nil {
		return nil, err
	}
	choice, format, err := r.normalizeOptions()
	if err != nil {
		return nil, err
	}
	kr := keyRequest{
		Model:               c.cfg.Model,
		Messages:            cloneMessages(msgs),
		Tools:               ktools,
		Temperature:         c.cfg.Temperature,
		MaxCompletionTokens: c.cfg.MaxTokens,
		Seed:                c.cfg.Seed,
		ToolChoice:          choice,
		ResponseFormat:      format,
	}
	if c.cfg.CacheMode == CacheOff {
		return c.network(ctx, kr)
	}

	start := time.Now()
	cache := c.cfg.Cache
	if c.cfg.CacheKeyURL {
		kr.BaseURL = c.cfg.BaseURL
	}
	key, canonical := cacheKey(kr)
	lookup := func() (*Response, error) {
		e, ok, err := cache.get(ctx, key)
		if err == nil && !ok && !c.cfg.CacheKeyURL { // a cache written when keys held the URL
			old := kr
			old.BaseURL = c.cfg.BaseURL
			oldKey, _ := cacheKey(old)
			e, ok, err = cache.get(ctx, oldKey)
		}
		if err != nil || !ok {
			return nil, err
		}
		c.ep.stats.cacheHits.Add(1)
		return &Response{Content: e.Content, ToolCalls: e.ToolCalls, FinishReason: e.FinishReason, Model: e.Model, Usage: e.Usage,
			Latency: time.Since(start), Cached: true}, nil
	}
	if resp, err := lookup(); resp != nil || err != nil {
		return resp, err
	}
	if c.cfg.CacheMode == CacheReplay {
		c.ep.stats.cacheMisses.Add(1)
		return nil, &CacheMissError{Key: key, Endpoint: c.endpoint, Model: c.cfg.Model, Messages: len(msgs)}
	}

	// Read-write miss. Identical requests in flight in this process share
	// one network call; other processes are reconciled by put.
	f, leader := cache.join(key)
	if !leader {
		select {
		case <-f.done:
		case <-ctx.Done():
			c.ep.stats.cacheMisses.Add(1)
			return nil, c.ctxError(ctx.Err(), "waiting for an identical request in flight")
		}
		if f.resp != nil {
			c.ep.stats.cacheHits.Add(1)
			r := *f.resp
			r.ToolCalls = slices.Clone(r.ToolCalls)
			r.Cached, r.Attempts, r.Latency = true, 0, time.Since(start)
			return &r, nil
		}
		// The leader failed (perhaps only its context ended): try ourselves.
		return c.fill(ctx, kr, key, canonical)
	}
	// A leader that finished between our lookup and join has already
	// stored the answer: look again before going to the network.
	resp, err := lookup()
	if resp == nil && err == nil {
		resp, err = c.fill(ctx, kr, key, canonical)
	}
	var shared *Response
	if resp != nil {
		cp := *resp // followers copy from this; the caller may modify resp
		cp.ToolCalls = slices.Clone(cp.ToolCalls)
		shared = &cp
	}
	cache.land(key, f, shared)
	return resp, err
}

// fill makes the network call for a read-write miss and stores the answer.
func (c *Client) fill(ctx context.Context, kr keyRequest, key, canonical string) (*Response, error) {
	c.ep.stats.cacheMisses.Add(1)
	resp, err := c.network(ctx, kr)
	if err != nil {
		return nil, err
	}
	// The tokens are spent: store even if ctx has just ended.
	stored, err := c.cfg.Cache.put(context.WithoutCancel(ctx), key, c.redact(canonical),
		cacheEntry{Content: resp.Content, ToolCalls: resp.ToolCalls, Model: resp.Model, FinishReason: resp.FinishReason, Usage: resp.Usage})
	if err != nil {
		return nil, err
	}
	// If another process stored this key first, answer what the cache holds
	// so that this run and its replay agree.
	resp.Content, resp.ToolCalls, resp.Model, resp.FinishReason, resp.Usage =
		stored.Content, stored.ToolCalls, stored.Model, stored.FinishReason, stored.Usage
	return resp, nil
}

// failure is one failed attempt.
type failure struct {
	status     int
	reason     string
	retryable  bool
	retryAfter time.Duration
	err        error // context error, if that is what ended the attempt
	see        []string
	class      string // for a failure without an HTTP status (Error.Class)
	usage      Usage  // what the server reported for a reply it sent but that was unusable
}

// network sends the request with retries.
func (c *Client) network(ctx context.Context, kr keyRequest) (*Response, error) {
	params := openai.ChatCompletionNewParams{Model: kr.Model}
	if kr.Temperature != nil {
		params.Temperature = openai.Float(*kr.Temperature)
	}
	for _, m := range kr.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			if len(m.ToolCalls) == 0 {
				params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
				break
			}
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" { // else no "content" (OpenAI's null), as the model sent it
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		}
	}
	for _, t := range kr.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: wireParameters(t.Parameters)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if kr.MaxCompletionTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(kr.MaxCompletionTokens))
	}
	if kr.Seed != nil {
		params.Seed = openai.Int(*kr.Seed)
	}
	setRequestOptions(&params, kr)

	start := time.Now()
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			c.ep.stats.retries.Add(1)
		}
		f := c.ep.breaker.check(time.Now())
		var resp *Response
		if f == nil {
			resp, f = c.attempt(ctx, params)
			c.ep.breaker.record(f, time.Now())
		}
		if f == nil {
			resp.Attempts = attempt
			resp.Latency = time.Since(start)
			c.ep.stats.promptTokens.Add(resp.Usage.PromptTokens)
			c.ep.stats.completionTokens.Add(resp.Usage.CompletionTokens)
			c.ep.stats.promptCachedTokens.Add(resp.Usage.PromptCachedTokens)
			return resp, nil
		}
		c.ep.stats.promptTokens.Add(f.usage.PromptTokens) // an unusable reply's tokens are spent all the same
		c.ep.stats.completionTokens.Add(f.usage.CompletionTokens)
		c.ep.stats.promptCachedTokens.Add(f.usage.PromptCachedTokens)
		e := c.newError(f, attempt)
		e.Usage = f.usage
		if !f.retryable || f.err != nil || attempt >= c.cfg.MaxAttempts {
			return nil, e
		}
		if f.retryAfter > MaxRetryAfter {
			e.Reason += fmt.Sprintf(" (the server asked to wait %s, longer than the %s this client accepts)", f.retryAfter, MaxRetryAfter)
			return nil, e
		}
		wait := max(c.backoff(attempt), f.retryAfter)
		if c.cfg.OnRetry != nil {
			c.cfg.OnRetry(Retry{Attempt: attempt, MaxAttempts: c.cfg.MaxAttempts, Wait: wait, Err: e})
		}
		retryEvent(ctx, Retry{Attempt: attempt, MaxAttempts: c.cfg.MaxAttempts, Wait: wait, Err: e})
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			e.Err = ctx.Err()
			e.Reason += fmt.Sprintf("; %v while waiting %s to retry", ctx.Err(), wait.Round(time.Millisecond))
			return nil, e
		}
	}
}

// backoff is the wait after failed attempt n (1-based) when the server gave
// no Retry-After: base·2^(n-1) capped at max, with "equal jitter" (half
// fixed, half uniform) from the Client's seeded source.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.RetryBaseDelay
	for i := 1; i < n && d < c.cfg.RetryMaxDelay; i++ {
		d *= 2
	}
	d = min(d, c.cfg.RetryMaxDelay)
	c.rngMu.Lock()
	j := time.Duration(c.rng.Int64N(int64(d/2) + 1))
	c.rngMu.Unlock()
	return d/2 + j
}

// attempt makes one HTTP request, holding an endpoint slot and, if set, a
// rate-limit token.
func (c *Client) attempt(ctx context.Context, params openai.ChatCompletionNewParams) (*Response, *failure) {
	ep := c.ep
	select {
	case ep.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &failure{reason: fmt.Sprintf("%v while waiting for a concurrency slot", ctx.Err()), err: ctx.Err()}
	}
	defer func() { <-ep.sem }()
	if ep.limiter != nil {
		if err := ep.limiter.Wait(ctx); err != nil {
			return nil, &failure{reason: fmt.Sprintf("waiting for the rate limit (%g rpm): %v", ep.rpm, err), err: context.Cause(ctx), class: ClassCanceled}
		}
	}
	if c.cfg.Limiter != nil {
		release, f := c.permit(ctx)
		if f != nil {
			return nil, f
		}
		defer release()
	}

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var hres *http.Response
	ep.stats.requests.Add(1)
	ep.stats.inFlight.Add(1)
	cc, err := c.svc.New(actx, params, option.WithResponseInto(&hres))
	ep.stats.inFlight.Add(-1)

	switch {
	case ctx.Err() != nil: // the caller gave up: never retry
		return nil, &failure{reason: ctx.Err().Error(), err: ctx.Err()}
	case hres != nil && hres.StatusCode >= 400:
		body, _ := io.ReadAll(io.LimitReader(hres.Body, 16<<10))
		return nil, &failure{
			status:     hres.StatusCode,
			reason:     serverMessage(body),
			retryable:  retryableStatus(hres.StatusCode),
			retryAfter: parseRetryAfter(hres.Header, time.Now()),
		}
	case err != nil && actx.Err() != nil:
		return nil, &failure{reason: fmt.Sprintf("no complete response within the %s attempt timeout", c.cfg.Timeout), retryable: true, class: ClassTimeout}
	case err != nil && hres != nil:
		return nil, &failure{reason: fmt.Sprintf("unreadable response body (HTTP %d): %v", hres.StatusCode, err), retryable: true, class: ClassBadResponse}
	case err != nil:
		f := &failure{retryable: !permanentTransportError(err), class: ClassTransport}
		hint := ""
		if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
			hint, f.see = " (use http:// in the base URL)", []string{"BaseURL"}
		}
		msg := err.Error()
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			msg = ue.Err.Error() // the URL is already in the message
		}
		f.reason = "connection failed: " + msg + hint
		return nil, f
	}

	if cc == nil {
		return nil, &failure{reason: "response has no choices", class: ClassBadResponse}
	}
	if len(cc.Choices) == 0 { // unusable, but the tokens it reports are spent
		return nil, &failure{reason: "response has no choices", class: ClassBadResponse, usage: usageOf(cc.Usage)}
	}
	ch := cc.Choices[0]
	model := cc.Model
	if model == "" {
		model = c.cfg.Model
	}
	return &Response{
		Content:      ch.Message.Content,
		ToolCalls:    toolCalls(ch.Message.ToolCalls),
		FinishReason: ch.FinishReason,
		Model:        model,
		Usage:        usageOf(cc.Usage),
	}, nil
}

// usageOf is the server's usage object as a Usage. Its
// prompt_tokens_details.cached_tokens (the provider's prompt-cache hits)
// is untrusted: it is clamped to [0, prompt_tokens], so that the tokens
// priced at a prompt-cache discount are never more than the prompt.
func usageOf(u openai.CompletionUsage) Usage {
	return Usage{
		PromptTokens:       u.PromptTokens,
		CompletionTokens:   u.CompletionTokens,
		PromptCachedTokens: clampPromptCached(u.PromptTokensDetails.CachedTokens, u.PromptTokens),
	}
}

// toolCalls converts the tool calls of a response (nil if none).
func toolCalls(in []openai.ChatCompletionMessageToolCallUnion) []ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]ToolCall, 0, len(in))
	for _, tc := range in {
		call := ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if tc.Type == "custom" { // never offered, but keep what the server sent
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		} else if raw := tc.Function.JSON.Arguments.Raw(); call.Arguments == "" && strings.HasPrefix(raw, "{") {
			// Some servers send the arguments as a JSON object rather
			// than as a string holding JSON: keep the object's text.
			call.Arguments = raw
		}
		out = append(out, call)
	}
	return out
}

// validateMessages checks roles and the tool-calling fields.
func validateMessages(msgs []Message) error {
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
			if m.ToolCallID != "" {
				return fmt.Errorf("llm: message %d: role %q has a ToolCallID: only tool messages answer a call", i, m.Role)
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("llm: message %d: role %q needs a ToolCallID (the ID of the call it answers)", i, m.Role)
			}
		default:
			return fmt.Errorf("llm: message %d: role %q: want system, user, assistant or tool", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return fmt.Errorf("llm: message %d: role %q has ToolCalls: only assistant messages carry tool calls", i, m.Role)
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return fmt.Errorf("llm: message %d: tool call %d: ID and Name must not be empty", i, j)
			}
		}
	}
	return nil
}

// normalizeTools checks tools and returns a copy as sent (and keyed):
// Parameters compacted, nil Parameters replaced by an empty object schema.
// It returns nil for no tools, so that the request and key are Complete's.
func normalizeTools(tools []Tool) ([]Tool, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	out := make([]Tool, len(tools))
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("llm: tool %d: name is empty", i)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("llm: tools %d and %d are both named %q", j, i, t.Name)
		}
		seen[t.Name] = i
		params := emptyParameters
		if len(t.Parameters) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("llm: tool %q: parameters must be a JSON object (a JSON Schema)", t.Name)
			}
			var b bytes.Buffer
			if err := json.Compact(&b, t.Parameters); err != nil {
				return nil, fmt.Errorf("llm: tool %q: parameters: %v", t.Name, err)
			}
			params = b.Bytes()
		}
		out[i] = Tool{Name: t.Name, Description: t.Description, Parameters: params}
	}
	return out, nil
}

// wireParameters turns a JSON object into openai-go's map, keeping each
// value's JSON text exactly (no float round trip).
func wireParameters(p json.RawMessage) shared.FunctionParameters {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(p, &obj) // checked by normalizeTools
	out := make(shared.FunctionParameters, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	return out
}

// cloneMessages copies msgs and their ToolCalls, so that the request cannot
// change under us.
func cloneMessages(msgs []Message) []Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].ToolCalls = slices.Clone(out[i].ToolCalls)
	}
	return out
}

// contextOverflow matches the ways servers (OpenAI, vLLM, llama.cpp,
// Ollama, LiteLLM) say that a prompt is longer than the model's context.
var contextOverflow = regexp.MustCompile(`(?i)context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|exceeds? the (model'?s )?(max|context)`)

func (c *Client) newError(f *failure, attempts int) *Error {
	e := &Error{
		Method:     http.MethodPost,
		Endpoint:   c.endpoint,
		Model:      c.cfg.Model,
		Status:     f.status,
		Reason:     c.redact(f.reason),
		Attempts:   attempts,
		Retryable:  f.retryable,
		RetryAfter: f.retryAfter,
		Err:        f.err,
		See:        f.see,
		Class:      f.classify(),
	}
	switch f.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		if c.cfg.APIKeyEnv == "" {
			e.Hint, e.See = "the server wants an API key: name its environment variable", []string{"APIKeyEnv"}
		} else {
			e.Hint = fmt.Sprintf("check the API key in $%s and its access to this model", c.cfg.APIKeyEnv)
		}
	case http.StatusNotFound:
		e.Hint, e.See = "check the base URL (usually ending in /v1) and the model name", []string{"BaseURL", "Model"}
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
		if contextOverflow.MatchString(f.reason) {
			e.Hint, e.ContextOverflow = "the prompt does not fit the model's context window: bound it or use a model with a longer context", true
		} else {
			e.Hint, e.See = "the server rejected the request: check the model name, max tokens, temperature and seed",
				[]string{"Model", "MaxTokens", "Temperature", "Seed"}
		}
	}
	return e
}

func (c *Client) ctxError(err error, doing string) *Error {
	return &Error{Method: http.MethodPost, Endpoint: c.endpoint, Model: c.cfg.Model,
		Reason: fmt.Sprintf("%v while %s", err, doing), Err: err, Class: ClassCanceled}
}

// classify is the failure's Error.Class.
func (f *failure) classify() string {
	switch s := f.status; {
	case f.err != nil:
		return ClassCanceled
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return ClassAuth
	case s == http.StatusTooManyRequests:
		return ClassRateLimit
	case s != 0 && retryableStatus(s):
		return ClassServer
	case s != 0:
		return ClassRequest
	}
	return f.class
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if k := c.key.v; len(k) >= 4 {
		s = strings.ReplaceAll(s, k, "[REDACTED]")
	}
	return s
}

// retryableStatus: 408 (request timeout), 429 (rate limit) and every 5xx are
// transient; any other 4xx (400, 401, 403, 404, 422, ...) will fail again.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// permanentTransportError reports transport failures that a retry cannot
// fix: TLS certificate problems and talking TLS to a plain-HTTP server.
func permanentTransportError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	return errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) || errors.As(err, &recErr) ||
		// net/http turns the RecordHeaderError of an https URL pointing at a
		// plain-HTTP server into this plain error.
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds, or
// an HTTP date). It returns 0 if neither is present or parseable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// serverMessage extracts a human message from an error body: OpenAI's
// {"error":{"message":...}}, {"error":"..."}, {"message":...} or
// {"detail":...}; otherwise the start of the body as text.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return clip(nested.Message)
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return clip(s)
		case v.Message != "":
			return clip(v.Message)
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return clip(s)
		case len(v.Detail) > 0:
			return clip(string(v.Detail))
		}
	}
	return clip(string(body))
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const n = 300
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
