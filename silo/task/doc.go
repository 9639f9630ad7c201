// Package task is SILO-BENCH's task library: the 30 tasks (I-01 … III-30),
// their instances, gold answers, prompts, task files and scoring rules.
//
// An Instance is one task at one team size N: per-agent shards (JSON), the
// gold answer each agent must submit, the description template, and each
// agent's dependency set. Instances come three ways:
//
//   - Official(id, n): the published benchmark's instances for n in 2, 5,
//     10, 20, 50, 100, rebuilt by replaying the published generator's single
//     CPython random stream (seed 42, counts in that order, tasks I-01 …
//     III-30 per count) with package pyrand;
//   - Seeded(id, n, seed): fresh instances for any n >= 1 from an
//     independent stream per (task, n, seed), same generator;
//   - LoadFile(path): a published task file (WriteFile writes one).
//
// Merged(in) turns an N = k instance into its single-agent baseline: one
// agent holding the merged data, with the k-agent gold (merged.go). With
// one agent, descriptions drop their team-only wording (text.go).
//
// Solve computes the answers a perfect team submits from all shards
// (SolveScaled when the data were drawn for more agents than hold them);
// Correct is the S rule, Partial the P rule of the task's level (with the
// documented fixes), PartialPublished the P rule exactly as published, and
// PartialFine a per-element score for dict and matrix answers.
//
// Each task is one value in its level's file (level1.go, level2.go,
// level3.go): metadata, description, topology hint, generator and solver
// together; task.go builds the registry from them.
//
// Shards and answers cross package boundaries as JSON (json.RawMessage),
// compact, encoded as Python's json.dumps would (floats in Python repr).
// Prompts show shards as Python's str() would, as the published code does.
// Both encodings, and the Python values behind them, are package pyvalue's.
// See docs/silo-tasks.md for the task table, the two modes, the file
// format and our departures from the published code.
package task
