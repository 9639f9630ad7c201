// Package harness runs scheduling-benchmark episodes: it wires the event
// engine (package factory), the interpreter and paradigm (package coord)
// and a controller into the decision loop, computes the 15 primary metrics
// and the secondary accounting, writes the run artifacts (metrics.json,
// trace.jsonl, decisions.jsonl, messages.jsonl, manifest.json,
// instance.json), and re-checks a run directory from its artifacts alone.
package harness
