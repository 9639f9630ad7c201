package coord

import (
	"maps"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
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

// TestActiveAgentsAreTheActiveViews: Next leaves the reused ActiveAgents
// map as it is when it already holds the new decision's views. Whatever a
// controller or caller did to the map after the previous decision (a key
// deleted, one added, a view replaced), the map Next hands out must hold
// exactly the views the decision activated, under their ids, and a
// controller that changed the map must not change the episode.
func TestActiveAgentsAreTheActiveViews(t *testing.T) {
	kept := 0
	for _, m := range Builtins {
		e := engine(t, "A5C12-1", 3)
		in, err := NewInterpreter(e, m)
		if err != nil {
			t.Fatal(err)
		}
		ref := engine(t, "A5C12-1", 3) // the same episode, its map never touched
		inRef, err := NewInterpreter(ref, m)
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; steps < 400; steps++ {
			if more, moreRef := e.Advance(), ref.Advance(); more != moreRef {
				t.Fatalf("%s step %d: one episode ended before the other", m.ID, steps)
			} else if !more {
				break
			}
			before := len(in.decision.ActiveAgents)
			d, dRef := in.Next(), inRef.Next()
			want := map[string]*View{}
			for _, s := range in.active {
				want[s.view.AgentID] = &s.view
			}
			if !maps.Equal(d.ActiveAgents, want) {
				t.Fatalf("%s step %d: ActiveAgents %v, the activated views %v", m.ID, d.Step, d.ActiveAgents, want)
			}
			if len(d.ActiveAgents) != len(dRef.ActiveAgents) {
				t.Fatalf("%s step %d: %d active agents, %d in the untouched episode", m.ID, d.Step, len(d.ActiveAgents), len(dRef.ActiveAgents))
			}
			if before == len(want) && steps%4 == 0 {
				kept++
			}
			actions := map[string]int{}
			for id, v := range d.ActiveAgents {
				actions[id] = SafeAction(v)
			}
			if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := inRef.Apply(dRef, actions, SourceBuiltin, nil); err != nil {
				t.Fatal(err)
			}
			switch steps % 4 { // after Apply, as a careless caller might
			case 1:
				for id := range d.ActiveAgents {
					delete(d.ActiveAgents, id)
					break
				}
			case 2:
				d.ActiveAgents["stray"] = &View{AgentID: "stray"}
			case 3:
				for id := range d.ActiveAgents {
					d.ActiveAgents[id] = &View{AgentID: id}
				}
			}
		}
		if e.Now() != ref.Now() || in.Steps() != inRef.Steps() || len(in.Messages) != len(inRef.Messages) {
			t.Fatalf("%s: the episode with a touched map diverged: t=%g/%g, %d/%d steps", m.ID, e.Now(), ref.Now(), in.Steps(), inRef.Steps())
		}
	}
	if kept == 0 {
		t.Fatal("no decision found the map already right")
	}
}

// TestCellOfFollowsTheName: an option's cell is the one its name names,
// whatever index it carries (a hand-made option, or one renamed).
func TestCellOfFollowsTheName(t *testing.T) {
	e := engine(t, "A5C12-1", 1)
	in, err := NewInterpreter(e, Centralized)
	if err != nil {
		t.Fatal(err)
	}
	cells := e.P.Cells
	for c := range cells {
		for _, idx := range []int{c, 0, len(cells) - 1, -1, len(cells), 1 << 40} {
			got, ok := in.cellOf(&CellOption{Cell: cells[c].ID, index: idx})
			if !ok || got != c {
				t.Fatalf("cell %s with index %d: got %d, %v", cells[c].ID, idx, got, ok)
			}
		}
	}
	if _, ok := in.cellOf(&CellOption{Cell: "no-such-cell", index: 2}); ok {
		t.Fatal("an unknown cell name was found")
	}
}

// TestCellOptionsDescribeTheirCell: a cell option's parts copied from the
// per-plant template (id, area, machines, busy power, index) are the
// plant's, on an interpreter reset from one plant to another.
func TestCellOptionsDescribeTheirCell(t *testing.T) {
	var in *Interpreter
	seen := 0
	for _, ref := range []string{"A5C12-1", "A3C9-1", "A5C12-1"} {
		e := engine(t, ref, 4)
		if in == nil {
			var err error
			if in, err = NewInterpreter(e, Centralized); err != nil {
				t.Fatal(err)
			}
		} else if err := in.Reset(e, Centralized); err != nil {
			t.Fatal(err)
		}
		p := e.P
		for steps := 0; e.Advance() && steps < 300; steps++ {
			d := in.Next()
			for _, v := range d.ActiveAgents {
				for _, o := range v.Options {
					c := o.Cell
					if c == nil {
						continue
					}
					i, ok := in.cellOf(c)
					if !ok || i != c.index {
						t.Fatalf("%s: option for %s carries index %d", ref, c.Cell, c.index)
					}
					cell := p.Cells[i]
					if c.Area != p.Areas[cell.Area].ID || c.Machines != cell.Machines || c.BusyKW != float64(cell.PowerW[factory.Busy])/1000 {
						t.Fatalf("%s: option %+v does not describe cell %s", ref, *c, cell.ID)
					}
					seen++
				}
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
	if seen == 0 {
		t.Fatal("no cell option seen")
	}
}

// TestMemoryLinesNeverChange: a memory line handed out in a payload keeps
// its text for good, while later lines are written into the same blocks
// (rememberf writes past a block's length) and later episodes run on the
// same interpreter.
func TestMemoryLinesNeverChange(t *testing.T) {
	type kept struct{ line, text string }
	var lines []kept
	var in *Interpreter
	for ep, ref := range []string{"A5C12-1", "A3C9-1", "A5C12-1"} {
		e := engine(t, ref, uint64(ep+1))
		if in == nil {
			var err error
			if in, err = NewInterpreter(e, Builtins[ep%len(Builtins)]); err != nil {
				t.Fatal(err)
			}
		} else if err := in.Reset(e, Builtins[ep%len(Builtins)]); err != nil {
			t.Fatal(err)
		}
		for steps := 0; e.Advance() && steps < 400; steps++ {
			d := in.Next()
			actions := map[string]int{}
			for id, v := range d.ActiveAgents {
				for _, l := range v.Context.Memory {
					lines = append(lines, kept{l, string([]byte(l))})
				}
				actions[id] = SafeAction(v)
			}
			if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
				t.Fatal(err)
			}
		}
		for i, k := range lines {
			if k.line != k.text {
				t.Fatalf("episode %d: memory line %d changed from %q to %q", ep, i, k.text, k.line)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("no memory line seen")
	}
}
