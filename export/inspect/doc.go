// Package inspect exports finished coordbench runs as evaluation logs of
// the Inspect framework (UK AISI's inspect_ai; the JSON flavour of its
// EvalLog, log format version 2, as its log-schema.json defines it) and
// as flat JSON lines, one record per run, for pandas or DuckDB.
//
// It reads run directories as the benchmarks write them (des run and a des
// suite's cases/<id>/, silo run and a silo suite's runs/<id>/) and never
// changes them: Read turns a directory into Runs, a benchmark-neutral
// record of one run (its ids, metrics, model usage and transcript);
// Logs groups Runs into EvalLogs (one per directory and controller or
// agent and model); WriteLogs and WriteJSONL write them. Every output is
// a function of the files read: the same directories give the same bytes.
// docs/export.md describes the mapping.
package inspect
