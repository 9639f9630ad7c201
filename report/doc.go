// Package report reads finished suite directories and run directories of
// either benchmark and builds what a paper needs from them: one
// self-contained HTML page with figures (inline SVG drawn here, no
// script, nothing fetched), and the tables alone as Markdown, CSV or
// LaTeX, with the statistics behind them.
//
// For the scheduling benchmark (des suite): the paradigm matrix in the
// layout of the DESBench paper's Table 3, the four metric families per
// instance, the paired differences between paradigms, and per case a
// Gantt chart of every machine, the plant power against its cap, the
// decision sources over time and the messages by type, replayed from the
// case's trace.jsonl, decisions.jsonl and metrics.json. For the
// information-silo benchmark (silo suite): success, P, RCC, density and
// tokens against N, failure modes and their co-occurrence, the table of
// S, success, P, P_paper, D, D_reads, RCC and RCC_success by level × N ×
// protocol × agent, and per run the communication graph round by round
// and the transcript of package transcript. Options.Compare pairs two suites
// case by case.
//
// It reads only what the suites and runs write, recognises which
// benchmark wrote a directory from the files in it, and gives the same
// bytes for the same input. docs/report.md says what each figure and table
// is and what the statistics assume.
package report
