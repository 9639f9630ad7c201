// Package llmctl holds the LLM controllers of the scheduling benchmark:
// each active agent's decision is one chat completion against any
// OpenAI-compatible endpoint (package llm), under a fixed output contract.
//
// The system instruction fixes the contract: answer with exactly one JSON
// object {"action": <index>} naming a legal action, nothing else. The user
// message is the agent's own view from the public payload (role, kind,
// observation, context with bounded working memory, options, legal
// actions, decision factors) plus the orchestration framework's own
// controller-side state. A reply is read under a rule (parse.go): by
// default as the paper does, accepting any reply a legal integer action
// can be read from (JSON, a bare integer, a code fence, a sentence), or
// strictly, accepting only the exact contract. A reply the rule refuses
// (or an illegal index, or nothing) is not used: the interpreter's
// contract-safe fallback decides, and the audit records the raw reply and
// how it was read or why it was refused (G_fb vs G_llm).
//
// Two orchestration styles mirror the seed's two frameworks without their
// code (docs/llm.md):
//   - graph: a graph of role nodes sharing one state that carries compact
//     summaries of recent decisions across activations, shown to every node;
//   - relay: relay-style handoff: each agent keeps its own observation
//     history, and an agent activated right after others receives their
//     handoff messages.
//
// Both see only the benchmark payload; neither reads engine state.
//
// The stub model that answers these prompts offline (coordbench llm stub
// --policy builtin|random|faults) is package llm/stubmodel/despolicy.
package llmctl
