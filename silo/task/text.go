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
	hintPrefix      = "Suggested communication pattern (a hint, not a rule): "
)

// hintLine is the removable topology suggestion as it appears in a template.
func (t *Task) hintLine() string { return hintPrefix + t.HintText + "\n" }

// template builds the task_description: Python-level formatting already
// applied (sizes in N, parameters), the four placeholders left in.
func (t *Task) template(n int, params any, shards []any) string {
	d := t.desc(n, params, shards)
	var b strings.Builder
	fmt.Fprintf(&b, "**Task: %s**\n\n", t.Name)
	b.WriteString(d.goal + "\n\n")
	if d.layout != "" {
		b.WriteString(d.layout + "\n\n")
	}
	fmt.Fprintf(&b, "**Your Data**: You are agent %s in a team of %s agents (ids 0 to %s). %s\n%s\n\n",
		PhAgentID, PhNumAgents, PhMaxID, d.data, PhInputShard)
	b.WriteString("**Algorithm**:\n")
	for _, a := range d.algo {
		b.WriteString("- " + a + "\n")
	}
	b.WriteString("\n**Output**: " + d.output + "\n\n")
	b.WriteString("**Communication Protocol**:\n")
	b.WriteString(t.hintLine())
	if t.Segmented {
		b.WriteString(submitSegmented)
	} else {
		b.WriteString(submitGlobal)
	}
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
