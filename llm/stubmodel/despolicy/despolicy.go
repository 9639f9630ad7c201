// Package despolicy is the stub model's policies for the scheduling
// benchmark (coordbench llm stub --policy builtin|random|faults): an
// OpenAI-compatible chat-completions handler (Stub) that reads the
// coordbench decision payload in the prompt, as des/llmctl's controllers
// send it, and answers with an action index, for offline dry runs of a
// whole LLM pipeline and for tests. It lives beside package stubmodel, not
// under des/, because it is a model a stub plays; it imports the
// scheduling benchmark's payload and rule controller, which stubmodel
// must not.
package despolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// names are the policies of a Stub.
var names = []string{"builtin", "random", "faults"}

// Policies are the policies of a Stub (builtin, random, faults) as stub
// policies; each summary is the Stub's Log.
func Policies() []stubmodel.Policy {
	ps := make([]stubmodel.Policy, len(names))
	for i, name := range names {
		ps[i] = stubmodel.Policy{Name: name, New: func(o stubmodel.Options) (http.Handler, func() string) {
			s := newStub(name)
			s.Seed = o.Seed
			return s, func() string { return fmt.Sprint(s.Log()) }
		}}
	}
	return ps
}

// Stub is an OpenAI-compatible chat-completions handler that answers from
// the coordbench payload in the last user message (a message without one
// gets stubmodel.Generic's answer): "builtin" with the rule
// controller's choice, "random" with a legal index drawn from a hash of the
// prompt (so the same prompt always gets the same answer, whatever the call
// order), "faults" with a scripted mix of valid answers, prose, code
// fences, illegal indices, empty replies and transient HTTP errors (429 and
// 500 on a prompt's first attempt, then a valid answer). Token usage is
// counted from the text: one token per 4 bytes, rounded up.
type Stub struct {
	Policy string
	// PromptCache makes the stub report, as a provider's prompt cache
	// would, the tokens of the request's leading system messages (the
	// constant part of every scheduling prompt; one token per 4 bytes,
	// rounded down) as usage.prompt_tokens_details.cached_tokens. Off by
	// default: no prompt_tokens_details is sent.
	PromptCache bool
	// Seed seeds the generic answers (stubmodel.Generic) given to the
	// requests whose last user message holds no decision payload.
	Seed int64

	generic  http.Handler // made on first use
	once     sync.Once
	mu       sync.Mutex
	attempts map[uint64]int
	log      map[string]int
}

// New returns a stub model with the given policy (builtin, random or
// faults).
func New(policy string) (*Stub, error) {
	if !slices.Contains(names, policy) {
		return nil, fmt.Errorf("unknown stub policy %q (want builtin, random or faults)", policy)
	}
	return newStub(policy), nil
}

func newStub(policy string) *Stub {
	return &Stub{Policy: policy, attempts: map[uint64]int{}, log: map[string]int{}}
}

// Log counts what the stub returned, by outcome: "valid", "prose",
// "fence", "illegal", "empty", "http_429", "http_500", "bad_request",
// "generic" (a request without a decision payload, answered by
// stubmodel.Generic).
func (s *Stub) Log() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.log))
	for k, v := range s.log {
		out[k] = v
	}
	return out
}

func (s *Stub) count(outcome string) {
	s.mu.Lock()
	s.log[outcome]++
	s.mu.Unlock()
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// ServeHTTP implements http.Handler for POST .../chat/completions.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found: POST /v1/chat/completions"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
	if err != nil || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		s.count("bad_request")
		writeError(w, http.StatusBadRequest, "malformed chat request")
		return
	}
	prompt, user := "", ""
	prefix, inPrefix := 0, true
	for _, m := range req.Messages {
		prompt += m.Content
		if m.Role == "user" {
			user = m.Content
		}
		if inPrefix = inPrefix && m.Role == "system"; inPrefix {
			prefix += len(m.Content)
		}
	}
	v, err := llmctl.ParseView(user)
	if err != nil { // not a decision: a generic answer
		s.count("generic")
		s.once.Do(func() { s.generic = stubmodel.Handler(stubmodel.Generic(s.Seed)) })
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.generic.ServeHTTP(w, r)
		return
	}
	h := fnv.New64a()
	h.Write([]byte(prompt))
	key := h.Sum64()
	reply, outcome := s.answer(v, key)
	switch outcome {
	case "http_429":
		s.count(outcome)
		w.Header().Set("Retry-After", "0")
		writeError(w, http.StatusTooManyRequests, "rate limited (stub)")
		return
	case "http_500":
		s.count(outcome)
		writeError(w, http.StatusInternalServerError, "internal error (stub)")
		return
	}
	s.count(outcome)
	model := req.Model
	if model == "" {
		model = "coordbench-stub"
	}
	usage := map[string]any{"prompt_tokens": tokens(prompt), "completion_tokens": tokens(reply),
		"total_tokens": tokens(prompt) + tokens(reply)}
	if s.PromptCache {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": PromptCached(prefix)}
	}
	resp := map[string]any{
		"id": fmt.Sprintf("stub-%x", key), "object": "chat.completion", "created": 0, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply}}},
		"usage": usage,
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp) //nolint:errcheck // the client sees a short body
}

func (s *Stub) answer(v *coord.View, key uint64) (reply, outcome string) {
	valid := func(i int) (string, string) { return fmt.Sprintf(`{"action": %d}`, i), "valid" }
	pick := func() int {
		a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
		return a[v.AgentID]
	}
	switch s.Policy {
	case "random":
		return valid(v.LegalActions[int(key%uint64(len(v.LegalActions)))])
	case "faults":
		s.mu.Lock()
		s.attempts[key]++
		n := s.attempts[key]
		s.mu.Unlock()
		switch key % 10 {
		case 0:
			return "I would pick the second option because it is faster.", "prose"
		case 1:
			return fmt.Sprintf("```json\n{\"action\": %d}\n```", pick()), "fence"
		case 2:
			return `{"action": 9999}`, "illegal"
		case 3:
			return "", "empty"
		case 4:
			if n == 1 {
				return "", "http_429"
			}
		case 5:
			if n == 1 {
				return "", "http_500"
			}
		}
	}
	return valid(pick())
}

// tokens approximates a token count: one per 4 bytes, rounded up.
func tokens(s string) int { return (len(s) + 3) / 4 }

// PromptCached is the prompt-cache hits a Stub with PromptCache reports
// for a request whose leading system messages hold n bytes: one token per
// 4 whole bytes (never more than the prompt's tokens).
func PromptCached(n int) int { return n / 4 }

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "stub_error"}}) //nolint:errcheck
}
