// Package llmagent is SILO-BENCH's LLM agents: one model-backed agent per
// shard, playing the synchronous rounds of package round over any
// OpenAI-compatible endpoint (package llm).
//
// What is where:
//   - Agent (agent.go) implements round.Agent: each turn is one model call,
//     then the tool calls of the reply, executed in order through the
//     protocol; a reply without a valid call gets feedback and wastes the
//     turn. Config holds the model, the tool format (the published XML-like
//     calls, or native function calling), scaffolds, the context budget and
//     the failure policy.
//   - Team (team.go) builds the N agents of a run, and writes their turn log
//     (turns.jsonl: every prompt, reply, parsed call, result and token
//     count; timing.jsonl) into the run directory; a journal (journal.go)
//     writes each turn as it ends, so an interrupted run keeps what it paid
//     for. TurnRecord and Conversation (record.go) read the log back: the
//     transcript of silo show, and the exact request of any past call.
//   - The context budget (history.go): the full history by default, as
//     published; with a budget, whole earlier turns are dropped, oldest
//     first, before a prompt that would not leave the reply reserve free.
//   - Prompts (prompt.go): the system prompt of each protocol and the
//     prompt scaffolds (planning, reminders, scratchpad, no topology hint).
//   - Tools (tools.go): the protocol's tools as the prompt describes them
//     and as native function schemas.
//   - Parsing (parse.go): the tool calls of a reply, the tool-result blocks
//     the model reads back, and the feedback sent when a reply holds none.
//
// The call format is the published one:
//
//	<tool_call>
//	<tool>write_file</tool>
//	<parameters>
//	<path>agent_0_data</path>
//	<content>[1, 2, 3]</content>
//	</parameters>
//	</tool_call>
//
// Parsing follows the published rules (design notes, silobench.md §3):
// every non-greedy <tool_call>…</tool_call> block in order; in each, the
// first <tool>…</tool>, stripped, is the name (a block without one is
// skipped); the first <parameters>…</parameters> is scanned for child
// elements <name>value</name> (name matching \w+, closing tag repeating it,
// non-greedy, later duplicates win). Each value is stripped and typed in
// this order: case-insensitive true/false as bool, Python int() syntax as an
// integer, Python float() syntax (nan and inf included) as a float, text
// starting with '[' or '{' that is valid JSON as that JSON value, otherwise
// the stripped string. Matching spans newlines.
//
// Two deliberate departures: a block whose stripped name is empty is
// skipped like one without a name, and only ASCII digits count as digits in
// numbers.
//
// The stub model that plays these agents' side offline (coordbench llm
// stub --policy silo-gather) is package llm/stubmodel/silogather;
// docs/silo-llm.md is the user's guide.
package llmagent
