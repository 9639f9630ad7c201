package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// stepped plays ep with a Stepper, answering each decision with answer
// (by position, coord.NoAnswer for none) given either through
// AnswerList or as the equivalent map through Answer, and returns the
// episode's bytes as episodeBytes does.
func stepped(t *testing.T, ep Episode, byList bool, answer func(*coord.View) int) string {
	t.Helper()
	return playedBytes(t, ep, func(ep Episode) Result {
		var st Stepper
		for ok := st.Start(context.Background(), ep); ok; {
			views := st.Views()
			if byList {
				acts := make([]int, len(views))
				for i, v := range views {
					acts[i] = answer(v)
				}
				ok = st.AnswerList(acts, nil)
				continue
			}
			m := map[string]int{}
			for _, v := range views {
				if a := answer(v); a != coord.NoAnswer {
					m[v.AgentID] = a
				}
			}
			ok = st.Answer(m, nil)
		}
		return st.Finish()
	})
}

// TestStepperIsRun plays episodes with a Stepper answered from outside
// (by position and by map, on fresh runs and on a Scratch) with the
// answers a built-in controller would give, and checks every artifact
// byte for byte against Run with that controller; and that an agent left
// without an answer (coord.NoAnswer) falls back as one missing from the
// map does.
func TestStepperIsRun(t *testing.T) {
	var sc Scratch
	n := 0
	for pi, ref := range []string{"A5C12-1", "gen:A4C8J7"} {
		p := plantOf(t, ref)
		for mi, mode := range coord.Builtins() {
			seed := uint64(1 + (pi+mi)%3)
			c, err := policy.New("greedy", seed)
			if err != nil {
				t.Fatal(err)
			}
			vc := c.(coord.ViewChooser)
			want := episodeBytes(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: c})
			for _, byList := range []bool{true, false} {
				ep := Episode{Plant: p, Seed: seed, Mode: mode, Controller: c}
				if byList {
					ep.Scratch = &sc
				}
				if got := stepped(t, ep, byList, vc.ChooseView); got != want {
					t.Fatalf("%s %s seed %d (by list %v): the stepped episode differs from Run's", ref, mode.ID, seed, byList)
				}
			}
			// Every other decision step leaves its agents without an answer.
			k := 0
			skip := func(v *coord.View) int {
				if k++; k%2 == 0 {
					return coord.NoAnswer
				}
				return vc.ChooseView(v)
			}
			list := stepped(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: c, Scratch: &sc}, true, skip)
			k = 0
			byMap := stepped(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: c}, false, skip)
			if list != byMap {
				t.Fatalf("%s %s seed %d: NoAnswer by position differs from a missing map entry", ref, mode.ID, seed)
			}
			if !bytes.Contains([]byte(list), []byte(`"reason":"no action for this agent"`)) {
				t.Fatalf("%s %s seed %d: no agent fell back for want of an answer", ref, mode.ID, seed)
			}
			n++
		}
	}
	if n < 8 {
		t.Fatalf("%d combinations checked", n)
	}
}

// TestStepperStartFails: an episode that cannot begin has no pending
// decision and Finish gives the error.
func TestStepperStartFails(t *testing.T) {
	p := plantOf(t, "A3C9-1")
	c, _ := policy.New("rule", 1)
	var st Stepper
	if st.Start(context.Background(), Episode{Plant: p, Seed: 1, Mode: coord.AuthorityMode{ID: "nonsense"}, Controller: c}) {
		t.Fatal("a decision is pending in an episode with no valid paradigm")
	}
	if r := st.Finish(); r.Err == nil {
		t.Fatal("no error from an episode that could not begin")
	}
}

// TestStepperFinishPending: an episode finished with a decision pending
// ends aborted, that decision's answers audited as fallbacks.
func TestStepperFinishPending(t *testing.T) {
	p := plantOf(t, "A3C9-1")
	c, _ := policy.New("rule", 1)
	var dec bytes.Buffer
	var st Stepper
	if !st.Start(context.Background(), Episode{Plant: p, Seed: 1, Mode: coord.Builtins()[0], Controller: c, Decisions: &dec}) {
		t.Fatal("no first decision")
	}
	step := st.Decision().Step
	r := st.Finish()
	if !errors.Is(r.Err, ErrFinished) || r.Metrics.Status != "aborted" {
		t.Fatalf("status %q, error %v", r.Metrics.Status, r.Err)
	}
	var a coord.Audit
	if err := json.Unmarshal(bytes.SplitN(dec.Bytes(), []byte("\n"), 2)[0], &a); err != nil {
		t.Fatal(err)
	}
	if a.Step != step || a.Source != coord.SourceFallback {
		t.Fatalf("the pending decision's audit: step %d source %s", a.Step, a.Source)
	}
	if st.Decision() != nil {
		t.Fatal("a decision is still pending")
	}
}
