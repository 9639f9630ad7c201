// Package stubmodel is a stub OpenAI-compatible chat-completions server: the
// tests' fake endpoint, and the offline stub model that `coordbench llm stub`
// serves (it ships in the binary, so it is named for what it is, not as a
// test helper).
//
// It listens on 127.0.0.1 (via net/http/httptest), decodes every
// POST .../chat/completions request into a [ChatRequest], asks a handler what to
// do, and records both the request and what it actually sent back. Tests can
// then assert on the request shape (model, messages, temperature, seed,
// max_completion_tokens, Authorization header), on concurrency seen by the
// server, and compare their own accounting with the server's [Record] log.
//
// A handler returns a [Reply]: a normal completion ([Text]), tool calls
// ([Calls]), or a fault:
// an HTTP error status with an optional Retry-After ([Status], [RateLimited]),
// a hang until the client gives up ([Hang]), a dropped connection ([Drop]), a
// body cut short ([Truncated]), a body that is not JSON ([NonJSON]), malformed
// JSON ([BadJSON]), or any raw body ([Raw]). Every reply may add latency
// (Reply.Delay, or [WithDelay]).
//
//	srv := stubmodel.NewServer(stubmodel.Sequence(
//		stubmodel.RateLimited("1"),
//		stubmodel.Status(500, "boom"),
//		stubmodel.Text("hello"),
//	))
//	defer srv.Close()
//	// point the client at srv.URL (".../v1"), then inspect srv.Log().
//
// Handlers are called from many goroutines at once and must be safe for
// concurrent use; the helpers in this package are.
//
// A request's log entry is complete, and it has left the server's in-flight
// count, before any byte of its answer is sent: right after a client call
// returns, Log, Completed and MaxConcurrent already account for it. (A hung
// request is logged when the server notices that the client left.)
//
// Native function calling: the server decodes "tools" into ChatRequest.Tools
// and the tool fields of messages (assistant "tool_calls", tool
// "tool_call_id") into Message; a request whose tools or tool calls are not
// of type "function" is refused (400). A reply with ToolCalls ([Calls])
// carries them as the message's "tool_calls" (type "function"; content null
// when Reply.Content is empty), with finish_reason "tool_calls" by default.
//
// Token counts in a normal reply are deterministic: unless Reply.Usage is set,
// prompt tokens are the number of whitespace-separated words in all request
// messages (their content, and the name and arguments of each tool call they
// carry), and completion tokens the number of words in the reply content plus
// those in the name and arguments of each tool call of the reply. Tool
// definitions are not counted. No prompt-cache hits are reported
// (usage.prompt_tokens_details) unless Reply.Usage sets PromptCachedTokens.
//
// The models `coordbench llm stub` plays are [Policy] values, looked up by
// name in a [Policies] list. This package knows no benchmark; the policies
// that read a benchmark's prompts live beside it: despolicy (builtin,
// random, faults: the scheduling benchmark's decision payloads) and
// silogather (silo-gather: SILO-BENCH's LLM agents). This package plays
// [Generic] (generic.go), a legal answer to any request from its tools,
// response_format or option list, which the other policies give to the
// requests they do not understand; and [Script] (script.go), scripted
// replies answered before any policy. [Policies] are also the llm
// package's Stubs: a "stub:POLICY" base URL plays them in-process.
package stubmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Message is one chat message as received by the server.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // an assistant message's calls
	ToolCallID string     `json:"tool_call_id,omitempty"` // a tool message's answered call
}

// ToolCall is one function call: in a request's assistant message, or in a
// Reply.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // sent verbatim (need not be valid JSON)
}

// Tool is one function offered in a request's "tools".
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // as received; nil if absent
}

// ChatRequest is a decoded chat-completions request, as the server received it.
type ChatRequest struct {
	Seq      int       // 0-based arrival order at this server (index in Log)
	Received time.Time // when the request arrived (server clock)
	Method   string
	Path     string
	Header   http.Header
	Body     []byte   // raw request body
	Fields   []string // sorted top-level JSON keys of the body

	Model               string
	Messages            []Message
	Tools               []Tool   // "tools" (function tools), nil if not sent
	Temperature         *float64 // nil if not sent
	MaxCompletionTokens *int64   // "max_completion_tokens", nil if not sent
	MaxTokens           *int64   // legacy "max_tokens", nil if not sent
	Seed                *int64   // nil if not sent
	// ToolChoice and ResponseFormat are "tool_choice" and
	// "response_format" as received (nil if not sent).
	ToolChoice     json.RawMessage
	ResponseFormat json.RawMessage

	// DecodeError is set when the body was not a valid chat request; the
	// server then answers 400 without calling the handler.
	DecodeError string
}

