package check

import (
	"encoding/json"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
)

// knobModes are the shipped examples of the communication switches.
func knobModes(t *testing.T) []coord.AuthorityMode {
	t.Helper()
	var paths []string
	for _, f := range []string{"cnp_k2", "my_hybrid_k1", "holonic_summary", "adaptive_lean"} {
		paths = append(paths, "../../../examples/paradigms/"+f+".yaml")
	}
	return paradigmFiles(t, paths...)
}

// TestKnobRunsCheck: runs under bid_invitations and summary views,
// static and inside an adaptive paradigm's modes, pass every check.
func TestKnobRunsCheck(t *testing.T) {
	for _, m := range knobModes(t) {
		for _, run := range [][2]string{{"A5C12-1", "greedy"}, {"A3C9-1", "random"}} {
			t.Run(m.ID+"/"+run[0]+"/"+run[1], func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				runModeDir(t, run[0], m, run[1], 3, dir)
				rep, err := Dir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() {
					t.Fatalf("%d problems:%s", len(rep.Problems), problemsText(rep, 10))
				}
			})
		}
	}
}

// bidStepLines are the decisions.jsonl lines (indices) of one bid round
// with a cut, decoded.
type bidStepLines struct {
	step  int
	idx   []int
	lines []map[string]any
}

func (s *bidStepLines) ranking(i int) []any {
	ct := obj(s.lines[i], "payload", "context", "contract")
	return obj(ct, "invitation")["ranking"].([]any)
}

// obj walks a decoded JSON object.
func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// firstCut finds the first bid round in which more candidates were
// ranked than invited and ok holds for its first line.
func firstCut(t *testing.T, f *runFiles, ok func(s *bidStepLines) bool) *bidStepLines {
	t.Helper()
	for i := 0; i < len(f.decisions); {
		d := decode(t, f.decisions[i])
		if d["kind"] != "bid" {
			i++
			continue
		}
		s := &bidStepLines{step: int(num(d, "step"))}
		for ; i < len(f.decisions); i++ {
			d := decode(t, f.decisions[i])
			if d["kind"] != "bid" || int(num(d, "step")) != s.step {
				break
			}
			s.idx, s.lines = append(s.idx, i), append(s.lines, d)
		}
		if r := s.ranking(0); len(r) > len(s.lines) && ok(s) {
			return s
		}
	}
	t.Fatal("no bid round with a cut fits")
	return nil
}

// store writes the step's lines back, each mutated by f.
func (s *bidStepLines) store(t *testing.T, runs *runFiles, f func(i int)) {
	t.Helper()
	for i, l := range s.lines {
		f(i)
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		runs.decisions[s.idx[i]] = b
	}
}

// TestInvitationMutations: a cut that passes over a better-placed cell,
// misstates a figure, invents a decline, leaves out a candidate, is
// missing or unexpected, or a round whose bidders or announcements are
// not the invited cells, is each caught.
func TestInvitationMutations(t *testing.T) {
	src := t.TempDir()
	runModeDir(t, "A5C12-1", knobModes(t)[0], "random", 2, src) // cnp_k2
	entry := func(r []any, i int) map[string]any { return r[i].(map[string]any) }
	anyCut := func(*bidStepLines) bool { return true }
	cases := []struct {
		name, msg string
		mutate    func(f *runFiles)
	}{
		{"a passed-over cell swapped in", "yet invited", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			s.store(t, f, func(i int) {
				r := s.ranking(i)
				k := len(s.lines)
				entry(r, k-1)["invited"], entry(r, k)["invited"] = false, true
			})
		}},
		{"a passed-over cell's score lowered", "against the rule", func(f *runFiles) {
			s := firstCut(t, f, func(s *bidStepLines) bool {
				r := s.ranking(0)
				return entry(r, 0)["free_slots"] != json.Number("0") && entry(r, len(r)-1)["free_slots"] != json.Number("0")
			})
			s.store(t, f, func(i int) {
				r := s.ranking(i)
				entry(r, len(r)-1)["score"] = json.Number("-1")
			})
		}},
		{"an invited cell's score misstated", "its payload gives", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			s.store(t, f, func(i int) {
				r := s.ranking(i)
				entry(r, 0)["score"] = json.Number("0.001")
			})
		}},
		{"a decline invented", "never did", func(f *runFiles) {
			s := firstCut(t, f, func(s *bidStepLines) bool {
				r := s.ranking(0)
				_, d := entry(r, len(r)-1)["declined"]
				return !d
			})
			s.store(t, f, func(i int) {
				r := s.ranking(i)
				entry(r, len(r)-1)["declined"] = true
			})
		}},
		{"a candidate left out", "the candidates of job", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			s.store(t, f, func(i int) {
				ct := obj(s.lines[i], "payload", "context", "contract")
				r := s.ranking(i)
				obj(ct, "invitation")["ranking"] = r[:len(r)-1]
			})
		}},
		{"no invitation recorded", "record no invitation", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			s.store(t, f, func(i int) { delete(obj(s.lines[i], "payload", "context", "contract"), "invitation") })
		}},
		{"a cut under a paradigm without one", "no mode of paradigm", func(f *runFiles) {
			delete(obj(f.manifest, "paradigm"), "bid_invitations")
		}},
		{"a cut of another k", "has bid_invitations 3", func(f *runFiles) {
			obj(f.manifest, "paradigm")["bid_invitations"] = 3
		}},
		{"an announcement to a passed-over cell", "messages.jsonl announces", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			r := s.ranking(0)
			out := entry(r, len(r)-1)["cell"].(string)
			for i, b := range f.messages {
				m := decode(t, b)
				if m["type"] == "announce" && int(num(m, "step")) == s.step {
					m["receiver"] = "cell:" + out
					f.messages[i], _ = json.Marshal(m)
					return
				}
			}
			t.Fatal("no announcement in the round")
		}},
		{"a passed-over cell bids", "the cells that decided the bid", func(f *runFiles) {
			s := firstCut(t, f, anyCut)
			r := s.ranking(0)
			out := entry(r, len(r)-1)["cell"].(string)
			s.store(t, f, func(i int) {
				if i == 0 {
					s.lines[i]["agent_id"] = "cell:" + out
					s.lines[i]["payload"].(map[string]any)["agent_id"] = "cell:" + out
				}
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mutationFires(t, src, tc.mutate, ckInvite, tc.msg)
		})
	}
}
