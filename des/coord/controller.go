package coord

import "context"

// Controller maps a decision payload to one action index per active agent.
// It sees only the payload. An error, a missing agent or an illegal index
// is not fatal: the interpreter substitutes the contract-safe fallback and
// audits it.
type Controller interface {
	// Name identifies the controller in manifests and summaries.
	Name() string
	// Source is how its decisions are audited (builtin, llm, external).
	Source() Source
	// Act returns the action index chosen for each active agent. ctx is
	// the episode's: a controller that waits (for a model, a process)
	// stops waiting once ctx is done and returns what it has, and the
	// interpreter falls back for the rest, so that a cancelled episode
	// still ends with its audit complete.
	Act(ctx context.Context, d *Decision) (map[string]int, error)
}
