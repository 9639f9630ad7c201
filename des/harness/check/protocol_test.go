package check

import (
	"context"
	"encoding/json"

	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
)

// erratic answers as the random controller does, but every few steps
// leaves one agent unanswered or answers it with an illegal index (on an
// area's view that withholds escalate, the index escalate takes when it
// is offered), so that its runs hold the harness's fallbacks of every
// kind of decision.
type erratic struct{ coord.Controller }

func (c erratic) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	out, err := c.Controller.Act(ctx, d)
	for id, v := range d.ActiveAgents {
		switch d.Step % 7 {
		case 2:
			delete(out, id)
		case 5:
			out[id] = 99
			if v.Role == coord.RoleArea && v.Options[len(v.Options)-1].Action != coord.ActEscalate {
				out[id] = len(v.Options)
			}
		}
		break // one agent of the step
	}
	return out, err
}

// runErratic plays one episode of the erratic controller into dir.
func runErratic(t *testing.T, inst string, mode coord.AuthorityMode, seed uint64, dir string) {
	t.Helper()
	_, err := harness.RunToDir(context.Background(), harness.Episode{Plant: plant(t, inst), Seed: seed, Mode: mode,
		Controller: erratic{controller(t, "random", seed)}}, dir)
	if err != nil {
		t.Fatal(err)
	}
}

// TestParadigmFilesCheck: runs of the example paradigm files (adaptive
// ones, bid_invitations and view_detail variants) and of the erratic
// controller under every built-in paradigm pass every check.
func TestParadigmFilesCheck(t *testing.T) {
	files, err := filepath.Glob("../../../examples/paradigms/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example paradigms: %v", err)
	}
	examples := len(files)
	modes := append(paradigmFiles(t, files...), coord.Builtins()...)
	for _, inst := range []string{"A3C9-1", "A5C12-1", "gen:A8C24"} {
		t.Run(inst, func(t *testing.T) {
			t.Parallel()
			playAll(t, inst, modes, examples)
		})
	}
}

// playAll plays inst under every mode (the random controller under the
// first examples, the erratic one under all) and checks the runs.
func playAll(t *testing.T, inst string, modes []coord.AuthorityMode, examples int) {
	for k, m := range modes {
		seed := uint64(1 + k%3)
		ctrls := []string{"random", "erratic"}
		if k >= examples {
			ctrls = ctrls[1:] // TestConsistency plays the built-in paradigms with the built-in controllers
		}
		for _, ctrl := range ctrls {
			dir := t.TempDir()
			if ctrl == "erratic" {
				runErratic(t, inst, m, seed, dir)
			} else {
				runModeDir(t, inst, m, ctrl, seed, dir)
			}
			rep, err := Dir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Errorf("%s %s %s seed %d: %d problems:%s", inst, m.ID, ctrl, seed, len(rep.Problems), problemsText(rep, 10))
			}
		}
	}
}

// audit is a decoded decisions.jsonl line.
type audit = map[string]any

func (f *runFiles) audit(t *testing.T, i int) audit { return decode(t, f.decisions[i]) }

func (f *runFiles) setAudit(t *testing.T, i int, a audit) {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	f.decisions[i] = b
}

// findAudit is the index of the first audit ok accepts, -1 if none.
func (f *runFiles) findAudit(t *testing.T, ok func(a audit) bool) int {
	for i := range f.decisions {
		if ok(f.audit(t, i)) {
			return i
		}
	}
	return -1
}

func options(a audit) []any { return a["payload"].(map[string]any)["options"].([]any) }

// chosenOpt is the committed option of a.
func chosenOpt(a audit) map[string]any { return options(a)[int(num(a, "action"))].(map[string]any) }

func optCell(o any) string {
	c, _ := o.(map[string]any)["cell"].(map[string]any)
	s, _ := c["cell"].(string)
	return s
}

func workItem(a audit) (job, op int) {
	w := a["payload"].(map[string]any)["context"].(map[string]any)["work_item"].(map[string]any)
	return inum(w, "job"), inum(w, "op")
}

