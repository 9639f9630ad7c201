package coord

import (
	"maps"
	"testing"
)

// TestDecisionAgentsAreTheMap: Decision.Agents yields exactly the entries
// of ActiveAgents, for the interpreter's decisions (walked from its list)
// as for a decision whose map was changed or built by hand.
func TestDecisionAgentsAreTheMap(t *testing.T) {
	collect := func(d *Decision) map[string]*View {
		got := map[string]*View{}
		for id, v := range d.Agents() {
			got[id] = v
		}
		return got
	}
	for _, m := range Builtins {
		e := engine(t, "A5C12-1", 2)
		in, err := NewInterpreter(e, m)
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; e.Advance() && steps < 200; steps++ {
			d := in.Next()
			if got := collect(d); !maps.Equal(got, d.ActiveAgents) {
				t.Fatalf("%s step %d: Agents %v, ActiveAgents %v", m.ID, d.Step, got, d.ActiveAgents)
			}
			actions := map[string]int{}
			for id, v := range d.ActiveAgents {
				actions[id] = SafeAction(v)
			}
			if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A map changed after Next: the same number of agents, another view.
	e := engine(t, "A5C12-1", 2)
	in, err := NewInterpreter(e, Centralized)
	if err != nil {
		t.Fatal(err)
	}
	e.Advance()
	d := in.Next()
	other := &View{AgentID: "plant"}
	for id := range d.ActiveAgents {
		d.ActiveAgents[id] = other
	}
	if got := collect(d); !maps.Equal(got, d.ActiveAgents) {
		t.Fatalf("changed map: Agents %v, ActiveAgents %v", got, d.ActiveAgents)
	}
	hand := &Decision{ActiveAgents: map[string]*View{"x": {}}}
	if got := collect(hand); !maps.Equal(got, hand.ActiveAgents) {
		t.Fatalf("hand-made decision: Agents %v", got)
	}
}