// BearerToken returns the token in the Authorization header ("" if none).
func (r ChatRequest) BearerToken() string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return t
	}
	return ""
}

// Fault says how the server misbehaves for one request.
type Fault string

// The faults a Reply can inject.
const (
	FaultNone      Fault = ""          // a normal 200 completion
	FaultStatus    Fault = "status"    // Reply.Status with an OpenAI-style error body
	FaultHang      Fault = "hang"      // never answer; wait until the client disconnects or the server closes
	FaultDrop      Fault = "drop"      // hijack the connection and close it without a response
	FaultTruncated Fault = "truncated" // 200, Content-Length of the full body, half the body, then close
	FaultBadJSON   Fault = "badjson"   // 200, application/json, a complete but malformed JSON body
	FaultNonJSON   Fault = "nonjson"   // 200, text/html body
	FaultRaw       Fault = "raw"       // Reply.Status, Reply.ContentType, Reply.Body verbatim
)

// Usage is the token usage a reply reports.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// PromptCachedTokens, when not 0, is reported as
	// usage.prompt_tokens_details.cached_tokens (the provider's prompt-cache
	// hits), verbatim: a test may send values no real server would
	// (negative, above PromptTokens). When 0 the body has no
	// prompt_tokens_details, as before.
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
}

// Reply tells the server what to answer to one request.
type Reply struct {
	Fault Fault

	// Normal completion (FaultNone).
	Content      string
	ToolCalls    []ToolCall // sent as the message's tool_calls (see package doc)
	FinishReason string     // default "stop", or "tool_calls" when ToolCalls is set
	Model        string     // default: the requested model
	Usage        *Usage     // default: word counts (see package doc)

	// FaultStatus and FaultRaw.
	Status      int
	Message     string // error message in the body (FaultStatus)
	RetryAfter  string // Retry-After header value, e.g. "1" or an HTTP date
	ContentType string // FaultRaw
	Body        string // FaultRaw

	// Delay is added before the server answers (latency injection). It is
	// cut short if the client disconnects.
	Delay time.Duration
}

// Text is a normal completion with the given content.
func Text(content string) Reply { return Reply{Content: content} }

// Calls is a normal completion in which the model calls the given tools
// (finish_reason "tool_calls", content null). An empty ID is sent as
// "call_<number of request messages>_<index of the call>", which depends only
// on the request and is unique across the turns of one conversation.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Status is an HTTP error with an OpenAI-style JSON error body.
func Status(code int, message string) Reply {
	return Reply{Fault: FaultStatus, Status: code, Message: message}
}

// RateLimited is a 429 with the given Retry-After header ("" for none).
func RateLimited(retryAfter string) Reply {
	return Reply{Fault: FaultStatus, Status: http.StatusTooManyRequests, Message: "rate limited", RetryAfter: retryAfter}
}

// Hang never answers: the server waits until the client gives up.
func Hang() Reply { return Reply{Fault: FaultHang} }

// Drop closes the connection without sending a response.
func Drop() Reply { return Reply{Fault: FaultDrop} }

// Truncated sends a 200 whose body stops halfway, then closes the connection.
func Truncated() Reply { return Reply{Fault: FaultTruncated, Content: "this reply is cut short"} }

// BadJSON sends a complete 200 application/json body that is not valid JSON.
func BadJSON() Reply { return Reply{Fault: FaultBadJSON} }

// NonJSON sends a 200 text/html body, as a misconfigured proxy might.
func NonJSON() Reply { return Reply{Fault: FaultNonJSON} }

// Raw sends the body verbatim with the given status and content type; use it
// for edge cases such as empty choices, null content or missing usage.
func Raw(status int, contentType, body string) Reply {
	return Reply{Fault: FaultRaw, Status: status, ContentType: contentType, Body: body}
}

