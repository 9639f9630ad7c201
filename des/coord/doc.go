// Package coord is the event interpreter I and the coordination protocol Γ
// of the scheduling benchmark.
//
// It turns the engine's decision points (an open release opportunity, a
// work item awaiting a cell) into agent activations under an authority mode
// (a paradigm, see [AuthorityMode]), builds each active agent's public
// payload ([Decision], [View]: local observation, protocol context, legal
// actions, options, action mask), validates the actions a [Controller]
// returns, substitutes the contract-safe fallback for missing or illegal
// ones, counts protocol messages, and commits the result back to the
// engine. Controllers see only the payload, never the engine.
package coord
