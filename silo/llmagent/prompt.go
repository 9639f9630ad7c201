package llmagent

import (
	"fmt"
	"strings"

	"github.com/coordbench/coordbench/silo/proto"
)

// Scaffold holds the prompt scaffolds of the seed's appendix H, each off
// by default except the topology hint (the published prompts carry it).
type Scaffold struct {
	// Planning makes round 1 a planning round: the agents are told to agree
	// on a plan through the protocol, and submit_result is refused until
	// round 2.
	Planning bool `json:"planning"`
	// Reminders restate the agent's id, the protocol's tools and rules in
	// every turn after the first, at the end of the turn's new input (after
	// the tool results or feedback).
	Reminders bool `json:"reminders"`
	// Scratchpad asks the agent to keep a short scratchpad of what it
	// knows and what is missing, in each reply before its tool calls.
	Scratchpad bool `json:"scratchpad"`
	// NoTopologyHint removes the task prompt's suggested communication
	// topology (task.Instance.Prompt with topologyHint false).
	NoTopologyHint bool `json:"no_topology_hint"`
	// Consensus gives the agents the consensus helper: the tools
	// propose_answer and vote (proto.Options.Consensus), and at the start
	// of each turn the news of the proposals and their tallies (a
	// consensus_tally block after the tool results). Not one of the
	// paper's scaffolds; omitted from manifests when off, so that those
	// of runs without it read as before.
	Consensus bool `json:"consensus,omitempty"`
}

// scaffoldNames are the names ParseScaffold accepts, in the order of
// Scaffold's fields.
var scaffoldNames = []string{"planning", "reminders", "scratchpad", "no-topology-hint", "consensus"}

// ParseScaffold reads a comma list of scaffold names (planning,
// reminders, scratchpad, no-topology-hint, consensus; "" or "none": no
// scaffold, the published configuration).
func ParseScaffold(s string) (Scaffold, error) {
	var sc Scaffold
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "", "none":
		case "planning":
			sc.Planning = true
		case "reminders":
			sc.Reminders = true
		case "scratchpad":
			sc.Scratchpad = true
		case "no-topology-hint":
			sc.NoTopologyHint = true
		case "consensus":
			sc.Consensus = true
		default:
			return Scaffold{}, fmt.Errorf("unknown scaffold %q (want %s)", f, strings.Join(scaffoldNames, ", "))
		}
	}
	return sc, nil
}

