package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coordbench/coordbench/internal/opterr"
)

// ErrCacheMiss is returned (wrapped in a *CacheMissError) by Complete in
// replay mode when the request is not in the cache. Test with errors.Is.
var ErrCacheMiss = errors.New("llm: cache miss")

// CacheMissError reports a replay-mode miss; no network call was made.
type CacheMissError struct {
	Key      string // hex SHA-256 cache key
	Endpoint string
	Model    string
	Messages int // number of messages in the request
}

func (e *CacheMissError) Error() string {
	return fmt.Sprintf("llm: replay mode: cache miss for key %s (model %q, endpoint %s, %d messages); no request was sent; cache mode read-write fills the cache%s",
		e.Key, e.Model, e.Endpoint, e.Messages, opterr.SeeText([]string{"CacheMode"}))
}

// Is makes errors.Is(err, ErrCacheMiss) true.
func (e *CacheMissError) Is(target error) bool { return target == ErrCacheMiss }

// ErrContextOverflow: the server said the prompt is longer than the
// model's context window. An *Error says so to errors.Is.
var ErrContextOverflow = errors.New("llm: prompt longer than the model's context window")

// Error is a failed Complete call. Its message names the endpoint and the
// model, and never contains the API key:
//
//	llm: POST http://127.0.0.1:PORT/v1/chat/completions (model "m"): 401 Unauthorized: <server message>
type Error struct {
	Method   string // "POST"
	Endpoint string // full URL of the chat-completions endpoint, without credentials
	Model    string
	Status   int    // HTTP status of the last attempt; 0 if none was received
	Reason   string // what went wrong in the last attempt (server message, timeout, ...), redacted
	Hint     string // what to do, if there is an obvious next step
	Attempts int    // attempts made
	// See names the Config fields the failure points at (the Hint's
	// BaseURL and Model, say), in the message's " (see ...)".
	See []string
	// ContextOverflow: the server said the prompt does not fit the
	// model's context window (errors.Is(err, ErrContextOverflow)).
	ContextOverflow bool
	// Retryable reports whether the last failure was of a retryable kind
	// (429, 5xx, timeout, dropped connection, bad body); if so, the call
	// gave up because the attempt bound or the context ended.
	Retryable bool
	// RetryAfter is the server's advised wait on the last attempt, if any.
	RetryAfter time.Duration
	// Class is what kind of failure the last attempt was (ClassTransport,
	// ClassAuth, ...; see ErrorClass).
	Class string
	// Usage is the token usage the server reported with an unusable reply
	// (an empty "choices" list with a "usage"): tokens spent although the
	// call failed. Stats counts them too.
	Usage Usage
	Err   error // underlying cause, e.g. context.Canceled; may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s %s (model %q): ", e.Method, e.Endpoint, e.Model)
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
		if e.Reason != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Reason)
	if e.Retryable && e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		b.WriteString(" — ")
		b.WriteString(e.Hint)
	}
	b.WriteString(opterr.SeeText(e.See))
	return b.String()
}

// Is makes errors.Is(err, ErrContextOverflow) true for an overflow.
func (e *Error) Is(target error) bool { return target == ErrContextOverflow && e.ContextOverflow }

// Unwrap returns the underlying cause (for errors.Is with context errors).
func (e *Error) Unwrap() error { return e.Err }

// Error classes (Error.Class, ErrorClass, Retry): what kind of failure a
// model call met. Every one but ClassCanceled means that the endpoint, the
// key, the quota or the cache could not give an answer; none of them is a
// reply the model produced.
const (
	ClassTransport   = "transport"    // no HTTP response: connection refused, DNS, TLS, dropped connection
	ClassTimeout     = "timeout"      // no complete response within the attempt timeout
	ClassAuth        = "auth"         // 401 or 403: the key is missing or rejected
	ClassRateLimit   = "rate_limit"   // 429: rate limit or exhausted quota
	ClassServer      = "server"       // 408 or 5xx
	ClassRequest     = "request"      // any other 4xx: model name, base URL, parameters, context overflow
	ClassBadResponse = "bad_response" // a response the client cannot read (unreadable body, no choices)
	ClassCacheMiss   = "cache_miss"   // replay mode: the request is not in the cache
	ClassCanceled    = "canceled"     // the caller's context ended
)

// ErrorClass is the class of an error returned by Complete: one of the
// Class constants, or "" for an error that is none of these (nil, or a
// request the client refused to send, such as an empty message list).
func ErrorClass(err error) string {
	var miss *CacheMissError
	var e *Error
	switch {
	case errors.As(err, &miss):
		return ClassCacheMiss
	case errors.As(err, &e):
		return e.Class
	}
	return ""
}

// Retry is a failed attempt that the client is about to retry
// (Config.OnRetry).
type Retry struct {
	Attempt     int           // the attempt that failed, 1-based
	MaxAttempts int           // Config.MaxAttempts
	Wait        time.Duration // until the next attempt
	Err         *Error        // the failure (Class, Status, Reason, Endpoint, Model)
}
