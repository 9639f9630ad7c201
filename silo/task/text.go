package task

// How a task's description becomes the text agents see: the sections of a
// description, the template built from them, and the placeholders filled
// per agent.
//
// The descriptions themselves (each task's desc, in its level file) are our
// own text: the design notes give the published prompts' structure but not
// their wording. They follow the published section order (title, goal,
// agent ordering or data distribution, the agent's data, algorithm, output,
// communication protocol) and obey the paper's rule: structure, not roles
// and not steps. Nothing in them names a leader or tells an agent what to
// do first; the only coordination advice is the topology suggestion (each
// task's hint), which Prompt can leave out.

import (
	"fmt"
	"strings"
)

// Template placeholders, substituted per agent by plain text replacement.
const (
	PhAgentID    = "{agent_id}"
	PhInputShard = "{input_shard}"
	PhMaxID      = "{max_id}"
	PhNumAgents  = "{num_agents}"
)

type describe struct {
	goal   string   // one paragraph
	layout string   // "**Agent Ordering**: …" or "**Data Distribution**: …" (may be empty)
	data   string   // what the agent's shard is
	algo   []string // what the answer is, as definitions
	output string   // type and format
}

const (
	submitGlobal    = "Every agent must call submit_result(answer), and all agents must submit the same answer. A submission is final."
	submitSegmented = "Every agent must call submit_result(answer) with its own segment of the answer (the values at its own positions), not the whole answer. A submission is final."
	submitSolo      = "Call submit_result(answer) with the whole answer. A submission is final."
	hintPrefix      = "Suggested communication pattern (a hint, not a rule): "
)

// hintLine is the removable topology suggestion as it appears in a template.
func (t *Task) hintLine() string { return hintPrefix + t.HintText + "\n" }

// template builds the task_description: Python-level formatting already
// applied (sizes in n, parameters), the placeholders left in. n is the team
// size the data were drawn for; solo says that one agent holds all of
// them (N = 1, or a merged baseline of an n-agent instance). A solo text
// says nothing about other agents: no data distribution, no topology
// hint, the team-only phrases of the description left out (teamOr), and
// no {num_agents} or {max_id}.
func (t *Task) template(n int, solo bool, params any, shards []any) string {
	d := t.desc(n, params, shards)
	pick := func(s string) string { return pickWording(s, solo) }
	var b strings.Builder
	fmt.Fprintf(&b, "**Task: %s**\n\n", t.Name)
	b.WriteString(pick(d.goal) + "\n\n")
	if d.layout != "" && !solo {
		b.WriteString(pick(d.layout) + "\n\n")
	}
	if solo {
		fmt.Fprintf(&b, "**Your Data**: You are agent %s and work alone: all of the data are yours. %s\n%s\n\n",
			PhAgentID, pick(d.data), PhInputShard)
	} else {
		fmt.Fprintf(&b, "**Your Data**: You are agent %s in a team of %s agents (ids 0 to %s). %s\n%s\n\n",
			PhAgentID, PhNumAgents, PhMaxID, pick(d.data), PhInputShard)
	}
	b.WriteString("**Algorithm**:\n")
	for _, a := range d.algo {
		if a = pick(a); a != "" { // a team-only item is left out
			b.WriteString("- " + a + "\n")
		}
	}
	b.WriteString("\n**Output**: " + pick(d.output) + "\n\n")
	switch {
	case solo:
		b.WriteString("**Submission**:\n" + submitSolo)
	case t.Segmented:
		b.WriteString("**Communication Protocol**:\n" + t.hintLine() + submitSegmented)
	default:
		b.WriteString("**Communication Protocol**:\n" + t.hintLine() + submitGlobal)
	}
	return b.String()
}

// Wording that holds only for a team. A description writes such a phrase
// as teamOr(team, solo); the template keeps team for a team of agents and
// solo when one agent holds all the data. The marks never reach a prompt
// (TestSoloPrompts).
const (
	markOpen  = "⟦"
	markSep   = "‖"
	markClose = "⟧"
)

// teamOr is a phrase with a team wording and a solo wording.
func teamOr(team, solo string) string { return markOpen + team + markSep + solo + markClose }

// teamOnly is a phrase left out of solo texts.
func teamOnly(team string) string { return teamOr(team, "") }

// pickWording resolves the teamOr phrases of s (not nested).
func pickWording(s string, solo bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			break
		}
		rest := s[i+len(markOpen):]
		j := strings.Index(rest, markClose)
		if j < 0 {
			break
		}
		team, alone, _ := strings.Cut(rest[:j], markSep)
		b.WriteString(s[:i])
		if solo {
			b.WriteString(alone)
		} else {
			b.WriteString(team)
		}
		s = rest[j+len(markClose):]
	}
	b.WriteString(s)
	return b.String()
}

// render substitutes the placeholders as the published code does (plain
// replacement with str(value); the shard is shown as Python's str()).
func render(template string, agent, n int, shardText string) string {
	r := strings.NewReplacer(
		PhAgentID, fmt.Sprint(agent),
		PhInputShard, shardText,
		PhMaxID, fmt.Sprint(n-1),
		PhNumAgents, fmt.Sprint(n),
	)
	return r.Replace(template)
}

// hint is a task's topology suggestion: the published metadata
// (optimal_topology, optimal_message_count) and the sentence the prompt
// shows after hintPrefix.
type hint struct{ topology, messages, prompt string }
