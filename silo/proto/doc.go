// Package proto implements SILO-BENCH's three communication protocols (P2P
// messages, broadcast, shared files "sfs") over one SQLite database per run.
//
// A run opens a Store, then for each round r = 1, 2, …: BeginRound(r), the
// agents' tool calls through Call (concurrently across agents, sequentially
// per agent), EndRound. Whatever is written in round t (messages, broadcasts,
// file writes and deletes) becomes visible in round t+1; reads see the state
// at the start of the round. Order-dependent effects are resolved at
// EndRound in the published execution order (agent id, then call sequence),
// whatever order the calls arrived in, so results, the tool-call log and the
// database are identical for every interleaving.
//
// Every message and file version carries a provenance set (the shard
// indices its author had seen); reading merges it into the reader's set
// (Seen). Calls are tallied per agent and per round (Counts), including the
// raw counts for the communication density D as the published code counts
// it and, for sfs, the paper's reads-by-others figure.
//
// Bad input never aborts the run: malformed arguments, unknown tools,
// oversized content or invalid paths give the agent an {"error": …} result,
// counted in Tally.Errors and logged. See docs/silo-protocols.md.
package proto
