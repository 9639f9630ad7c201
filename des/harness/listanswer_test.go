package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// mapOnly hides a built-in controller's ChooseView (coord.ViewChooser):
// Run then takes its Act's answer map.
type mapOnly struct{ coord.Controller }

// chooser is a controller's name, source and Act with the given
// ChooseView.
type chooser struct {
	coord.Controller
	choose func(*coord.View) int
}

func (c chooser) ChooseView(v *coord.View) int { return c.choose(v) }
func (c chooser) Chooser() coord.Controller    { return c }

// TestPerViewAnswersAreTheMapAnswers runs the built-in controllers that
// answer each view alone (coord.ViewChooser) once by position (ApplyList)
// and once through Act's map, on fresh runs and on a Scratch, and checks
// that every artifact is byte for byte the same.
func TestPerViewAnswersAreTheMapAnswers(t *testing.T) {
	var sc Scratch
	n := 0
	for pi, ref := range []string{"A5C12-1", "A3C9-1", "gen:A4C8J7"} {
		p := plantOf(t, ref)
		for mi, mode := range coord.Builtins() {
			for ci, name := range []string{"rule", "greedy", "greedy_py"} {
				if (pi+mi+ci)%2 == 1 && testing.Short() {
					continue
				}
				seed := uint64(1 + (pi+mi+ci)%3)
				c, err := policy.New(name, seed)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := c.(coord.ViewChooser); !ok {
					t.Fatalf("%s does not answer per view", name)
				}
				if _, ok := coord.Controller(mapOnly{c}).(coord.ViewChooser); ok {
					t.Fatalf("a type embedding %s is taken for it", name)
				}
				byMap := episodeBytes(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: mapOnly{c}})
				byList := episodeBytes(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: c, Scratch: &sc})
				if byMap != byList {
					t.Fatalf("%s %s %s seed %d: the episode answered by position differs from the map's", ref, mode.ID, name, seed)
				}
				n++
			}
		}
	}
	if n < 12 {
		t.Fatalf("only %d episodes compared", n)
	}
}

// TestChooseEachTurnsPanicsIntoErrors: a choice function that panics
// makes an error naming the controller, as act does for Act.
func TestChooseEachTurnsPanicsIntoErrors(t *testing.T) {
	views := []*coord.View{{AgentID: "plant"}, {AgentID: "A1"}}
	actions := make([]int, 2)
	err := chooseEach(chooser{policy.Rule{}, func(v *coord.View) int {
		if v.AgentID == "A1" {
			panic("no choice")
		}
		return 3
	}}, views, actions)
	if err == nil || !strings.Contains(err.Error(), "controller rule panicked: no choice") {
		t.Fatalf("err %v", err)
	}
	_, aerr := act(context.Background(), policy.Rule{}, nil) // Act on a nil decision panics too
	if aerr == nil || !strings.HasPrefix(aerr.Error(), "controller rule panicked: ") {
		t.Fatalf("act: err %v", aerr)
	}
	if err := chooseEach(chooser{policy.Rule{}, func(*coord.View) int { return 1 }}, views, actions); err != nil || actions[0] != 1 || actions[1] != 1 {
		t.Fatalf("err %v, actions %v", err, actions)
	}
}
