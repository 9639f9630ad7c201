package coord_test

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// canTake reports whether a cell option shows room for the item now: a
// free slot and a machine up.
func canTake(o coord.Option) bool {
	return o.Cell != nil && o.Cell.FreeSlots > 0 && o.Cell.Down < o.Cell.Machines
}

// TestEscalateOnlyWhenLocalRecoveryIsExhausted: under every paradigm with
// an area level, an area's select_cell or reroute view offers escalate
// exactly when none of its untried capable cells has a free slot and a
// machine up, as the last option; both cases occur. The first time a run
// shows an area a view without escalate, the area answers the index
// escalate would take (the one after the cells): the answer is illegal,
// audited as the contract-safe fallback with the reason why escalate is
// not offered, and the fallback places the item locally.
func TestEscalateOnlyWhenLocalRecoveryIsExhausted(t *testing.T) {
	for _, m := range []coord.AuthorityMode{coord.HolonicHybrid(), coord.Hierarchical()} {
		offered, withheld, refused := 0, 0, 0
		for _, ref := range []string{"A5C12-1", "A5C12-2", "A5C12-3"} {
			for _, name := range []string{"rule", "random"} {
				c, err := policy.New(name, 1)
				if err != nil {
					t.Fatal(err)
				}
				s := newStepper(t, ref, 1, m, c)
				tried := false
				for d := s.next(t); d != nil; d = s.next(t) {
					var probe *coord.View
					for _, v := range d.Agents() {
						if v.Role != coord.RoleArea || v.Kind != coord.KindSelectCell && v.Kind != coord.KindReroute {
							continue
						}
						room, esc := false, -1
						for i, o := range v.Options {
							room = room || canTake(o)
							if o.Action == coord.ActEscalate {
								esc = i
							}
						}
						switch {
						case room && esc >= 0:
							t.Fatalf("%s %s %s step %d: %s is offered escalate while a cell has room: %+v", m.ID, ref, name, d.Step, v.AgentID, v.Options)
						case !room && esc != len(v.Options)-1:
							t.Fatalf("%s %s %s step %d: %s has no cell with room, escalate at %d of %d options", m.ID, ref, name, d.Step, v.AgentID, esc, len(v.Options))
						case room:
							withheld++
							if !tried {
								probe = v
							}
						default:
							offered++
						}
					}
					if probe == nil {
						s.apply(t, d)
						continue
					}
					tried = true
					acts, _ := c.Act(t.Context(), d)
					want := coord.SafeAction(probe) // the payload is the interpreter's until Apply returns
					acts[probe.AgentID] = len(probe.Options)
					audits, err := s.in.Apply(d, acts, c.Source(), nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, a := range audits {
						if a.AgentID != probe.AgentID {
							continue
						}
						refused++
						if a.Source != coord.SourceFallback || a.Requested == nil || *a.Requested != len(a.Payload.Options) ||
							!strings.HasPrefix(a.Reason, "illegal action index ") || !strings.Contains(a.Reason, ": escalate is not offered while local recovery is possible (cell ") ||
							a.Action != want || !canTake(a.Payload.Options[a.Action]) {
							t.Errorf("%s %s %s: the illegal escalate is audited as %+v (safe action %d)", m.ID, ref, name, a, want)
						}
					}
				}
			}
		}
		if offered == 0 || withheld == 0 || refused != 6 {
			t.Errorf("%s: escalate offered %d times, withheld %d times, %d illegal escalations refused of 6", m.ID, offered, withheld, refused)
		}
		t.Logf("%s: escalate offered %d times, withheld %d times", m.ID, offered, withheld)
	}
}
