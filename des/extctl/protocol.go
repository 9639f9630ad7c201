package extctl

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// Protocol is the version of the runner protocol (docs/external.md). It
// changes whenever a message changes shape or meaning; fields may be added
// to messages without a change, so runners must ignore the fields they do
// not know.
const Protocol = "coordbench-external/v1"

// Name is the controller name of every external runner, as recorded in
// metrics, manifests and run directory names.
const Name = "external"

// Message types.
const (
	MsgHello      = "hello"       // coordbench → runner, first line
	MsgReady      = "ready"       // runner → coordbench, the answer to hello
	MsgDecision   = "decision"    // coordbench → runner, one per decision step
	MsgActions    = "actions"     // runner → coordbench, the answer to a decision (type optional)
	MsgEpisodeEnd = "episode_end" // coordbench → runner, last line
)

// Hello is the first message: the protocol and the episode.
type Hello struct {
	Type           string  `json:"type"` // "hello"
	Protocol       string  `json:"protocol"`
	PayloadVersion string  `json:"payload_version"`
	TimeoutMS      int64   `json:"timeout_ms"` // the time the runner has for each answer
	Episode        Episode `json:"episode"`
}

// Episode is what the runner learns about the episode before it starts.
type Episode struct {
	Instance string `json:"instance"`
	Seed     uint64 `json:"seed"`
	// Paradigm is the authority mode with its five switches
	// (docs/paradigms.md).
	Paradigm coord.AuthorityMode `json:"paradigm"`
	// Agents lists every agent id of the plant: "plant", then "area:<id>"
	// and "cell:<id>" in instance order. Only some are active at each step.
	Agents []string `json:"agents"`
	// Horizon is the simulated time limit; MaxDecisions the decision
	// step limit. Either truncates the episode.
	Horizon      float64 `json:"horizon"`
	MaxDecisions int     `json:"max_decisions"`
}

// EpisodeOf describes an episode of plant p under mode with seed.
func EpisodeOf(p *factory.Plant, mode coord.AuthorityMode, seed uint64) Episode {
	ep := Episode{Instance: p.Inst.Name, Seed: seed, Paradigm: mode, Agents: []string{coord.RolePlant},
		Horizon: p.Inst.Horizon, MaxDecisions: p.Inst.Limits.MaxDecisions}
	for _, a := range p.Areas {
		ep.Agents = append(ep.Agents, coord.RoleArea+":"+a.ID)
	}
	for _, c := range p.Cells {
		ep.Agents = append(ep.Agents, coord.RoleCell+":"+c.ID)
	}
	return ep
}

// Ready is the runner's answer to hello. Every field but Type is optional.
type Ready struct {
	Type string `json:"type"` // "ready"
	// Protocol, if given, must equal Protocol.
	Protocol string `json:"protocol,omitempty"`
	// Name is free text for logs (e.g. "greedy_runner.py").
	Name string `json:"name,omitempty"`
	// Framework and Model, if given, are recorded in metrics.json and
	// manifest.json like an LLM controller's ("langgraph", "gpt-4o").
	Framework string `json:"framework,omitempty"`
	Model     string `json:"model,omitempty"`
}

// DecisionMsg carries one decision step: exactly the public payload.
type DecisionMsg struct {
	Type    string          `json:"type"` // "decision"
	Payload *coord.Decision `json:"payload"`
}

// Reply is the runner's answer to a decision.
type Reply struct {
	// Type, if given, must be "actions".
	Type string `json:"type,omitempty"`
	// Step, if given, must be the decision's step. A reply with an older
	// step is a stale line: it is skipped and the next line is read.
	Step *int `json:"step,omitempty"`
	// Actions maps each active agent to the index of its option.
	Actions map[string]json.RawMessage `json:"actions"`
	// Notes optionally reports, per agent, the model calls behind the
	// answer; they go into the audit and the secondary metrics.
	Notes map[string]ReplyNote `json:"notes,omitempty"`
}

// ReplyNote is what a runner may report about one agent's answer.
type ReplyNote struct {
	Model            string `json:"model,omitempty"`
	PromptTokens     int64  `json:"prompt_tokens,omitempty"`
	CompletionTokens int64  `json:"completion_tokens,omitempty"`
	// PromptCachedTokens are the part of PromptTokens the provider served
	// from its prompt cache (OpenAI's prompt_tokens_details.cached_tokens),
	// priced at the model's cached-input price; kept within
	// [0, PromptTokens].
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
	Calls              int   `json:"calls,omitempty"`
	// Cached: the answer came from a response cache (it cost nothing).
	Cached bool `json:"cached,omitempty"`
}

// maxNoteCount bounds a note's calls and token counts (a trillion): a
// suite's sums of them cannot overflow.
const maxNoteCount = 1 << 40

// Check rejects a note no model call gives: negative calls or tokens
// (which would lower a run's usage and its cost), or counts above a
// trillion. Prompt-cache hits are clamped instead (PromptCached).
func (n ReplyNote) Check() error {
	for _, c := range []struct {
		name string
		v    int64
	}{{"calls", int64(n.Calls)}, {"prompt_tokens", n.PromptTokens}, {"completion_tokens", n.CompletionTokens}} {
		if c.v < 0 || c.v > maxNoteCount {
			return fmt.Errorf("%s %d: want 0 to %d", c.name, c.v, int64(maxNoteCount))
		}
	}
	return nil
}

// PromptCached is n's prompt-cache hits within [0, its prompt tokens]:
// a runner's figure is untrusted.
func (n ReplyNote) PromptCached() int64 { return max(0, min(n.PromptCachedTokens, n.PromptTokens)) }

// EpisodeEnd is the last message. Metrics is the episode's metrics.json
// object, or null when the episode could not produce metrics.
type EpisodeEnd struct {
	Type    string `json:"type"` // "episode_end"
	Metrics any    `json:"metrics"`
}

// Defaults.
const (
	DefaultTimeout = 30 * time.Second
	DefaultGrace   = 3 * time.Second
	// MaxLine bounds one stdout line of the runner.
	MaxLine = 16 << 20
)
