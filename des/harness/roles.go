package harness

import (
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
)

// RoleUsage is what one role's agents decided in an episode and what their
// model calls took (metrics.json secondary.by_role, for model-backed
// controllers): the role's share of G_ds's audited answers, of G_fb, and
// of the calls and tokens of secondary.llm_calls, prompt_tokens and
// completion_tokens. It is read from the audits, so it is reproducible
// like the metrics (a replay from the response cache gives the same).
type RoleUsage struct {
	Decisions          int   `json:"decisions"` // audited answers of the role's agents
	Fallbacks          int   `json:"fallbacks"` // of them, replaced by the contract-safe fallback
	LLMCalls           int   `json:"llm_calls"`
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
	// Models are the models the role's notes name, sorted, comma-separated
	// (one for a controller with one model, or the role's own with a
	// model per role).
	Models string `json:"models,omitempty"`
}

// RoleTiming is the wall-clock side of a role's answers in an episode
// (episode_timing.json by_role): how long its model-backed answers took,
// how many came from the response cache and how many retries their calls
// needed. Like all of episode_timing.json it depends on the machine, the
// endpoint and the cache, never on what was decided.
type RoleTiming struct {
	Answers       int     `json:"answers"`        // answers with a controller note (timing.jsonl lines)
	CachedAnswers int     `json:"cached_answers"` // of them, every call from the response cache
	Retries       int     `json:"retries"`        // attempts beyond the first, over the answers' calls
	LatencyMSSum  float64 `json:"latency_ms_sum"` // summed over the answers
	LatencyMSMax  float64 `json:"latency_ms_max"`
}

// roleTally sums the audits of an episode by role: a handful of roles, so
// a slice searched in order (no map on the hot path).
type roleTally struct {
	rows []roleRow
}

type roleRow struct {
	role   string
	usage  RoleUsage
	timing RoleTiming
	models []string
}

// add counts audit a.
func (t *roleTally) add(a *coord.Audit) {
	var r *roleRow
	for i := range t.rows {
		if t.rows[i].role == a.Role {
			r = &t.rows[i]
			break
		}
	}
	if r == nil {
		t.rows = append(t.rows, roleRow{role: a.Role})
		r = &t.rows[len(t.rows)-1]
	}
	r.usage.Decisions++
	if a.Source == coord.SourceFallback {
		r.usage.Fallbacks++
	}
	n := a.AgentNote
	if n == nil {
		return
	}
	r.usage.LLMCalls += n.Calls
	r.usage.PromptTokens += n.PromptTokens
	r.usage.CompletionTokens += n.CompletionTokens
	r.usage.PromptCachedTokens += n.PromptCachedTokens
	if n.Model != "" && !slices.Contains(r.models, n.Model) {
		r.models = append(r.models, n.Model)
	}
	tm := &r.timing
	tm.Answers++
	if n.Cached {
		tm.CachedAnswers++
	}
	tm.Retries += n.Retries
	tm.LatencyMSSum += n.LatencyMS
	tm.LatencyMSMax = max(tm.LatencyMSMax, n.LatencyMS)
}

// usage returns the usage by role (nil for an episode with no audits).
func (t *roleTally) usage() map[string]RoleUsage {
	if len(t.rows) == 0 {
		return nil
	}
	m := make(map[string]RoleUsage, len(t.rows))
	for _, r := range t.rows {
		u := r.usage
		slices.Sort(r.models)
		u.Models = strings.Join(r.models, ",")
		m[r.role] = u
	}
	return m
}

// timing returns the timing by role of the roles whose answers carried
// notes (nil when none did).
func (t *roleTally) timing() map[string]RoleTiming {
	var m map[string]RoleTiming
	for _, r := range t.rows {
		if r.timing.Answers == 0 {
			continue
		}
		if m == nil {
			m = make(map[string]RoleTiming, len(t.rows))
		}
		m[r.role] = r.timing
	}
	return m
}
