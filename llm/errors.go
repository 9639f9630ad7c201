package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
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
	return fmt.Sprintf("llm: replay mode: cache miss for key %s (model %q, endpoint %s, %d messages); no request was sent — re-run with --llm-cache-mode read-write to fill the cache",
		e.Key, e.Model, e.Endpoint, e.Messages)
}

// Is makes errors.Is(err, ErrCacheMiss) true.
func (e *CacheMissError) Is(target error) bool { return target == ErrCacheMiss }

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
	// Retryable reports whether the last failure was of a retryable kind
	// (429, 5xx, timeout, dropped connection, bad body); if so, the call
	// gave up because the attempt bound or the context ended.
	Retryable bool
	// RetryAfter is the server's advised wait on the last attempt, if any.
	RetryAfter time.Duration
	Err        error // underlying cause, e.g. context.Canceled; may be nil
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
	return b.String()
}

// Unwrap returns the underlying cause (for errors.Is with context errors).
func (e *Error) Unwrap() error { return e.Err }
