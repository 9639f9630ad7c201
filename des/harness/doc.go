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
// Run owns the loop. The controller sees only payloads, the interpreter
// reads the engine and commits into it, and none of them calls back into
// Run or out to another consumer: each step returns what it produced and
// Run passes it on, as an application drives raft's RawNode (Ready,
// persist and send, Advance). Each turn is Advance → Records → Next → Act
// → Apply:
//
//	eng := factory.NewEngine(plant, seed)
//	in, _ := coord.NewInterpreter(eng, paradigm)
//	for eng.Advance() {                  // run events until a decision is due
//		recs := eng.Records()             // the records of the events since the last turn
//		trace.WriteRecords(recs)          // trace.jsonl; then Episode.Observer, if any
//		in.Observe(recs)                  // the payload's recent_events
//		d := in.Next()                    // the decision payload: active agents, views, masks
//		actions, err := ctrl.Act(ctx, d)  // one action index per active agent
//		audits, err := in.ApplyNotes(d, actions, ctrl.Source(), err, notes)
//		// write audits (decisions.jsonl, timing.jsonl), then truncate if stuck
//	}
//	// pass the last records on (episode_end), write messages.jsonl,
//	// close the trace, compute the metrics
//
// Advance is the engine's autonomous part: it applies every event of the
// current instant and moves the clock on until a decision is required, and
// returns false once the episode has ended (done, deadlock, time_limit)
// or was truncated. Every step of the engine (Advance, the commits Apply
// makes, Truncate) appends the records of the events it realized to a
// batch, and Records hands the batch over: Run takes it once per turn,
// before Next, so the trace writer, the observer and the interpreter each
// see every record in the engine's order, and all of a turn's records
// before the controller is asked (the records of a commit arrive with the
// next Advance's). Next turns the pending decision into the payload of
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
// The loop lives in Stepper (stepper.go), turned inside out: Start runs
// to the first decision, Answer or AnswerList commit an answer and run to
// the next, Finish computes the Result. Run is a Stepper answered by the
// episode's controller; a caller whose answers come from elsewhere (the
// socket transport's learner) drives a Stepper itself, on its own
// goroutine, with the same audits and artifacts.
//
// # Reading a decision of `des run`
//
// To follow one decision from the loop to its commit and its trace lines,
// read, in this order: Run (run.go) and Stepper (stepper.go); factory.Engine.Advance and the event
// handlers it calls (engine.go, physics.go), which only append records;
// Engine.Records; handOn.records (run.go), which passes them to
// TraceWriter.WriteRecords, the Observer and coord.Interpreter.Observe;
// Interpreter.Next (interpreter.go, views.go); chooseEach and the
// controller's ChooseView (or act and its Act); Interpreter.ApplyList (or
// ApplyNotes), apply and commit, which call factory.Engine.Assign,
// Release or Defer (actions.go), which again only append records; back in
// Run, the audits are written, and the next turn's Records carries the
// commit's records to the trace.
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
