package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
)

// adaptiveModes are the shipped example and a rule set that uses every
// condition form and feature.
func adaptiveModes(t *testing.T) []coord.AuthorityMode {
	t.Helper()
	return paradigmFiles(t, "../../../examples/paradigms/adaptive.yaml", "testdata/adaptive_stress.yaml", "../../../examples/paradigms/adaptive_agent.yaml")
}

// paradigmFiles loads paradigm files.
func paradigmFiles(t *testing.T, paths ...string) []coord.AuthorityMode {
	t.Helper()
	var set coord.Paradigms
	var out []coord.AuthorityMode
	for _, f := range paths {
		m, err := set.AddFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// mutationFires writes the run of src, as mutate changes it, to a new
// directory and requires check to report a problem saying msg.
func mutationFires(t *testing.T, src string, mutate func(f *runFiles), check, msg string) {
	t.Helper()
	f := loadRun(t, src)
	mutate(f)
	dir := t.TempDir()
	f.write(t, dir)
	rep, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Check == check && strings.Contains(p.Msg, msg) {
			return
		}
	}
	t.Errorf("check %q (%q) did not fire; got %d problems:%s", check, msg, len(rep.Problems), problemsText(rep, 10))
}

// TestAdaptiveRunsCheck: runs of adaptive paradigms pass every check,
// and their traces hold a mode_selected record per routing, with more
// than one mode chosen.
func TestAdaptiveRunsCheck(t *testing.T) {
	for _, m := range adaptiveModes(t) {
		for _, inst := range []string{"A5C12-1", "A5C12-3", "A3C9-1"} {
			for _, ctrl := range []string{"greedy", "random"} {
				dir := t.TempDir()
				runModeDir(t, inst, m, ctrl, 2, dir)
				rep, err := Dir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() {
					t.Fatalf("%s %s %s: %d problems:%s", m.ID, inst, ctrl, len(rep.Problems), problemsText(rep, 10))
				}
				if rep.Stats.Events["mode_selected"] != rep.Stats.Events["route_assigned"] {
					t.Errorf("%s %s %s: %d mode_selected, %d route_assigned", m.ID, inst, ctrl,
						rep.Stats.Events["mode_selected"], rep.Stats.Events["route_assigned"])
				}
			}
		}
	}
}

// adaptiveBase is a valid adaptive run (the shipped example, A5C12-1,
// random controller, seed 2) and the index of its mode_selected lines.
func adaptiveBase(t *testing.T) (string, *runFiles, []int) {
	t.Helper()
	dir := t.TempDir()
	runModeDir(t, "A5C12-1", adaptiveModes(t)[0], "random", 2, dir)
	f := loadRun(t, dir)
	var idx []int
	modes := map[string]bool{}
	for i, l := range f.trace {
		if ev(l) == "mode_selected" {
			idx = append(idx, i)
			modes[str(l, "mode")] = true
		}
	}
	if len(modes) < 2 {
		t.Fatalf("the base run chose only %v", modes)
	}
	return dir, f, idx
}

// TestModeMutations: a trace whose recorded mode or state contradicts
// the rules or the replay, a routing without its choice, a payload that
// misstates who has authority, and a choice under a static paradigm are
// each caught.
func TestModeMutations(t *testing.T) {
	src, _, _ := adaptiveBase(t)
	first := func(f *runFiles, idx []int, ok func(l line) bool) line {
		for _, i := range idx {
			if ok(f.trace[i]) {
				return f.trace[i]
			}
		}
		t.Fatal("no mode_selected record fits")
		return nil
	}
	state := func(l line) map[string]any { return l["state"].(map[string]any) }
	cases := []struct {
		name, msg string
		mutate    func(f *runFiles, idx []int)
	}{
		{"mode contradicts the rule", "the rules give", func(f *runFiles, idx []int) {
			l := first(f, idx, func(l line) bool { return str(l, "mode") == "centralized" })
			l["mode"], l["rule"] = "adaptive", json.Number("-1")
		}},
		{"rule index changed", "the rules give", func(f *runFiles, idx []int) {
			l := first(f, idx, func(l line) bool { return str(l, "mode") == "centralized" })
			l["rule"] = json.Number("5")
		}},
		{"state invented to fit another mode", "the trace gives", func(f *runFiles, idx []int) {
			l := first(f, idx, func(l line) bool { return str(l, "mode") == "adaptive" })
			setNumMap(state(l), "power_headroom", 0.01) // rule 0 would hold: centralized
			l["mode"], l["rule"] = "centralized", json.Number("0")
		}},
		{"wip misrecorded", "records wip", func(f *runFiles, idx []int) {
			s := state(f.trace[idx[3]])
			setNumMap(s, "wip", numMap(s, "wip")+1)
		}},
		{"recent rejections misrecorded", "recent_rejections", func(f *runFiles, idx []int) {
			s := state(f.trace[idx[3]])
			setNumMap(s, "recent_rejections", numMap(s, "recent_rejections")+2)
		}},
		{"routing without its choice", "no mode_selected since", func(f *runFiles, idx []int) {
			f.remove(idx[4])
		}},
		{"payload misstates the mode", "the payload says", func(f *runFiles, idx []int) {
			for i, d := range f.decisions {
				if bytes.Contains(d, []byte(`"mode_id":"adaptive"`)) {
					f.decisions[i] = bytes.Replace(d, []byte(`"mode_id":"adaptive"`), []byte(`"mode_id":"centralized"`), 1)
					return
				}
			}
			t.Fatal("no payload under the paradigm's own mode")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mutationFires(t, src, func(f *runFiles) {
				var idx []int
				for i, l := range f.trace {
					if ev(l) == "mode_selected" {
						idx = append(idx, i)
					}
				}
				tc.mutate(f, idx)
			}, ckMode, tc.msg)
		})
	}
	t.Run("a state without one of its features", func(t *testing.T) {
		mutationFires(t, src, func(f *runFiles) {
			delete(f.trace[f.find(0, func(l line) bool { return ev(l) == "mode_selected" })]["state"].(map[string]any), "slack")
		}, ckFormat, "state keys")
	})
	t.Run("a choice under a static paradigm", func(t *testing.T) {
		_, af, idx := adaptiveBase(t)
		mutationFires(t, base(t), func(f *runFiles) {
			rec := clone(af.trace[idx[0]])
			at := f.find(0, func(l line) bool { return ev(l) == "route_assigned" })
			rec["job"], rec["op"], rec["t"] = f.trace[at]["job"], f.trace[at]["op"], f.trace[at]["t"]
			f.insert(at, rec)
		}, ckMode, "has no adaptive rules")
	})
}

// TestAgentChoiceMutations: a mode_selected record that misstates the
// mode_selector's choice, or claims a rule, is caught.
func TestAgentChoiceMutations(t *testing.T) {
	dir := t.TempDir()
	runModeDir(t, "A5C12-1", adaptiveModes(t)[2], "random", 2, dir)
	for _, tc := range []struct {
		name, msg string
		edit      func(l line)
	}{
		{"another mode", "the mode_selector chose", func(l line) {
			if str(l, "mode") == "centralized" {
				l["mode"] = "hierarchical"
			} else {
				l["mode"] = "centralized"
			}
		}},
		{"a rule instead of the agent", "the mode_selector agent chooses", func(l line) { l["rule"] = json.Number("0") }},
		{"another step", "select_mode", func(l line) { setNum(l, "step", num(l, "step")+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutationFires(t, dir, func(f *runFiles) {
				tc.edit(f.trace[f.find(0, func(l line) bool { return ev(l) == "mode_selected" })])
			}, ckMode, tc.msg)
		})
	}
}
