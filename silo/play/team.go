package play

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// AgentTeam is the agent kind of mixed teams of LLM agents (Players.Kind,
// Players.Team).
const AgentTeam = "team"

// Bounds of a mixed team.
const (
	MaxMembers     = 64     // models of one team
	MaxMemberCount = 10_000 // one member's count or share
)

// Member is one model of a mixed team and its part of the team: Count
// agents, or with Team.Shares a weight.
type Member struct {
	LLM   *LLMAgent
	Count int
}

// Team is a mixed team of LLM agents: several models, each playing some
// of the agents. Agent i's model is fixed by the member order: the first
// member plays agents 0 … c₀−1, the second the next c₁ agents, and so on
// (with counts 3 and 2: agents 0, 1, 2 the first model, 3 and 4 the
// second).
//
// Without Shares the counts are exact and the team has N = their sum
// agents: it plays only at that N. With Shares the counts are weights,
// apportioned at any N by the largest remainder (Hamilton's method): each
// member gets ⌊N·wᵢ/Σw⌋ agents, and the agents left over go one each to
// the members with the largest remainders, the earlier member first on a
// tie; every member must get at least one agent.
type Team struct {
	Members []Member
	Shares  bool
}

// Size is the team's fixed size (the sum of the counts), 0 with Shares.
func (t *Team) Size() int {
	if t.Shares {
		return 0
	}
	n := 0
	for _, m := range t.Members {
		n += m.Count
	}
	return n
}

// Check checks the team without a team size: at least two members, each
// with a model and a count from 1, no two with one model label, and every
// member's agents configured alike but for the model (tool format,
// scaffolds, context budget, failure policy). Errors are *opterr.Error of
// option "Teams".
func (t *Team) Check() error {
	if t == nil || len(t.Members) < 2 {
		return opterr.New("Teams", "a mixed team needs at least two models (one model is agent kind %s)", AgentLLM)
	}
	if len(t.Members) > MaxMembers {
		return opterr.New("Teams", "%d models in one team: at most %d", len(t.Members), MaxMembers)
	}
	what := "count"
	if t.Shares {
		what = "share"
	}
	seen := map[string]bool{}
	first := t.Members[0].LLM
	for i, m := range t.Members {
		if m.LLM == nil || m.LLM.Config.Model == nil {
			return &opterr.Error{Option: "Teams", Err: fmt.Errorf("member %d: %w", i, ErrNoModel)}
		}
		if m.Count < 1 || m.Count > MaxMemberCount {
			return opterr.New("Teams", "model %s: %s %d: want 1 to %d", m.LLM.ModelLabel(), what, m.Count, MaxMemberCount)
		}
		if seen[m.LLM.ModelLabel()] {
			return opterr.New("Teams", "model %s is named twice in one team: give each model once, with its %s", m.LLM.ModelLabel(), what)
		}
		seen[m.LLM.ModelLabel()] = true
		if !sameAgents(first.Config, m.LLM.Config) {
			return opterr.New("Teams", "model %s: its agents are configured unlike %s's (tool format, scaffolds, context budget): a team shares them", m.LLM.ModelLabel(), first.ModelLabel())
		}
	}
	return nil
}

// sameAgents: two configurations that differ at most in the model.
func sameAgents(a, b llmagent.Config) bool {
	a.Model, b.Model, a.Label, b.Label = nil, nil, "", ""
	return a == b
}

// Counts are the number of agents each member plays at team size n: the
// counts themselves (n must be their sum), or n apportioned by the shares.
func (t *Team) Counts(n int) ([]int, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	out := make([]int, len(t.Members))
	if !t.Shares {
		for i, m := range t.Members {
			out[i] = m.Count
		}
		if s := t.Size(); s != n {
			return nil, opterr.New("Teams", "the team %s has %d agents (its counts' sum), not N = %d: give shares to cross it with other N", t.Spec(), s, n)
		}
		return out, nil
	}
	shares := make([]int, len(t.Members))
	for i, m := range t.Members {
		shares[i] = m.Count
	}
	out = Apportion(n, shares)
	for i, c := range out {
		if c == 0 {
			return nil, opterr.New("Teams", "at N = %d the shares %s leave model %s without an agent: give it a larger share, or a larger N", n, t.Spec(), t.Members[i].LLM.ModelLabel())
		}
	}
	return out, nil
}

// Apportion divides n agents by shares (positive weights) by the largest
// remainder: share i gets ⌊n·sᵢ/Σs⌋, and the agents left over go one each
// to the largest remainders, the earlier share first on a tie. A share may
// get no agent.
func Apportion(n int, shares []int) []int {
	total := 0
	for _, s := range shares {
		total += s
	}
	out := make([]int, len(shares))
	if total <= 0 {
		return out
	}
	rem := make([]int, len(shares))
	left := n
	for i, s := range shares {
		out[i], rem[i] = n*s/total, n*s%total
		left -= out[i]
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rem[b] - rem[a] })
	for _, i := range order[:left] {
		out[i]++
	}
	return out
}

// Models are the model labels of the agents of a team of n (agent i's at
// index i), in the order of Team's rule.
func (t *Team) Models(n int) ([]string, error) {
	counts, err := t.Counts(n)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i, c := range counts {
		for range c {
			out = append(out, t.Members[i].LLM.ModelLabel())
		}
	}
	return out, nil
}

// member is the member playing agent id of a team of n.
func (t *Team) member(n, id int) (*LLMAgent, error) {
	counts, err := t.Counts(n)
	if err != nil {
		return nil, err
	}
	for i, c := range counts {
		if id < c {
			return t.Members[i].LLM, nil
		}
		id -= c
	}
	return nil, fmt.Errorf("agent id out of range for N = %d", n)
}

// Spec is the team as the command line writes it: model=count, comma
// separated (shares the same, as weights).
func (t *Team) Spec() string {
	var parts []string
	for _, m := range t.Members {
		label := "?"
		if m.LLM != nil {
			label = m.LLM.ModelLabel()
		}
		parts = append(parts, label+"="+strconv.Itoa(m.Count))
	}
	return strings.Join(parts, ",")
}

// Label names the team's agents in case ids, summaries and aggregates:
// llm-mix-<model>=<part>-<model>=<part>…, the models as in
// LLMAgent.Label and the parts the counts (or shares) divided by their
// greatest common divisor, so that counts 4 and 2 at N = 6 and shares 2
// and 1 (which give the same agents at N = 6) share a label; then the
// scaffolds and +native as for one model. A model label holds no '=', so
// no team label is another's, nor a single model's.
func (t *Team) Label() string {
	g := 0
	for _, m := range t.Members {
		g = gcd(g, m.Count)
	}
	if g == 0 {
		g = 1
	}
	var b strings.Builder
	b.WriteString(AgentLLM + "-mix")
	for _, m := range t.Members {
		b.WriteString("-" + modelPart(m.LLM.ModelLabel()) + "=" + strconv.Itoa(m.Count/g))
	}
	if len(t.Members) > 0 && t.Members[0].LLM != nil {
		b.WriteString(t.Members[0].LLM.suffix())
	}
	return b.String()
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