// otherOption is the index of an option of a other than the chosen one
// that ok accepts, -1 if none.
func otherOption(a audit, ok func(o map[string]any) bool) int {
	for k, o := range options(a) {
		if k != int(num(a, "action")) && ok(o.(map[string]any)) {
			return k
		}
	}
	return -1
}

// rerouteOffer is the trace index of the stage_release_ready of a blocked
// job offered to routing again, -1 if the run has none.
func (f *runFiles) rerouteOffer() int {
	for i := 1; i < len(f.trace); i++ {
		if ev(f.trace[i]) == "stage_release_ready" && ev(f.trace[i-1]) == "blocking_release" {
			return i
		}
	}
	return -1
}

// TestProtocolMutations: under every built-in paradigm, a decisions.jsonl
// that misstates who placed what (a release or cell other than the
// trace's, a flipped commit, a commit by a cell not offered the item, a
// deleted or duplicated decision, a re-route offer missing on either side,
// an escalation where it was not offered) or a fallback relabelled as the
// controller's, and a due date that the instance does not give, are
// reported.
func TestProtocolMutations(t *testing.T) {
	type mutation struct {
		name, check, msg string
		mutate           func(t *testing.T, f *runFiles) bool // false: no decision of the run it applies to
	}
	kind := func(k ...string) func(a audit) bool {
		return func(a audit) bool {
			for _, x := range k {
				if str(a, "kind") == x {
					return true
				}
			}
			return false
		}
	}
	// switchOption commits another option of the first audit sel accepts that ok accepts.
	switchOption := func(sel func(a audit) bool, ok func(o map[string]any) bool) func(t *testing.T, f *runFiles) bool {
		return func(t *testing.T, f *runFiles) bool {
			i := f.findAudit(t, func(a audit) bool { return sel(a) && otherOption(a, ok) >= 0 })
			if i < 0 {
				return false
			}
			a := f.audit(t, i)
			a["action"] = otherOption(a, ok)
			f.setAudit(t, i, a)
			return true
		}
	}
	isAction := func(act string) func(o map[string]any) bool {
		return func(o map[string]any) bool { return o["action"] == act }
	}
	fallback := func(a audit) bool { return str(a, "source") == "fallback" }
	placing := func(a audit) bool {
		return (str(a, "kind") == "select_cell" || str(a, "kind") == "award" || str(a, "kind") == "plant_fallback") && chosenOpt(a)["action"] == "assign"
	}
	edit := func(sel func(a audit) bool, change func(a audit)) func(t *testing.T, f *runFiles) bool {
		return func(t *testing.T, f *runFiles) bool {
			i := f.findAudit(t, sel)
			if i < 0 {
				return false
			}
			a := f.audit(t, i)
			change(a)
			f.setAudit(t, i, a)
			return true
		}
	}
	deleteAudit := func(sel func(a audit) bool) func(t *testing.T, f *runFiles) bool {
		return func(t *testing.T, f *runFiles) bool {
			i := f.findAudit(t, sel)
			if i >= 0 {
				f.decisions = slices.Delete(f.decisions, i, i+1)
			}
			return i >= 0
		}
	}
	mismatch := "does not match trace.jsonl"
	mutations := []mutation{
		{"release names another job", ckDecisions, mismatch, switchOption(kind("release"), isAction("release"))},
		{"placement names another cell", ckDecisions, "", switchOption(placing, isAction("assign"))},
		{"commit flipped to reject", ckDecisions, "", switchOption(func(a audit) bool { return kind("commit")(a) && chosenOpt(a)["action"] == "accept" }, isAction("reject"))},
		{"commit flipped to accept", ckDecisions, "", switchOption(func(a audit) bool { return kind("commit")(a) && chosenOpt(a)["action"] == "reject" }, isAction("accept"))},
		{"commit by another cell", ckDecisions, "which was offered to", edit(kind("commit"), func(a audit) {
			a["agent_id"] = a["agent_id"].(string) + "x"
		})},
		{"select_cell by another area", ckDecisions, "which the plant allocated to area", edit(func(a audit) bool {
			return kind("select_cell")(a) && str(a, "role") == "area"
		}, func(a audit) { a["agent_id"] = "area:elsewhere" })},
		{"plant_fallback deleted", ckDecisions, "", deleteAudit(kind("plant_fallback"))},
		{"commit deleted", ckDecisions, "", deleteAudit(kind("commit"))},
		{"re-route offer removed from the trace", ckDecisions, "", func(t *testing.T, f *runFiles) bool {
			i := f.rerouteOffer()
			if i < 0 || ev(f.trace[i+1]) != "route_assigned" {
				return false
			}
			// The job stays blocked where it was: drop the offer and the
			// routing it led to, and what followed of that job's move.
			f.remove(i + 1)
			f.remove(i)
			return true
		}},
		{"re-route offer's decisions removed", ckDecisions, "", func(t *testing.T, f *runFiles) bool {
			i := f.rerouteOffer()
			if i < 0 {
				return false
			}
			job, op, tm := inum(f.trace[i], "job"), inum(f.trace[i], "op"), num(f.trace[i], "t")
			var keep [][]byte
			removed := 0
			for k := range f.decisions {
				a := f.audit(t, k)
				if str(a, "kind") != "release" && str(a, "kind") != "bid" && num(a, "time") == tm {
					if j, o := workItem(a); j == job && o == op {
						removed++
						continue
					}
				}
				keep = append(keep, f.decisions[k])
			}
			f.decisions = keep
			return removed > 0
		}},
		{"re-route offer's placement fabricated", ckDecisions, "", func(t *testing.T, f *runFiles) bool {
			i := f.rerouteOffer()
			if i < 0 {
				return false
			}
			job, op, tm := inum(f.trace[i], "job"), inum(f.trace[i], "op"), num(f.trace[i], "t")
			k := f.findAudit(t, func(a audit) bool {
				if str(a, "kind") == "release" || str(a, "kind") == "bid" || num(a, "time") != tm {
					return false
				}
				j, o := workItem(a)
				return j == job && o == op && (placing(a) || kind("commit")(a) && chosenOpt(a)["action"] == "accept")
			})
			if k < 0 {
				return false
			}
			f.decisions = append(f.decisions[:k+1], f.decisions[k:]...) // the placement twice
			return true
		}},
		{"escalate where it was not offered", ckDecisions, "escalate is offered only when local recovery is exhausted", edit(func(a audit) bool {
			if !kind("select_cell")(a) || str(a, "role") != "area" || fallback(a) || chosenOpt(a)["action"] != "assign" {
				return false
			}
			c := chosenOpt(a)["cell"].(map[string]any)
			return numMap(c, "free_slots") > 0 && numMap(c, "down") < numMap(c, "machines")
		}, func(a audit) {
			// The area chose a cell with room; the record says it escalated,
			// and its payload that escalate was offered.
			p := a["payload"].(map[string]any)
			n := len(options(a))
			p["options"] = append(options(a), map[string]any{"index": n, "action": "escalate"})
			p["legal_actions"] = append(p["legal_actions"].([]any), n)
			p["action_mask"] = append(p["action_mask"].([]any), true)
			a["action"] = n
		})},
		{"contract switches of the paradigm changed", ckManifest, "the built-in paradigm's cells", func(t *testing.T, f *runFiles) bool {
			pd := f.manifest["paradigm"].(map[string]any)
			pd["cell_contract_actions"] = map[any]string{"accept_reject": "accept_only", "accept_only": "accept_reject"}[pd["cell_contract_actions"]]
			return true
		}},
		{"fallback relabelled, reason kept", ckDecisions, "the harness decided it", edit(fallback, func(a audit) { a["source"] = "builtin" })},
		{"fallback relabelled, requested kept", ckDecisions, "the harness decided it", edit(func(a audit) bool { return fallback(a) && has(a, "requested") }, func(a audit) {
			a["source"] = "builtin"
			delete(a, "reason")
		})},
		{"fallback relabelled as the requested action", ckDecisions, "", edit(func(a audit) bool { return fallback(a) && has(a, "requested") }, func(a audit) {
			a["source"] = "builtin"
			a["action"] = a["requested"]
			delete(a, "reason")
			delete(a, "requested")
		})},
		{"withheld escalate's reason names another cell", ckDecisions, "which the harness does not write", edit(func(a audit) bool {
			return fallback(a) && strings.Contains(str(a, "reason"), "escalate is not offered")
		}, func(a audit) {
			a["reason"] = strings.Replace(str(a, "reason"), "(cell ", "(cell X", 1)
		})},
		{"fallback with a reason of its own", ckDecisions, "which the harness does not write", edit(fallback, func(a audit) { a["reason"] = "the controller preferred it" })},
		{"fallback not the contract-safe action", ckDecisions, "the contract-safe rule gives", switchOption(fallback, func(o map[string]any) bool { return true })},
		{"unusable reply as the controller's", ckDecisions, "whose reply was unusable", edit(func(a audit) bool { return !fallback(a) }, func(a audit) {
			a["reply_error"] = "no integer in the reply"
		})},
		{"due date changed in the trace", ckDue, "instance.json gives", func(t *testing.T, f *runFiles) bool {
			i := f.find(0, func(l line) bool { return ev(l) == "arrival" })
			setNum(f.trace[i], "due", num(f.trace[i], "due")+100)
			return true
		}},
		{"due dates changed in instance.json", ckDue, "instance.json gives", func(t *testing.T, f *runFiles) bool {
			setNumMap(f.instance, "due_slack", numMap(f.instance, "due_slack")+1)
			return true
		}},
		{"due dates changed in instance.json and the trace alike", ckDue, "not the reported instance's", func(t *testing.T, f *runFiles) bool {
			slack := numMap(f.instance, "due_slack")
			setNumMap(f.instance, "due_slack", slack+1)
			for _, l := range f.trace {
				if ev(l) == "arrival" {
					t0, due := num(l, "t"), num(l, "due")
					setNum(l, "due", t0+(slack+1)*((due-t0)/slack))
				}
			}
			return true
		}},
	}
	only := map[string]string{ // the paradigms whose runs have the decisions a mutation needs
		"commit flipped to reject":                      "heterarchical_cnp holonic_hybrid",
		"commit flipped to accept":                      "heterarchical_cnp holonic_hybrid",
		"commit by another cell":                        "heterarchical_cnp holonic_hybrid",
		"commit deleted":                                "heterarchical_cnp holonic_hybrid",
		"select_cell by another area":                   "hierarchical holonic_hybrid",
		"escalate where it was not offered":             "hierarchical holonic_hybrid",
		"withheld escalate's reason names another cell": "hierarchical holonic_hybrid",
		// hierarchical reaches the plant's fallback only when every area
		// escalated, each with no cell able to take the item: not in this run.
		"plant_fallback deleted": "heterarchical_cnp holonic_hybrid",
	}
	for _, m := range coord.Builtins() {
		src := filepath.Join(t.TempDir(), m.ID)
		runErratic(t, "A3C9-1", m, 2, src)
		if rep, err := Dir(src); err != nil || !rep.OK() {
			t.Fatalf("%s: the base run does not check: %v%s", m.ID, err, problemsText(rep, 10))
		}
		for _, mu := range mutations {
			if o, ok := only[mu.name]; ok && !slices.Contains(strings.Fields(o), m.ID) {
				continue
			}
			t.Run(m.ID+"/"+mu.name, func(t *testing.T) {
				mutationFires(t, src, func(f *runFiles) {
					if !mu.mutate(t, f) {
						t.Fatalf("the %s run has no decision this mutation applies to", m.ID)
					}
				}, mu.check, mu.msg)
			})
		}
	}
}
