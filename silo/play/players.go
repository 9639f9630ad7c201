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
	Temperature *float64 // nil: none sent
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
	return AgentLLM + "-" + modelPart(l.ModelLabel()) + l.suffix()
}

// ModelLabel is the model's label: Name, else Model.
func (l *LLMAgent) ModelLabel() string {
	if l.Name != "" {
		return l.Name
	}
	return l.Model
}

// modelPart is a model label as a case id holds it (see Label).
func modelPart(name string) string {
	var b strings.Builder
	changed := false
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
	return b.String()
}

// suffix is the label's part after the model: the scaffolds and +native.
func (l *LLMAgent) suffix() string {
	s := ""
	if sc := l.Config.Scaffold.String(); sc != "none" {
		s += "+" + strings.ReplaceAll(sc, ",", "+")
	}
	if l.Config.Native {
		s += "+native"
	}
	return s
}

// Players says which agents play a run: a scripted team by name, the
// LLM agents of one model (Kind AgentLLM, LLM set), or a mixed team of
// LLM agents (Kind AgentTeam, Team set).
type Players struct {
	Kind string
	LLM  *LLMAgent
	Team *Team
}

// Label is the agent label of the players' runs.
func (p Players) Label() string {
	switch {
	case p.Kind == AgentLLM && p.LLM != nil:
		return p.LLM.Label()
	case p.Kind == AgentTeam && p.Team != nil:
		return p.Team.Label()
	}
	return p.Kind
}

// Scaffold is the LLM agents' scaffolds (none for scripted teams).
func (p Players) Scaffold() llmagent.Scaffold {
	switch {
	case p.Kind == AgentLLM && p.LLM != nil:
		return p.LLM.Config.Scaffold
	case p.Kind == AgentTeam && p.Team != nil && len(p.Team.Members) > 0 && p.Team.Members[0].LLM != nil:
		return p.Team.Members[0].LLM.Config.Scaffold
	}
	return llmagent.Scaffold{}
}

// requests are the request settings of the players' models (result.json's
// requests; none for scripted teams).
func (p Players) requests() []round.RequestSettings {
	of := func(l *LLMAgent, label string) round.RequestSettings {
		enc := l.Config.ResultEncoding
		if enc == "" {
			enc = llmagent.ResultsPublished
		}
		return round.RequestSettings{Model: label, Temperature: l.Temperature, MaxTokens: l.MaxTokens, Seed: l.Seed,
			ToolFormat: l.ToolFormat(), ToolResults: string(enc)}
	}
	switch {
	case p.Kind == AgentLLM && p.LLM != nil:
		return []round.RequestSettings{of(p.LLM, "")}
	case p.Kind == AgentTeam && p.Team != nil:
		var out []round.RequestSettings
		for _, m := range p.Team.Members {
			if m.LLM != nil {
				out = append(out, of(m.LLM, m.LLM.ModelLabel()))
			}
		}
		return out
	}
	return nil
}

// team builds the agents of one run; for LLM agents also their team,
// which writes each turn into dir's turn log as it ends (nil for
// scripted teams), and for a mixed team the model of each agent (nil
// otherwise).
func (p Players) team(in *task.Instance, pr proto.Protocol, dir string) ([]round.Agent, *llmagent.Team, []string, error) {
	var t *llmagent.Team
	var models []string
	var err error
	switch p.Kind {
	case AgentLLM:
		if p.LLM == nil || p.LLM.Config.Model == nil {
			return nil, nil, nil, fmt.Errorf("agent %w", ErrNoModel)
		}
		t, err = llmagent.NewTeam(in, pr, p.LLM.Config)
	case AgentTeam:
		if p.Team == nil {
			return nil, nil, nil, fmt.Errorf("agent kind %s %w", AgentTeam, ErrNoModel)
		}
		if models, err = p.Team.Models(in.N); err != nil {
			return nil, nil, nil, err
		}
		t, err = llmagent.NewTeamOf(in, pr, func(i int) llmagent.Config {
			l, _ := p.Team.member(in.N, i) // Models checked the size
			cfg := l.Config
			cfg.Label = models[i]
			return cfg
		})
	default:
		a, err := round.NewTeamByName(p.Kind, in.N)
		return a, nil, nil, err
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if err := t.Journal(dir); err != nil {
		return nil, nil, nil, err
	}
	return t.Agents(), t, models, nil
}
