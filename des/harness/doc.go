// Package harness runs scheduling-benchmark episodes: it wires the event
// engine (package factory), the interpreter and paradigm (package coord)
// and a controller into the decision loop, computes the 15 primary metrics
// and the secondary accounting, writes the run artifacts (metrics.json,
// trace.jsonl, decisions.jsonl, messages.jsonl, manifest.json,
// instance.json); its subpackage check re-checks a run directory from its
// artifacts alone. It also runs suites of episodes (suite*.go, on the
// runner both benchmarks share, package suiterun) and measures throughput
// (bench.go).
//
// # The episode loop
//
// Run owns the loop; the engine, the interpreter and the controller never
// call each other. Each turn is Advance → Next → Act → Apply:
//
//	eng := factory.NewEngine(plant, seed, tracers)  // tracers: trace.jsonl and the interpreter
//	in, _ := coord.NewInterpreter(eng, paradigm)
//	for eng.Advance() {                  // run events until a decision is due
//		d := in.Next()                    // the decision payload: active agents, views, masks
//		actions, err := ctrl.Act(ctx, d)  // one action index per active agent
//		audits, err := in.ApplyNotes(d, actions, ctrl.Source(), err, notes)
//		// write audits (decisions.jsonl, timing.jsonl), then truncate if stuck
//	}
//	// write messages.jsonl, close the trace, compute the metrics
//
// Advance is the engine's autonomous part: it applies every event of the
// current instant and moves the clock on until a decision is required, and
// returns false once the episode has ended (done, deadlock, time_limit)
// or was truncated. Next turns the pending decision into the payload of
// docs/payload.md; the payload belongs to the interpreter and is reused by
// the next Next, so a controller that keeps it must copy it. Act sees only
// that payload, never the engine. Right after Act, Run asks the controller
// for its Source and, if it is a coord.Annotator, for its per-agent Notes
// (raw replies, tokens, latency). ApplyNotes checks every action against
// the mask, substitutes the contract-safe fallback for missing or illegal
// ones (and for all of them when Act failed or panicked), commits the
// result to the protocol and the engine, and returns one audit per active
// agent; the next Advance carries on from the new state. For a controller
// that answers each view alone (a coord.ViewChooser: the built-in rule,
// greedy and greedy_py), Run calls its ChooseView on each of the
// interpreter's ActiveViews and hands the answers to ApplyList, by
// position: the same checks and audits as Act and ApplyNotes, without the
// answer map.
//
// # How an episode ends
//
// Besides the engine's own ends, Run truncates an episode when decision
// steps change nothing physical for NoProgressSteps steps in a row
// (no_progress), when they reach MaxDecisions (decision_limit; both limits
// are the instance's factory.LimitSpec), and when the protocol or Apply
// fails (controller_failed; Result.Err says why). A controller cannot stop
// an episode, with one exception: its errors, panics and bad answers
// become audited fallbacks, but an Act error wrapping coord.ErrAbort (an
// LLM controller whose model cannot be reached, rejects the key, or
// misses the replay cache) ends it once that step's fallbacks are
// committed and audited: the status is aborted, Result.Err wraps the
// controller's error, and every artifact is still written, so a CLI run
// exits non-zero and a suite case fails (and reruns on resume). A failure to write an artifact does not stop it either: Run
// keeps the first one and reports it in Result.Err at the end, unless a
// failure that stopped the episode takes precedence.
//
// # Contexts
//
// The ctx given to Run goes to every Act, and only there. Cancelling it
// does not cut the episode short: a controller that waits (for a model,
// for a runner process) stops waiting, its agents fall back, and the
// episode runs on to its end, quickly, with its audit and artifacts
// complete. RunSuite keeps cancellation away from the cases it has
// started, so that they finish.
package harness