// String is the canonical comma list ("none" without scaffolds, the
// published configuration).
func (s Scaffold) String() string {
	var out []string
	for i, on := range []bool{s.Planning, s.Reminders, s.Scratchpad, s.NoTopologyHint, s.Consensus} {
		if on {
			out = append(out, scaffoldNames[i])
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// SystemPrompt is the runtime system prompt of agent id in a team of n over
// protocol p, built like the published one (design notes, silobench.md §5):
// framing, identity, the collaborative setting, the objective, the rule
// that every agent submits, the tools, and the rules of the round model.
// With native function calling the tools are offered as functions and the
// prompt only names them. A single agent (n = 1) gets a text without a
// team, peers or communication, and only wait and submit_result (toolsFor).
// The wording is ours (docs/silo-llm.md lists what differs).
func SystemPrompt(p proto.Protocol, id, n int, native bool, sc Scaffold) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	if n == 1 { // nobody to talk to: nothing about a team, peers or communication
		w("You work alone: you hold all of the task's data, and you deliver your answer through a tool.\n\n")
		w("## Identity\nYour agent id is 0.\n\n")
		w("## Important\nSubmit your answer with submit_result. Make sure it is correct before you submit: a submission is final.\n\n")
		// The protocol is named so that the baselines of the three
		// protocols stay separate model calls, as in the published engine
		// (whose prompt is built from the protocol).
		w("## Tools\nThis run uses the %s protocol; working alone, you need only these tools.\n", p)
	} else {
		w("You are one agent of a multi-agent system with %d agents.\n\n", n)
		w("## Identity\nYour agent id is %d. The team has %d agents, with ids 0 to %d.\n\n", id, n, n-1)
		w("## Setting\nThis is a collaboration. Each agent holds only part of the data, so no agent can solve the task alone. " +
			"You can exchange information only through the tools below, and you also deliver your answer through a tool.\n\n")
		w("## Objective\nWork with the others efficiently: work out what the task needs and which agent holds it, " +
			"choose how to communicate, avoid messages nobody needs, and make sure the team agrees on the answer.\n\n")
		w("## Important\nEvery agent must submit its own answer with submit_result; nobody submits on behalf of the team. " +
			"Make sure you hold the correct answer before you submit: a submission is final.\n\n")
		w("## Tools (%s protocol)\n", protocolName(p))
	}
	if native {
		w("Call the tools with function calls. You may make several calls in one reply; they run in order.\n\n")
		for i, s := range toolsFor(p, n, sc.Consensus) {
			w("%d. %s: %s\n", i+1, s.name, s.desc)
		}
		w("\n")
	} else {
		w("Call a tool by writing a block of exactly this form in your reply, with one tag per parameter:\n\n%s\n\n",
			xmlCall("TOOL_NAME", [][2]string{{"PARAM_NAME", "VALUE"}}))
		for i, s := range toolsFor(p, n, sc.Consensus) {
			w("%d. %s: %s\n", i+1, s.name, s.desc)
			if len(s.params) == 0 {
				w("   Parameters: none.\n")
			} else {
				var ps []string
				for _, pa := range s.params {
					opt := ""
					if pa.optional {
						opt = ", optional"
					}
					ps = append(ps, fmt.Sprintf("%s (%s%s): %s", pa.name, pa.typ, opt, pa.desc))
				}
				w("   Parameters: %s.\n", strings.Join(ps, "; "))
			}
			w("   Returns: %s\n", s.returns)
			w("   Example:\n%s\n\n", indent(xmlCall(s.name, s.example), "   "))
		}
	}
	w("## Rules\n")
	for _, r := range rules(p, n) {
		w("- %s\n", r)
	}
	if sc.Consensus && n > 1 {
		w("\n## Consensus helper\n%s\n", consensusNote)
	}
	if sc.Scratchpad {
		what := "which agents' data you already have, what is still missing, and your intermediate results"
		if n == 1 {
			what = "what you have worked out so far and your intermediate results"
		}
		w("\n## Scratchpad\nStart every reply with a short scratchpad between <scratchpad> and </scratchpad>, before your tool calls: "+
			"%s. Keep it up to date each turn.\n", what)
	}
	return strings.TrimRight(b.String(), "\n")
}

func protocolName(p proto.Protocol) string {
	switch p {
	case proto.P2P:
		return "peer-to-peer messages"
	case proto.Broadcast:
		return "broadcast"
	case proto.SFS:
		return "shared file system"
	}
	return string(p)
}

// rules are the round-model rules every prompt states; a single agent
// (n = 1) gets those that do not concern others.
func rules(p proto.Protocol, n int) []string {
	end := "wait and submit_result end your turn: put every other call before them; calls after them are not executed."
	if n == 1 {
		return []string{
			end,
			"After submit_result you take no further actions.",
			"You must submit your answer.",
			"Use only what the tools return; never invent tool results.",
			"You may call several tools in one reply.",
		}
	}
	vis := "Messages you send in a round reach the others in the next round, not before."
	if p == proto.SFS {
		vis = "Files you write or delete in a round change what the others see from the next round on; list_files and read_file show the files as they were at the end of the previous round."
	}
	return []string{
		vis,
		end,
		"After submit_result you take no further actions.",
		"All agents must submit.",
		"Use only what the tools return; never invent tool results.",
		"You may call several tools in one reply.",
	}
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// planningNote opens the planning round (scaffold Planning): appended to
// the task prompt (so it stays in every later request).
func planningNote(n int) string {
	if n == 1 {
		return `## Planning round
This first round is for planning only: work out how you will solve the task and how you will check the answer. You cannot submit in this round; submit_result becomes available from the next round.`
	}
	return `## Planning round
This first round is for planning only. Use the communication tools to agree with the other agents on how the team will solve the task: who sends what to whom, who computes what, and how you will check the answer. You cannot submit in this round; submit_result becomes available from the next round.`
}

// planningOver starts round 2 after a planning round.
const planningOver = "The planning round is over: carry out the plan. submit_result is now available."

// planningRefusal is the result of submit_result during the planning round.
const planningRefusal = `{"error":"submit_result is not available in the planning round; it becomes available next round"}`

// consensusNote is the system prompt's section on the consensus helper
// (scaffold Consensus).
const consensusNote = "propose_answer and vote help the team agree on an answer. At the start of each of your turns, after your tool results, " +
	"a consensus_tally result tells you the proposals you have not seen yet (with their values) and the proposals whose votes changed, " +
	"each with the agents who agree, who disagree and who have not voted; unanimous is true once every agent agrees. " +
	"The helper only passes on what agents propose and vote: it does not know the answer, and agreement does not make an answer correct. " +
	"Proposals and votes reach the others in the next round and count as messages. A proposal is not a submission: every agent still submits with submit_result."

// reminder restates identity, tools and rules (scaffold Reminders).
func reminder(p proto.Protocol, id, n int, consensus bool) string {
	var tools []string
	for _, s := range toolsFor(p, n, consensus) {
		tools = append(tools, s.name)
	}
	r := rules(p, n)
	if n == 1 {
		return fmt.Sprintf("Reminder: you work alone (agent 0). Tools: %s. %s You must submit your answer with submit_result.",
			strings.Join(tools, ", "), r[0])
	}
	return fmt.Sprintf("Reminder: you are agent %d of %d. Tools: %s. %s %s Every agent must submit with submit_result.",
		id, n, strings.Join(tools, ", "), r[0], r[1])
}
