// Package rescore recomputes the metrics of stored runs of the scheduling
// benchmark (`coordbench des rescore`) under a harness.Scorer, from the
// runs' artifacts alone: no episode is played, no controller or model is
// asked. A run directory gets a new metrics.json (and its manifest the
// new hash and scorer version), a suite directory that for each of its
// cases and new summary and aggregate files; the old files are kept in
// a backup directory, and a difference report (rescore.json, Report)
// says, per case and metric, what changed (docs/rescore.md).
package rescore