// NoChoices sends a 200 completion with an empty "choices" list and the
// given usage: an unusable reply whose tokens were spent all the same.
func NoChoices(promptTokens, completionTokens int64) Reply {
	return Raw(200, "application/json", fmt.Sprintf(
		`{"id":"nochoices","object":"chat.completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		promptTokens, completionTokens, promptTokens+completionTokens))
}

// WithDelay returns r with latency d added.
func WithDelay(r Reply, d time.Duration) Reply { r.Delay = d; return r }

// Sequence returns a handler that answers the i-th request (in arrival order
// at the handler) with replies[i], and every request after the last with the
// last reply.
func Sequence(replies ...Reply) func(ChatRequest) Reply {
	if len(replies) == 0 {
		panic("stubmodel.Sequence: no replies")
	}
	var mu sync.Mutex
	i := 0
	return func(ChatRequest) Reply {
		mu.Lock()
		defer mu.Unlock()
		r := replies[min(i, len(replies)-1)]
		i++
		return r
	}
}

// Echo is a handler that answers "echo: " followed by the content of the last
// message. It makes replies depend only on the request, which suits cache and
// concurrency tests.
func Echo(req ChatRequest) Reply {
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Content
	}
	return Text("echo: " + last)
}

// Outcome is what the server actually did for one request.
type Outcome string

// Outcomes recorded in the log.
const (
	OutcomePending    Outcome = "pending"     // still being answered (or hanging)
	OutcomeOK         Outcome = "ok"          // a 200 completion with usage
	OutcomeStatus     Outcome = "status"      // an HTTP error status
	OutcomeHang       Outcome = "hang"        // no answer; the client went away (or the server closed)
	OutcomeDrop       Outcome = "drop"        // connection closed without a response
	OutcomeTruncated  Outcome = "truncated"   // body cut short
	OutcomeBadJSON    Outcome = "badjson"     // malformed JSON body
	OutcomeNonJSON    Outcome = "nonjson"     // text/html body
	OutcomeRaw        Outcome = "raw"         // a verbatim body
	OutcomeBadRequest Outcome = "bad-request" // the request itself could not be decoded (400)
	OutcomeCanceled   Outcome = "canceled"    // the client went away during an injected Delay
)

// Record is one entry of the server's log: a request and what was returned.
type Record struct {
	Request ChatRequest
	Reply   Reply     // what the handler asked for
	Outcome Outcome   // what the server did
	Status  int       // HTTP status sent (0 if none was sent)
	Usage   Usage     // usage reported in the body (OutcomeOK only)
	Start   time.Time // when the request arrived
	End     time.Time // when the server began sending its answer (or the client left)
}

// Server is a running fake server. Create it with [NewServer] and stop it
// with Close.
type Server struct {
	// URL is the base URL to give a client: "http://127.0.0.1:PORT/v1".
	URL string

	ts      *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu          sync.Mutex
	handler     func(ChatRequest) Reply
	seq         int
	log         []Record
	inFlight    int
	maxInFlight int
}

// NewServer starts a server on 127.0.0.1 that answers with handler.
// A nil handler is [Echo].
func NewServer(handler func(ChatRequest) Reply) *Server {
	if handler == nil {
		handler = Echo
	}
	s := &Server{handler: handler, closing: make(chan struct{})}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Hijacked and dropped connections make net/http log; keep test output clean.
	s.ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.ts.Start()
	s.URL = s.ts.URL + "/v1"
	return s
}

// SetHandler replaces the handler for requests that arrive from now on.
func (s *Server) SetHandler(h func(ChatRequest) Reply) {
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// Close releases hanging requests, closes all connections and stops the
// server. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}

// Log returns a copy of the log in arrival order (Record.Request.Seq = index).
// An entry is complete before the client can see its answer; requests still
// being answered (including hangs) have OutcomePending.
func (s *Server) Log() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(s.log))
	copy(out, s.log)
	return out
}

// Requests returns the logged requests in arrival order.
func (s *Server) Requests() []ChatRequest {
	recs := s.Log()
	out := make([]ChatRequest, len(recs))
	for i, r := range recs {
		out[i] = r.Request
	}
	return out
}

// Count returns the number of requests the server has received so far,
// including ones still being answered (requests with a body it could not
// decode included).
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Completed returns the number of normal completions (OutcomeOK) sent, and
// the total usage they reported.
func (s *Server) Completed() (n int, total Usage) {
	for _, r := range s.Log() {
		if r.Outcome == OutcomeOK {
			n++
			total.PromptTokens += r.Usage.PromptTokens
			total.CompletionTokens += r.Usage.CompletionTokens
			total.PromptCachedTokens += r.Usage.PromptCachedTokens
		}
	}
	return n, total
}

// MaxConcurrent returns the largest number of requests the server was
// handling at the same time. A request counts from its arrival until the
// server starts sending its answer; a hanging one until the server notices
// that the client left.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	req := decode(r, received)
	s.mu.Lock()
	seq := s.seq
	s.seq++
	req.Seq = seq
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.log = append(s.log, Record{Request: req, Outcome: OutcomePending, Start: received})
	handler := s.handler
	s.mu.Unlock()

	// finish completes the log entry and leaves the in-flight count. It is
	// called once, before the client can see the answer, so a client that
	// has its answer always finds the entry complete in Log.
	rec := Record{Request: req, Start: received}
	finish := func(o Outcome, status int) {
		rec.Outcome, rec.Status, rec.End = o, status, time.Now()
		s.mu.Lock()
		s.inFlight--
		s.log[seq] = rec
		s.mu.Unlock()
	}

	if req.DecodeError != "" {
		finish(OutcomeBadRequest, http.StatusBadRequest)
		writeError(w, http.StatusBadRequest, req.DecodeError, "")
		return
	}
	reply := handler(req)
	rec.Reply = reply
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			finish(OutcomeCanceled, 0)
			return
		case <-s.closing:
			t.Stop()
			finish(OutcomeCanceled, 0)
			panic(http.ErrAbortHandler) // close the connection; never an empty 200
		}
	}

	switch reply.Fault {
	case FaultNone:
		body, u := completionBody(req, reply)
		rec.Usage = u
		finish(OutcomeOK, http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case FaultStatus:
		finish(OutcomeStatus, reply.Status)
		writeError(w, reply.Status, reply.Message, reply.RetryAfter)
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		finish(OutcomeHang, 0)
		panic(http.ErrAbortHandler) // close the connection; never an empty 200
	case FaultDrop:
		conn, _, err := http.NewResponseController(w).Hijack()
		finish(OutcomeDrop, 0)
		if err == nil {
			_ = conn.Close()
		}
	case FaultTruncated:
		body, _ := completionBody(req, reply)
		conn, buf, err := http.NewResponseController(w).Hijack()
		finish(OutcomeTruncated, http.StatusOK)
		if err == nil {
			writeRaw(buf, http.StatusOK, "application/json", len(body), body[:len(body)/2])
			_ = conn.Close()
		}
	case FaultBadJSON:
		finish(OutcomeBadJSON, http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "chatcmpl-bad", "choices": [{"message": {"content": "x"`)
	case FaultNonJSON:
		finish(OutcomeNonJSON, http.StatusOK)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1> (from a proxy)</body></html>\n")
	case FaultRaw:
		finish(OutcomeRaw, reply.Status)
		writeRawReply(w, reply)
	default:
		finish(OutcomeStatus, http.StatusInternalServerError)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("stubmodel: unknown fault %q", reply.Fault), "")
	}
}

