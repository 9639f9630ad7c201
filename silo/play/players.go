package play

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// AgentLLM is the agent kind of LLM agents (Players.Kind).
const AgentLLM = "llm"

// ErrNoModel: agent kind AgentLLM was asked for without a model
// (Players.LLM, or a suite's LLM options).
var ErrNoModel = errors.New(AgentLLM + " needs a model")

// LLMAgent configures the LLM agents of a run: the agent configuration
// with its model client, and the settings that identify the model's
// behaviour (a suite records them in every run's manifest, so that a suite
// directory never mixes runs of different models or settings).
type LLMAgent struct {
	Config llmagent.Config // Config.Model is the client
	// Name, if set, replaces Model in the agents' label (an experiment's
	// model entry named apart from its model).
	Name string
	// Model is the model name; BaseURL, Temperature, MaxTokens and Seed
	// are the client settings that change replies.
	Model       string
	BaseURL     string
	Temperature float64
	MaxTokens   int
	Seed        *int64

	stats *llm.Stats // the client's, for Status (NewLLMAgent)
}

// ToolFormat is how the agents' tools reach the model: xml (the published
// tool-call blocks) or native (function calling).
func (l *LLMAgent) ToolFormat() string {
	if l.Config.Native {
		return ToolFormatNative
	}
	return ToolFormatXML
}

// Label names the LLM agents in case ids, summaries and aggregates:
// llm-<model>, then +<scaffold> for each scaffold on, then +native for
// native function calling. Characters other than letters, digits, '.',
// '_' and '-' in the model name become '-', and then the name gets a short
// hash of the original (llm-org-model-v1-1a2b3c), so that names differing
// only in those characters never share a label.
func (l *LLMAgent) Label() string {
	var b strings.Builder
	b.WriteString(AgentLLM + "-")
	changed := false
	name := l.Model
	if l.Name != "" {
		name = l.Name
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
			changed = true
		}
	}
	if changed {
		h := fnv.New32a()
		h.Write([]byte(name))
		fmt.Fprintf(&b, "-%06x", h.Sum32()&0xffffff)
	}
	if sc := l.Config.Scaffold.String(); sc != "none" {
		b.WriteString("+" + strings.ReplaceAll(sc, ",", "+"))
	}
	if l.Config.Native {
		b.WriteString("+native")
	}
	return b.String()
}

// Players says which agents play a run: a scripted team by name, or the
// LLM agents (Kind AgentLLM, LLM set).
type Players struct {
	Kind string
	LLM  *LLMAgent
}

// Label is the agent label of the players' runs.
func (p Players) Label() string {
	if p.Kind == AgentLLM && p.LLM != nil {
		return p.LLM.Label()
	}
	return p.Kind
}

// team builds the agents of one run; for LLM agents also their team,
// which writes each turn into dir's turn log as it ends (nil for
// scripted teams).
func (p Players) team(in *task.Instance, pr proto.Protocol, dir string) ([]round.Agent, *llmagent.Team, error) {
	if p.Kind != AgentLLM {
		a, err := round.NewTeamByName(p.Kind, in.N)
		return a, nil, err
	}
	if p.LLM == nil || p.LLM.Config.Model == nil {
		return nil, nil, fmt.Errorf("agent %w", ErrNoModel)
	}
	t, err := llmagent.NewTeam(in, pr, p.LLM.Config)
	if err != nil {
		return nil, nil, err
	}
	if err := t.Journal(dir); err != nil {
		return nil, nil, err
	}
	return t.Agents(), t, nil
}
