package coord

import (
	"testing"
)

// TestLocalViewsReadLocalCells: an area or cell agent's payload costs what
// it shows. In decisions where no plant agent is active, the interpreter
// summarizes at most the cells of the active areas and the active cells,
// whatever the plant's size; only plant views read the whole plant.
func TestLocalViewsReadLocalCells(t *testing.T) {
	for _, ref := range []string{"A5C12-1", "gen:A16C64"} {
		for _, m := range []AuthorityMode{Hierarchical(), HolonicHybrid()} {
			e := engine(t, ref, 5)
			in, err := NewInterpreter(e, m)
			if err != nil {
				t.Fatal(err)
			}
			local, steps := 0, 0
			for e.Advance() && steps < 3000 {
				before := in.cellReads
				d := in.Next()
				reads := in.cellReads - before
				bound, plant := 0, false
				for _, v := range d.ActiveAgents {
					switch v.Role {
					case RolePlant:
						plant = true
					case RoleArea:
						for a, id := range in.areaAgents {
							if id == v.AgentID {
								bound += len(e.P.Areas[a].Cells)
							}
						}
					case RoleCell:
						bound++
					}
				}
				if !plant {
					local++
					if reads > bound {
						t.Fatalf("%s %s step %d: %d cell summaries for local agents that see %d cells", ref, m.ID, d.Step, reads, bound)
					}
				}
				actions := map[string]int{}
				for id, v := range d.ActiveAgents {
					actions[id] = SafeAction(v)
				}
				if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
					t.Fatal(err)
				}
				steps++
			}
			if local == 0 {
				t.Errorf("%s %s: no decision without the plant", ref, m.ID)
			}
		}
	}
}
