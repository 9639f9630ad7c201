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
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int64 { return u.PromptTokens + u.CompletionTokens }

// String formats u as "P prompt + C completion tokens".
func (u Usage) String() string {
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
