// Package factory is the shop-floor world of the scheduling benchmark (the
// seed's event engine G, minus the domain-free kernel in package sim).
//
// It holds three things:
//
//   - the instance model: a Plant → Areas → Cells → Machines topology with
//     capability tables, product routes, setups, transport, power figures,
//     budgets, an arrival process and a seed split, read from a documented
//     YAML file (see docs/instance-format.md) and compiled into a [Plant];
//   - the reported instances embedded in the binary (A3C9-1, A5C12-1..3) and
//     a parametric generator for larger plants;
//   - the [Engine]: a pure, deterministic state machine that advances the
//     world autonomously until some decision is required or the episode
//     ends, then takes decisions back (Release, Defer, Assign). It knows
//     nothing of agents or paradigms; package coord maps its decision
//     points to agent activations.
//
// The engine does no I/O and calls nothing outside itself: each step
// (Advance, a commit, Truncate) appends the records of the events it
// realized to a batch that [Engine.Records] hands over, as raft's Ready
// hands over a node's output; package harness takes them after each step
// and passes them on (trace.jsonl, the interpreter's recent events).
package factory
