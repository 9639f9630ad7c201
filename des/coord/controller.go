package coord

import (
	"context"
	"errors"
	"reflect"
)

// Controller maps a decision payload to one action index per active agent.
// It sees only the payload. An error, a missing agent or an illegal index
// is not fatal: the interpreter substitutes the contract-safe fallback and
// audits it. The one exception is an error wrapping ErrAbort.
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

// ErrAbort, wrapped in the error Act returns, ends the episode: the step's
// agents fall back and are audited as for any other error, then the run
// stops with status aborted and the error (harness Result.Err). It is for
// a controller that cannot play the episode as configured — its model
// cannot be reached, rejects the key, or is not in the replay cache — so
// that the run fails instead of being scored as if every agent had fallen
// back. A reply that is merely unusable is not a reason to abort.
var ErrAbort = errors.New("episode aborted")

// ViewChooser is a Controller that answers every active agent from that
// agent's view alone: its Act gives each agent ChooseView of the agent's
// view, whatever the other views. A runner may then call ChooseView on
// each view of the decision (Interpreter.ActiveViews) and commit the
// answers by position (Interpreter.ApplyList), without the answer map:
// harness.Run does, when IsViewChooser says so. The built-in rule, greedy
// and greedy_py controllers are ViewChoosers.
type ViewChooser interface {
	Controller
	// ChooseView returns the action index for the agent of v, as Act
	// would.
	ChooseView(v *View) int
	// Chooser returns the receiver itself. A type that embeds a
	// ViewChooser gets its ChooseView and Chooser too, but Chooser then
	// returns the embedded value, not the embedding one, whose own Act may
	// answer otherwise: IsViewChooser tells them apart.
	Chooser() Controller
}

// IsViewChooser returns c as a ViewChooser when its ChooseView is its own
// (declared by c's type, not promoted from a value it embeds, whose Act c
// may override): only then may a runner call ChooseView instead of Act.
func IsViewChooser(c Controller) (ViewChooser, bool) {
	vc, ok := c.(ViewChooser)
	if !ok || reflect.TypeOf(vc.Chooser()) != reflect.TypeOf(c) {
		return nil, false
	}
	return vc, true
}
