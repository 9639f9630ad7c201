package sweep

// Mixed teams of a silo experiment (silo.teams): each a list of the
// experiment's models with the agents each plays, by exact count or by
// share (docs/experiments.md, docs/silo-llm.md "Mixed teams").

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/silo/play"
)

// MaxTeams bounds silo.teams.
const MaxTeams = 64

// Team is one mixed team of silo.teams: its agents, model by model, in
// the order agent ids are given out (the first entry's model plays agents
// 0 … c₀−1, and so on).
type Team struct {
	Agents []TeamMember `yaml:"agents" json:"agents"`
}

// TeamMember is one model of a team: a label of the experiment's models
// and either the exact number of agents it plays (count; the team then has
// N = the sum of the counts) or its share of any N (share, a whole-number
// weight, apportioned by the largest remainder). A team's entries are all
// counts or all shares.
type TeamMember struct {
	Model string `yaml:"model" json:"model"`
	Count int    `yaml:"count,omitempty" json:"count,omitempty"`
	Share int    `yaml:"share,omitempty" json:"share,omitempty"`
}

// shares reports whether the team gives shares (its first entry does).
func (t Team) shares() bool { return len(t.Agents) > 0 && t.Agents[0].Share != 0 }

// parts are the entries' counts or shares.
func (t Team) parts() []int {
	out := make([]int, len(t.Agents))
	for i, m := range t.Agents {
		out[i] = m.Count + m.Share
	}
	return out
}

// checkTeams checks silo.teams against the models and the team sizes:
// teams exactly when agent_kinds has team; at least two entries, each a
// model of the models list (once per team) with a count or a share from 1
// to play.MaxMemberCount, all of one kind; counts summing to every N > 1
// of silo.agents, shares giving every model an agent at each of them.
func (e *Experiment) checkTeams() error {
	s := e.Silo
	if s == nil {
		return nil
	}
	kind := slices.ContainsFunc(strings.Split(e.SiloOptions().Agent, ","), func(k string) bool { return strings.TrimSpace(k) == play.AgentTeam })
	switch {
	case len(s.Teams) > MaxTeams:
		return fieldErr("silo.teams", "%d teams: at most %d", len(s.Teams), MaxTeams)
	case len(s.Teams) > 0 && !kind:
		return fieldErr("silo.teams", "teams given, but silo.agent_kinds lacks %s: add it, or drop the teams", play.AgentTeam)
	case kind && len(s.Teams) == 0:
		return fieldErr("silo.agent_kinds", "agent kind %s needs silo.teams (e.g. teams: [{agents: [{model: a, share: 1}, {model: b, share: 1}]}])", play.AgentTeam)
	}
	var labels []string
	for _, m := range e.ModelList() {
		labels = append(labels, m.Label())
	}
	var ns []int // the team sizes N > 1 (a bad list is the suite's to report)
	for _, item := range s.Agents {
		for _, f := range strings.Split(item, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 1 && !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	for i, t := range s.Teams {
		at := fmt.Sprintf("silo.teams[%d]", i)
		if len(t.Agents) < 2 {
			return fieldErr(at+".agents", "a mixed team needs at least two models (one model is agent kind llm)")
		}
		if len(t.Agents) > play.MaxMembers {
			return fieldErr(at+".agents", "%d models in one team: at most %d", len(t.Agents), play.MaxMembers)
		}
		what := map[bool]string{false: "count", true: "share"}[t.shares()]
		seen := map[string]bool{}
		for j, m := range t.Agents {
			mat := fmt.Sprintf("%s.agents[%d]", at, j)
			switch {
			case m.Model == "":
				return fieldErr(mat+".model", "required: the name of a model of the models list")
			case !slices.Contains(labels, m.Model):
				return fieldErr(mat+".model", "no model %q in the experiment (its models: %s)", m.Model, strings.Join(labels, ", "))
			case seen[m.Model]:
				return fieldErr(mat+".model", "model %s is named twice in this team: give each model once, with its %s", m.Model, what)
			case (m.Count != 0) == (m.Share != 0):
				return fieldErr(mat, "give count (agents) or share (a weight), one of them")
			case (m.Share != 0) != t.shares():
				return fieldErr(mat, "a team gives counts or shares, not both (its first entry gives a %s)", what)
			case m.Count+m.Share < 1 || m.Count+m.Share > play.MaxMemberCount:
				return fieldErr(mat+"."+what, "want 1 to %d (got %d)", play.MaxMemberCount, m.Count+m.Share)
			}
			seen[m.Model] = true
		}
		if len(ns) == 0 {
			return fieldErr("silo.agents", "team %d plays at no N: a mixed team needs N > 1", i)
		}
		parts := t.parts()
		if !t.shares() {
			sum := 0
			for _, c := range parts {
				sum += c
			}
			if len(ns) != 1 || ns[0] != sum {
				return fieldErr(at+".agents", "the counts sum to %d agents, but silo.agents lists %s: list N %d only, or give shares (share: 1, …) to cross the team with every N",
					sum, joinInts(ns), sum)
			}
			continue
		}
		for _, n := range ns {
			for j, c := range play.Apportion(n, parts) {
				if c == 0 {
					return fieldErr(fmt.Sprintf("%s.agents[%d].share", at, j), "at N = %d the shares leave model %s without an agent: give it a larger share, or a larger N", n, t.Agents[j].Model)
				}
			}
		}
	}
	return nil
}

func joinInts(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ", ")
}

// SiloTeams builds the experiment's mixed teams over its models' agents
// (one per model, as BuildModels makes them, in the models' order).
func (e *Experiment) SiloTeams(llms []*play.LLMAgent) ([]*play.Team, error) {
	if e.Silo == nil || len(e.Silo.Teams) == 0 {
		return nil, nil
	}
	by := map[string]*play.LLMAgent{}
	for _, l := range llms {
		by[l.ModelLabel()] = l
	}
	var out []*play.Team
	for i, t := range e.Silo.Teams {
		tm := &play.Team{Shares: t.shares()}
		for j, m := range t.Agents {
			l := by[m.Model]
			if l == nil {
				return nil, &Error{File: e.file, Line: e.lineOf(fmt.Sprintf("silo.teams[%d].agents[%d].model", i, j)),
					Field: fmt.Sprintf("silo.teams[%d].agents[%d].model", i, j), Msg: fmt.Sprintf("no model %q was built", m.Model)}
			}
			tm.Members = append(tm.Members, play.Member{LLM: l, Count: m.Count + m.Share})
		}
		out = append(out, tm)
	}
	return out, nil
}