// writeRawReply sends a FaultRaw reply: its status, content type,
// Retry-After and body verbatim.
func writeRawReply(w http.ResponseWriter, reply Reply) {
	if reply.ContentType != "" {
		w.Header().Set("Content-Type", reply.ContentType)
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	w.WriteHeader(reply.Status)
	_, _ = io.WriteString(w, reply.Body)
}

func writeRaw(buf *bufio.ReadWriter, status int, contentType string, contentLength int, body []byte) {
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		status, http.StatusText(status), contentType, contentLength)
	_, _ = buf.Write(body)
	_ = buf.Flush()
}

func writeError(w http.ResponseWriter, status int, message, retryAfter string) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message,
		"type":    "stubmodel_error",
		"code":    status,
	}})
	_, _ = w.Write(b)
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // a string, text parts, or null
	ToolCalls  []wireToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools"`
	Temperature         *float64        `json:"temperature"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	MaxTokens           *int64          `json:"max_tokens"`
	Seed                *int64          `json:"seed"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      json.RawMessage `json:"response_format"`
}

// MaxRequestBody bounds a request body the stub reads: a larger one is
// answered 400, unread beyond the bound.
const MaxRequestBody = 16 << 20

func decode(r *http.Request, at time.Time) ChatRequest {
	req := ChatRequest{Received: at, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= MaxRequestBody {
		buf.Grow(int(r.ContentLength) + 1)
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, MaxRequestBody+1))
	body := buf.Bytes()
	req.Body = body
	switch {
	case err != nil:
		req.DecodeError = "reading body: " + err.Error()
		return req
	case len(body) > MaxRequestBody:
		req.Body = nil
		req.DecodeError = fmt.Sprintf("stubmodel: body larger than %d bytes", MaxRequestBody)
		return req
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req.DecodeError = fmt.Sprintf("stubmodel: want POST .../chat/completions, got %s %s", r.Method, r.URL.Path)
		return req
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(body) {
			req.DecodeError = "stubmodel: body is not a JSON object: " + err.Error()
		} else {
			req.DecodeError = "stubmodel: bad chat request: " + err.Error()
		}
		return req
	}
	req.Fields = topLevelKeys(body)
	req.Model, req.Temperature, req.MaxCompletionTokens, req.MaxTokens, req.Seed =
		w.Model, w.Temperature, w.MaxCompletionTokens, w.MaxTokens, w.Seed
	req.ToolChoice, req.ResponseFormat = nonNull(w.ToolChoice), nonNull(w.ResponseFormat)
	for i, m := range w.Messages {
		content, err := messageText(m.Content)
		if err != nil {
			req.DecodeError = fmt.Sprintf("stubmodel: messages[%d].content: %v", i, err)
			return req
		}
		msg := Message{Role: m.Role, Content: content, ToolCallID: m.ToolCallID}
		for j, tc := range m.ToolCalls {
			if tc.Type != "function" {
				req.DecodeError = fmt.Sprintf("stubmodel: messages[%d].tool_calls[%d].type %q: want \"function\"", i, j, tc.Type)
				return req
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for i, t := range w.Tools {
		if t.Type != "function" {
			req.DecodeError = fmt.Sprintf("stubmodel: tools[%d].type %q: want \"function\"", i, t.Type)
			return req
		}
		p := t.Function.Parameters
		if string(p) == "null" {
			p = nil
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: p})
	}
	return req
}

// nonNull is raw, or nil for JSON null.
func nonNull(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// messageText accepts a string content or an array of {"type":"text","text":...} parts.
func messageText(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case []any:
		var b strings.Builder
		for k, p := range t {
			part, ok := p.(map[string]any)
			text, ok2 := part["text"].(string)
			if !ok || (!ok2 && part["text"] != nil) {
				return "", fmt.Errorf("want a string or text parts: part %d is not {\"type\": ..., \"text\": \"...\"}", k)
			}
			b.WriteString(text)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("want a string or text parts, got %T", v)
}

// words counts the whitespace-separated words of s, as len(strings.Fields(s))
// does, without allocating.
func words(s string) int64 {
	var n int64
	in := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// topLevelKeys returns the sorted keys of a valid JSON object.
func topLevelKeys(body []byte) []string {
	var keys []string
	depth := 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if depth == 1 {
				k := j + 1 // a key is followed by ':'
				for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\r' || body[k] == '\n') {
					k++
				}
				if k < len(body) && body[k] == ':' {
					var key string
					if json.Unmarshal(body[i:j+1], &key) == nil {
						keys = append(keys, key)
					}
				}
			}
			i = j
		}
	}
	sort.Strings(keys)
	return keys
}

func callWords(calls []ToolCall) (n int64) {
	for _, c := range calls {
		n += words(c.Name) + words(c.Arguments)
	}
	return n
}

func completionBody(req ChatRequest, reply Reply) ([]byte, Usage) {
	u := Usage{CompletionTokens: words(reply.Content) + callWords(reply.ToolCalls)}
	for _, m := range req.Messages {
		u.PromptTokens += words(m.Content) + callWords(m.ToolCalls)
	}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	model := reply.Model
	if model == "" {
		model = req.Model
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	usage := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.PromptCachedTokens != 0 {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": u.PromptCachedTokens}
	}
	message := map[string]any{"role": "assistant", "content": reply.Content}
	if len(reply.ToolCalls) > 0 {
		calls := make([]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", len(req.Messages), i)
			}
			calls[i] = map[string]any{
				"id":       id,
				"type":     "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments},
			}
		}
		message["tool_calls"] = calls
		if reply.Content == "" {
			message["content"] = nil
		}
	}
	body, _ := json.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-stubmodel-%d", req.Seq),
		"object":  "chat.completion",
		"created": 0,
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       message,
			"finish_reason": finish,
			"logprobs":      nil,
		}},
		"usage": usage,
	})
	return body, u
}

// UnreachableURL returns a base URL ("http://127.0.0.1:PORT/v1") where
// nothing listens: a loopback port it has just bound and released, for
// testing a client against a dead endpoint (connection refused).
func UnreachableURL() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return "http://" + addr + "/v1", ln.Close()
}
