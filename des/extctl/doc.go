// Package extctl runs a controller written in any language as a separate
// process: the external multi-agent system of docs/external.md.
//
// A Controller starts the runner command once per episode (sh -c CMD, in
// its own process group) and speaks newline-delimited JSON over the
// runner's stdin and stdout:
//
//	coordbench → runner   {"type":"hello", "protocol":…, "episode":{…}}
//	runner → coordbench   {"type":"ready"}
//	coordbench → runner   {"type":"decision", "payload":{Decision}}      one per step
//	runner → coordbench   {"step":N, "actions":{agent_id: index}}        one line
//	coordbench → runner   {"type":"episode_end", "metrics":{…}}
//
// Nothing the runner does can hang an episode. A reply that is
// malformed or names the wrong agents is replaced by the contract-safe
// fallback, and the audit of every affected agent carries the raw reply
// and the reason (coord.Annotator). A runner that exits, times out or
// never says ready is stopped for good, and its episode is not a result:
// Act returns an error wrapping coord.ErrAbort, the harness ends the
// episode there with status aborted, and Failed reports why. With the
// model-call proxy, a decision whose proxied calls all failed is the
// runner's own (source external, not llm), and an upstream outage
// (ProxyConfig.MaxFailures failed calls in a row) aborts the episode too. Everything the
// runner writes to stderr, plus the stdout lines that are not protocol
// messages, goes to Config.Stderr.
//
// The Controller's parts change for different reasons and live apart:
// process.go handles the runner's process (start, deadlines, stop),
// reply.go says what a reply line means for a decision (a pure function,
// tested by table), violation.go names the protocol violations and
// records them, and summary.go sums them up for controller.json.
//
// A Session runs a command's runners over run directories: a runner per
// episode with its stderr and controller.json in the episode's directory,
// the model-call proxy they share, and the interrupt that must reach a
// runner living in a process group of its own. des run, des suite and
// des case use it; the CLI only parses flags and prints.
//
// Check runs a fixed set of short episodes against a runner and reports
// every protocol violation and the reply latency (the conformance checker
// of `coordbench des check-controller`).
package extctl
