package analyze

import (
	"fmt"
	"io"
	"strings"
)

// WriteSummary writes a few lines for the terminal: what was analysed,
// the hub and leader counts, and the agents per failure label.
func (rep *Report) WriteSummary(w io.Writer) {
	if !rep.Suite && len(rep.Runs) == 1 {
		r := &rep.Runs[0]
		t := &r.Topology
		fmt.Fprintf(w, "run %s: %s, N=%d, %s, success %v, %d rounds\n", r.ID, r.Task, r.N, r.Protocol, r.Success, r.Rounds)
		if t.Hub < 0 {
			fmt.Fprintf(w, "no communication between agents\n")
		} else {
			h := t.Agents[t.Hub]
			leader := "n/a (N < 3)"
			if t.LeaderDefined {
				leader = fmt.Sprint(t.Leader)
			}
			fmt.Fprintf(w, "hub: agent %d (out %d, in %d, reached %d of %d peers, traffic share %s); leader: %s; edges %d, degree Gini %s\n",
				t.Hub, h.Out, h.In, h.Reached, r.N-1, f4(t.HubShare), leader, t.Edges, f4(t.Gini))
		}
	} else {
		var defined, leaders, hub0, success int
		for i := range rep.Runs {
			t := &rep.Runs[i].Topology
			if t.LeaderDefined {
				defined++
				if t.Leader {
					leaders++
				}
			}
			if t.Hub == 0 {
				hub0++
			}
			if rep.Runs[i].Success {
				success++
			}
		}
		fmt.Fprintf(w, "%d runs (%d successful): a leader emerged in %d of the %d runs with N >= 3; the hub is agent 0 in %d\n",
			len(rep.Runs), success, leaders, defined, hub0)
		for i := range rep.Rounds {
			r := rep.Rounds[i].row()
			fmt.Fprintf(w, "mean rounds of %s's multi-agent runs: successful %s, failed %s\n", r[0], dash(r[3]), dash(r[4]))
		}
	}
	for _, f := range rep.Fields {
		count := map[string]int{} // over every agent kind
		for _, l := range rep.Labels {
			if l.Field == f && l.Level == AllLevels && l.A == l.B {
				count[l.A] += l.Agents
			}
		}
		var parts []string
		for _, l := range rep.LabelOrder[f] {
			parts = append(parts, fmt.Sprintf("%s %d", l, count[l]))
		}
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		fmt.Fprintf(w, "agents per label (%s): %s\n", f, strings.Join(parts, ", "))
	}
}
