package coord

import (
	"encoding/json"
	"errors"
	"fmt"
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
	for _, m := range Builtins() {
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
	in, err := NewInterpreter(e, Centralized())
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
	for _, m := range Builtins() {
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
	in, err := NewInterpreter(e, Centralized())
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
			if in, err = NewInterpreter(e, Centralized()); err != nil {
				t.Fatal(err)
			}
		} else if err := in.Reset(e, Centralized()); err != nil {
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
			if in, err = NewInterpreter(e, Builtins()[ep%len(Builtins())]); err != nil {
				t.Fatal(err)
			}
		} else if err := in.Reset(e, Builtins()[ep%len(Builtins())]); err != nil {
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

// TestActiveViewsAreTheAgents: the views a ListController answers are
// Decision.Agents's, in its order, at every decision; ApplyList refuses a
// list of the wrong length.
func TestActiveViewsAreTheAgents(t *testing.T) {
	for _, m := range Builtins() {
		e := engine(t, "A5C12-1", 3)
		in, err := NewInterpreter(e, m)
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; e.Advance() && steps < 200; steps++ {
			d := in.Next()
			views := in.ActiveViews()
			i := 0
			for id, v := range d.Agents() {
				if i >= len(views) || views[i] != v || v.AgentID != id {
					t.Fatalf("%s step %d: agent %d is %s, not the list's", m.ID, d.Step, i, id)
				}
				i++
			}
			if i != len(views) || i != len(d.ActiveAgents) {
				t.Fatalf("%s step %d: %d agents, %d views, %d in the map", m.ID, d.Step, i, len(views), len(d.ActiveAgents))
			}
			if _, err := in.ApplyList(make([]int, len(views)+1), SourceBuiltin, nil, nil); err == nil {
				t.Fatalf("%s step %d: ApplyList took one action too many", m.ID, d.Step)
			}
			actions := make([]int, len(views))
			for i, v := range views {
				actions[i] = SafeAction(v)
			}
			if _, err := in.ApplyList(actions, SourceBuiltin, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// oddAnswer is a deliberately poor answer for the i-th view of step
// `step`: a negative index, one past the options, a masked option or a
// legal one, in turn.
func oddAnswer(step, i int, v *View) int {
	switch (step + i) % 5 {
	case 0:
		return -1
	case 1:
		return len(v.Options) + i
	case 2:
		for j, ok := range v.ActionMask {
			if !ok {
				return j
			}
		}
	}
	return v.LegalActions[(step+i)%len(v.LegalActions)]
}

// TestApplyListIsApplyNotes drives twin interpreters on twin engines, one
// answered through ApplyNotes's map and the other through ApplyList by
// position, with the same answers (many of them illegal, some steps with
// a controller error), and checks that the audits of every step, the
// errors, the messages and the engines' ends are the same.
func TestApplyListIsApplyNotes(t *testing.T) {
	for _, ref := range []string{"A5C12-1", "A3C9-1"} {
		for _, m := range Builtins() {
			e1, e2 := engine(t, ref, 4), engine(t, ref, 4)
			in1, err1 := NewInterpreter(e1, m)
			in2, err2 := NewInterpreter(e2, m)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			fallbacks, kept := 0, 0
			for steps := 0; steps < 400; steps++ {
				ok1, ok2 := e1.Advance(), e2.Advance()
				if ok1 != ok2 {
					t.Fatalf("%s %s step %d: the engines part", ref, m.ID, steps)
				}
				if !ok1 {
					break
				}
				d1, d2 := in1.Next(), in2.Next()
				views := in2.ActiveViews()
				actions := make([]int, len(views))
				byID := map[string]int{}
				for i, v := range views {
					actions[i] = oddAnswer(d2.Step, i, v)
					byID[v.AgentID] = actions[i]
				}
				var ctrlErr error
				if d1.Step%11 == 3 {
					ctrlErr = errors.New("no answer this time")
				}
				a1, err1 := in1.ApplyNotes(d1, byID, SourceExternal, ctrlErr, nil)
				a2, err2 := in2.ApplyList(actions, SourceExternal, ctrlErr, nil)
				j1, _ := json.Marshal(a1)
				j2, _ := json.Marshal(a2)
				if string(j1) != string(j2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s %s step %d:\nApplyNotes %s %v\nApplyList  %s %v", ref, m.ID, d1.Step, j1, err1, j2, err2)
				}
				if err1 != nil {
					break
				}
				for _, a := range a1 {
					if a.Source == SourceFallback {
						fallbacks++
					} else {
						kept++
					}
				}
			}
			j1, _ := json.Marshal(in1.Messages)
			j2, _ := json.Marshal(in2.Messages)
			if string(j1) != string(j2) || e1.Now() != e2.Now() || e1.Status() != e2.Status() {
				t.Fatalf("%s %s: the episodes differ", ref, m.ID)
			}
			if fallbacks == 0 || kept == 0 {
				t.Fatalf("%s %s: %d fallbacks, %d answers kept: the test does not test", ref, m.ID, fallbacks, kept)
			}
		}
	}
}

// TestAuditOfFindsEveryAgent: auditOf (an equality scan for a few
// audits, a binary search for more) finds each audit of a step by its
// id, and no id that has none.
func TestAuditOfFindsEveryAgent(t *testing.T) {
	var in Interpreter
	for n := range 12 {
		in.audits = in.audits[:0]
		for i := range n {
			in.audits = append(in.audits, Audit{AgentID: fmt.Sprintf("C%02d", 2*i+1)}) // in id order, as apply makes them
		}
		for i := range 2*n + 2 {
			id := fmt.Sprintf("C%02d", i)
			got, ok := in.auditOf(id)
			if want := i%2 == 1 && i < 2*n; ok != want || ok && got != i/2 {
				t.Fatalf("%d audits: auditOf(%s) = %d, %v", n, id, got, ok)
			}
		}
	}
}
