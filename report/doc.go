// Package report reads finished suite directories of either benchmark and
// builds the tables a paper needs from them, with the statistics behind
// them: for the scheduling benchmark (des suite) the paradigm matrix in
// the layout of the DESBench paper's Table 3 and the paired differences
// between paradigms; for the information-silo benchmark (silo suite) S,
// success, P, P_paper, D, D_reads, RCC and RCC_success by level × N × protocol × agent.
//
// It reads only what the suites write (suite.json and suite_summary.csv;
// silo_suite.json and aggregate.csv), recognises which benchmark wrote a
// directory from the files in it, and writes Markdown, CSV or LaTeX
// (Write). The same input gives byte-identical output. docs/report.md
// says what each table is and what the statistics assume.
//
// This is the first part of issue 15: the HTML report with figures, single
// run directories and --compare come later.
package report
