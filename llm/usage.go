package llm

import (
	"fmt"
	"sort"
	"sync"
)

// Usage is token usage as reported by the server in a response's "usage"
// object. A cached response carries the usage of the original response, so
// totals summed from Responses are identical when a run is replayed.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// PromptCachedTokens are the prompt tokens the provider served from
	// its own prompt cache (OpenAI's
	// usage.prompt_tokens_details.cached_tokens): a part of PromptTokens
	// that providers bill at a discount. It has nothing to do with this
	// package's response cache (Response.Cached): a response replayed
	// from that cache carries the PromptCachedTokens of the original
	// call. The server's figure is untrusted and kept within
	// [0, PromptTokens]; it is 0 when the server reports none, and then
	// left out of the JSON.
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.PromptCachedTokens += v.PromptCachedTokens
}

// clampPromptCached returns cached bounded to [0, prompt] (0 when prompt
// is not positive): a server's cached_tokens that is negative or exceeds
// its prompt_tokens is not believed beyond what it can mean.
func clampPromptCached(cached, prompt int64) int64 {
	return max(0, min(cached, prompt))
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int64 { return u.PromptTokens + u.CompletionTokens }

// String formats u as "P prompt + C completion tokens", with
// " (K prompt-cached)" after the prompt tokens when the server reported
// prompt-cache hits.
func (u Usage) String() string {
	if u.PromptCachedTokens != 0 {
		return fmt.Sprintf("%d prompt (%d prompt-cached) + %d completion tokens", u.PromptTokens, u.PromptCachedTokens, u.CompletionTokens)
	}
	return fmt.Sprintf("%d prompt + %d completion tokens", u.PromptTokens, u.CompletionTokens)
}

// Tally sums Usage and call counts under names (agents, episodes, suites, ...).
// The zero value is ready to use and it is safe for concurrent use.
type Tally struct {
	mu sync.Mutex
	m  map[string]*tallyEntry
}

type tallyEntry struct {
	usage Usage
	calls int64
}

// Add records one call with usage u under name.
func (t *Tally) Add(name string, u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]*tallyEntry)
	}
	e := t.m[name]
	if e == nil {
		e = &tallyEntry{}
		t.m[name] = e
	}
	e.usage.Add(u)
	e.calls++
}

// Get returns the usage and number of calls recorded under name.
func (t *Tally) Get(name string) (Usage, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[name]; e != nil {
		return e.usage, e.calls
	}
	return Usage{}, 0
}

// Total returns the usage and number of calls over all names.
func (t *Tally) Total() (Usage, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var u Usage
	var n int64
	for _, e := range t.m {
		u.Add(e.usage)
		n += e.calls
	}
	return u, n
}

// Names returns the recorded names, sorted.
func (t *Tally) Names() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.m))
	for k := range t.m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
