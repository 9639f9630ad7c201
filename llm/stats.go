package llm

import (
	"fmt"
	"sync/atomic"
)

// Stats are live counters for one endpoint (base URL) in this process. Every
// Client pointing at the same base URL shares one Stats, just as it shares the
// endpoint's concurrency and rate limits, so a progress line can show the
// whole process's traffic to that server. Read them with the accessor
// methods or Snapshot; they are updated atomically.
//
// Token counters count only what the server reported to this process
// (network responses, i.e. what was spent); cache hits are not included. To
// total the tokens of a run (identically on replay), sum Response.Usage.
type Stats struct {
	calls, inFlight, requests, retries atomic.Int64
	cacheHits, cacheMisses, failures   atomic.Int64
	promptTokens, completionTokens     atomic.Int64
	promptCachedTokens                 atomic.Int64
}

// StatsSnapshot is a point-in-time copy of Stats.
type StatsSnapshot struct {
	Calls            int64 `json:"calls"`             // Complete calls started
	InFlight         int64 `json:"in_flight"`         // HTTP requests currently outstanding
	Requests         int64 `json:"requests"`          // HTTP requests sent (attempts), compare with the server's log
	Retries          int64 `json:"retries"`           // attempts after the first, over all calls
	CacheHits        int64 `json:"cache_hits"`        // calls answered from the cache
	CacheMisses      int64 `json:"cache_misses"`      // calls with a cache that were not answered from it
	Failures         int64 `json:"failures"`          // Complete calls that returned an error
	PromptTokens     int64 `json:"prompt_tokens"`     // reported by the server (not cache hits)
	CompletionTokens int64 `json:"completion_tokens"` // reported by the server (not cache hits)
	// PromptCachedTokens are the part of PromptTokens the server served
	// from its prompt cache (Usage.PromptCachedTokens); omitted when 0.
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
}

// Snapshot returns the current values.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Calls:              s.calls.Load(),
		InFlight:           s.inFlight.Load(),
		Requests:           s.requests.Load(),
		Retries:            s.retries.Load(),
		CacheHits:          s.cacheHits.Load(),
		CacheMisses:        s.cacheMisses.Load(),
		Failures:           s.failures.Load(),
		PromptTokens:       s.promptTokens.Load(),
		CompletionTokens:   s.completionTokens.Load(),
		PromptCachedTokens: s.promptCachedTokens.Load(),
	}
}

// Calls is the number of Complete calls started.
func (s *Stats) Calls() int64 { return s.calls.Load() }

// InFlight is the number of HTTP requests currently outstanding.
func (s *Stats) InFlight() int64 { return s.inFlight.Load() }

// Requests is the number of HTTP requests (attempts) sent.
func (s *Stats) Requests() int64 { return s.requests.Load() }

// Retries is the number of attempts after the first, summed over calls.
func (s *Stats) Retries() int64 { return s.retries.Load() }

// CacheHits is the number of calls answered from the cache.
func (s *Stats) CacheHits() int64 { return s.cacheHits.Load() }

// CacheMisses is the number of calls with a cache that it did not answer.
func (s *Stats) CacheMisses() int64 { return s.cacheMisses.Load() }

// Failures is the number of Complete calls that returned an error.
func (s *Stats) Failures() int64 { return s.failures.Load() }

// Tokens is the usage reported by the server to this process (no cache hits).
func (s *Stats) Tokens() Usage {
	return Usage{PromptTokens: s.promptTokens.Load(), CompletionTokens: s.completionTokens.Load(),
		PromptCachedTokens: s.promptCachedTokens.Load()}
}

// String is a one-line summary for progress output, e.g.
// "llm: 3 in flight, 120 calls, 4 retries, 37 cache hits, 0 failures, 51234 tokens".
func (s *Stats) String() string { return s.Snapshot().String() }

// String formats the snapshot like Stats.String.
func (v StatsSnapshot) String() string {
	return fmt.Sprintf("llm: %d in flight, %d calls, %d retries, %d cache hits, %d failures, %d tokens",
		v.InFlight, v.Calls, v.Retries, v.CacheHits, v.Failures, v.PromptTokens+v.CompletionTokens)
}
