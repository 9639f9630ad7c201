// Package analyze computes the SILO-BENCH paper's behavioural analyses
// (§5.1 and appendix G.3: emergent topology and leader emergence, and the
// co-occurrence of failure modes) from finished run directories, for one
// run or a whole suite.
//
// Load finds the runs of a directory (a run written by "silo run --out" or
// a suite written by "silo suite --out", whose runs/<case_id>/ it reads;
// failed/ and temporary directories are ignored) and reads each run's
// result.json, manifest.json (if any) and run.db, the latter opened read
// only. From run.db it builds the run's communication graph (who sent to,
// or read from, whom; see Graph), from which Topology derives the per-agent
// degrees, the hub and whether a single leader emerged. Aggregate groups
// the runs by agent × level × N × protocol (topology, Table 16-style
// rounds), by agent × level × protocol (leader emergence against success,
// Table 17-style) and counts failure labels and label pairs per group
// (CoOccurrence). Write puts CSV files and one Markdown report into a
// directory; every output is sorted, so the same runs give the same bytes.
//
// The definitions (edges per protocol, hub, leader criterion, Gini) are in
// docs/silo-analyze.md.
package analyze
