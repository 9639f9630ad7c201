package sweep_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/sweep"
)

const teamModels = "models:\n  - {name: a, model: ma, base_url: \"http://127.0.0.1:1/v1\"}\n  - {name: b, model: mb, base_url: \"http://127.0.0.1:2/v1\"}\n"

// TestTeamErrors: a team's mistakes are errors naming the file, the line
// and the field, inside the team, before anything runs; the schema
// refuses the same files.
func TestTeamErrors(t *testing.T) {
	head := "benchmark: silo\nsilo:\n  agents: [4, 6]\n  agent_kinds: [team]\n  teams:\n"
	for _, c := range []struct{ in, want string }{
		{"    - agents: [{model: a, count: 3}, {model: b, count: 2}]\n",
			`e.yaml:6: field "silo.teams[0].agents": the counts sum to 5 agents, but silo.agents lists 4, 6: list N 5 only, or give shares`},
		{"    - agents: [{model: a, share: 1}, {model: c, share: 1}]\n",
			`e.yaml:6: field "silo.teams[0].agents[1].model": no model "c" in the experiment (its models: a, b)`},
		{"    - agents: [{model: a, share: 1}, {model: b, count: 1}]\n",
			`e.yaml:6: field "silo.teams[0].agents[1]": a team gives counts or shares, not both`},
		{"    - agents: [{model: a, share: 1, count: 2}, {model: b, share: 1}]\n",
			`e.yaml:6: field "silo.teams[0].agents[0]": give count (agents) or share (a weight), one of them`},
		{"    - agents: [{model: a}, {model: b, share: 1}]\n",
			`field "silo.teams[0].agents[0]": give count (agents) or share`},
		{"    - agents: [{model: a, share: 1}]\n",
			`e.yaml:6: field "silo.teams[0].agents": a mixed team needs at least two models`},
		{"    - agents: [{model: a, share: 1}, {model: a, share: 2}]\n",
			`field "silo.teams[0].agents[1].model": model a is named twice`},
		{"    - agents: [{model: a, share: 1}, {model: b, share: 9}]\n",
			`field "silo.teams[0].agents[0].share": at N = 4 the shares leave model a without an agent`},
		{"    - agents: [{model: a, share: -1}, {model: b, share: 1}]\n",
			`field "silo.teams[0].agents[0].share": want 1 to 10000`},
		{"    - agents:\n        - {model: a, share: 1}\n        - {model: b, shares: 1}\n",
			`e.yaml:8: field "silo.teams[0].agents[1].shares": unknown field in a team's agents entry`},
		{"    - members: []\n", `e.yaml:6: field "silo.teams[0].members": unknown field in a team of silo.teams`},
	} {
		in := head + c.in + teamModels
		_, err := sweep.Parse("e.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n  got  %v\n  want %q", c.in, err, c.want)
		}
	}
	sch := schema(t)
	for _, bad := range []string{
		"    - agents: [{model: a, share: 1, count: 2}, {model: b, share: 1}]\n",
		"    - agents: [{model: a, share: 1}]\n",
		"    - agents: [{model: a, share: 0}, {model: b, share: 1}]\n",
	} {
		if err := sch.Validate(asJSON(t, []byte(head+bad+teamModels))); err == nil {
			t.Errorf("schema accepts %q", bad)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"benchmark: silo\nsilo:\n  agents: 4\n  agent_kinds: [llm]\n  teams:\n    - agents: [{model: a, share: 1}, {model: b, share: 1}]\n" + teamModels,
			`e.yaml:5: field "silo.teams": teams given, but silo.agent_kinds lacks team`},
		{"benchmark: silo\nsilo:\n  agents: 4\n  agent_kinds: [team]\n" + teamModels,
			`e.yaml:4: field "silo.agent_kinds": agent kind team needs silo.teams`},
		{"benchmark: silo\nsilo:\n  agents: 1\n  agent_kinds: [team]\n  teams:\n    - agents: [{model: a, share: 1}, {model: b, share: 1}]\n" + teamModels,
			`field "silo.agents": team 0 plays at no N`},
	} {
		if _, err := sweep.Parse("e.yaml", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestTeamResolve: a team of shares is crossed with every N, its cases
// labelled by the team, beside the plain models' cases; an experiment
// without teams keeps its id (the field is left out of the identity when
// empty).
func TestTeamResolve(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "e.yaml")
	body := "benchmark: silo\nsilo:\n  tasks: I-01\n  agents: [4, 6]\n  protocols: p2p\n  agent_kinds: [llm, team]\n  baseline: none\n" +
		"  teams:\n    - agents: [{model: a, share: 1}, {model: b, share: 2}]\n" + teamModels
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := resolveFile(t, file)
	want := []string{"I-01__n4__p2p__llm-a__seeded-s1", "I-01__n4__p2p__llm-b__seeded-s1", "I-01__n4__p2p__llm-mix-a=1-b=2__seeded-s1",
		"I-01__n6__p2p__llm-a__seeded-s1", "I-01__n6__p2p__llm-b__seeded-s1", "I-01__n6__p2p__llm-mix-a=1-b=2__seeded-s1"}
	if !reflect.DeepEqual(s.IDs, want) {
		t.Errorf("ids %v", s.IDs)
	}
	est, err := s.Estimate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// At N = 4, shares 1:2 give a 1 agent (1.33) and b 3; at N = 6, 2 and 4.
	team := est.Cases[2]
	if len(team.Parts) != 2 || team.Parts[0].Model != "a" || team.Parts[1].Model != "b" || team.Parts[1].Calls != 3*team.Parts[0].Calls ||
		team.Calls != team.Parts[0].Calls+team.Parts[1].Calls || !team.Uses("a") || !team.Uses("b") || team.Uses("c") {
		t.Errorf("team estimate %+v", team)
	}
	if a, b, all := est.Total("a"), est.Total("b"), est.Total(""); a.Calls+b.Calls != all.Calls {
		t.Errorf("totals a %d + b %d != %d", a.Calls, b.Calls, all.Calls)
	}
	plain, err := sweep.Parse("p.yaml", []byte("benchmark: silo\nsilo: {agents: [2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Canonical()), "teams") {
		t.Errorf("canonical JSON of an experiment without teams: %s", plain.Canonical())
	}
}
