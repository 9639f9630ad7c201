package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// alwaysEscalate answers every area with escalate whenever its view
// offers it, else with its first option, and every other agent (the
// plant, the cells) as the rule does: an area level that hands the plant
// all it may, with a plant that places well (the audit's runner of issue
// 32). It counts the escalations it chose and those offered while a
// capable cell of the area had a free slot and a machine up (local
// recovery not exhausted).
type alwaysEscalate struct{ escalated, early *int }

func (alwaysEscalate) Name() string         { return "always-escalate" }
func (alwaysEscalate) Source() coord.Source { return coord.SourceExternal }
func (c alwaysEscalate) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	out := map[string]int{}
	for id, v := range d.ActiveAgents {
		if v.Role != coord.RoleArea {
			out[id] = policy.Rule{}.ChooseView(v)
			continue
		}
		out[id] = v.LegalActions[0]
		for _, i := range v.LegalActions {
			if v.Options[i].Action != coord.ActEscalate {
				continue
			}
			out[id] = i
			*c.escalated++
			for _, o := range v.Options {
				if o.Cell != nil && o.Cell.FreeSlots > 0 && o.Cell.Down < o.Cell.Machines {
					*c.early++
					break
				}
			}
			break
		}
	}
	return out, nil
}

// TestAlwaysEscalateIsNoBetterThanRule: escalation is offered to an area
// only once local recovery is exhausted, so an area level that escalates
// whenever it may hands the plant only what its cells could not take, and
// the plant's fallback placements cannot out-schedule the rule (issue 32,
// item 3: on main it took G_mk 1,318 against the rule's 1,447). Every
// escalation it takes was offered, and each is one the audits show as
// the controller's own decision.
func TestAlwaysEscalateIsNoBetterThanRule(t *testing.T) {
	const seeds = 3
	var table strings.Builder
	fmt.Fprintf(&table, "| instance | paradigm | controller | G_mk | G_td | escalations | G_fb |\n|---|---|---|---|---|---|---|\n")
	for _, ref := range []string{"A5C12-1", "A5C12-2", "A5C12-3"} {
		p := plantOf(t, ref)
		for _, m := range []coord.AuthorityMode{coord.HolonicHybrid(), coord.Hierarchical()} {
			var mean [2][4]float64 // rule, always-escalate: G_mk, G_td, escalations, G_fb
			for k, name := range []string{"rule", "always-escalate"} {
				for _, seed := range p.Inst.Seeds.Test[:seeds] {
					var escalated, early int
					var c coord.Controller = alwaysEscalate{&escalated, &early}
					if name == "rule" {
						c = builtin(t, name)(seed)
					}
					mt := play(t, p, m, seed, name, c)
					esc := mt.Secondary.MessagesByType[coord.MsgEscalate]
					if early > 0 {
						t.Errorf("%s %s seed %d: %d of %d escalations offered while a capable cell of the area had room and a machine up", ref, m.ID, seed, early, escalated)
					}
					mean[k][0] += mt.GMk / seeds
					mean[k][1] += mt.GTd / seeds
					mean[k][2] += float64(esc) / seeds
					mean[k][3] += float64(mt.GFb) / seeds
				}
				fmt.Fprintf(&table, "| %s | %s | %s | %s | %s | %s | %s |\n", ref, m.ID, name,
					fmtMean(mean[k][0]), fmtMean(mean[k][1]), fmtMean(mean[k][2]), fmtMean(mean[k][3]))
			}
			for i, key := range []string{"G_mk", "G_td"} {
				if esc, rule := mean[1][i], mean[0][i]; esc < rule {
					t.Errorf("%s %s: always-escalate beats the rule on %s: %s against %s", ref, m.ID, key, fmtMean(esc), fmtMean(rule))
				}
			}
		}
	}
	t.Logf("means over the first %d test seeds:\n%s", seeds, table.String())
}
