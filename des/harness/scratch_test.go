package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// episodeBytes runs ep with every artifact written to memory and returns
// them with the metrics, as one comparable text.
func episodeBytes(t *testing.T, ep Episode) string {
	t.Helper()
	return playedBytes(t, ep, func(ep Episode) Result { return Run(context.Background(), ep) })
}

// playedBytes is episodeBytes with the episode played by play.
func playedBytes(t *testing.T, ep Episode, play func(Episode) Result) string {
	t.Helper()
	var trace, dec, msgs bytes.Buffer
	ep.Trace, ep.Decisions, ep.Messages = &trace, &dec, &msgs
	r := play(ep)
	if r.Err != nil {
		t.Fatalf("%s seed %d %s: %v", ep.Plant.Inst.Name, ep.Seed, ep.Mode.ID, r.Err)
	}
	m, err := json.Marshal(r.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s\n--\n%s\n--\n%s\n--\n%s", m, trace.Bytes(), dec.Bytes(), msgs.Bytes())
}

// TestScratchReuseIsInvisible runs a mix of plants, paradigms,
// controllers and seeds one after the other on one Scratch and checks
// that every episode's artifacts are byte for byte those of the same
// episode run fresh: nothing of an episode leaks into the next.
func TestScratchReuseIsInvisible(t *testing.T) {
	plants := []string{"A5C12-1", "A3C9-1", "gen:A4C8J7", "A5C12-1"}
	var sc Scratch
	n := 0
	for pi, ref := range plants {
		p := plantOf(t, ref)
		for mi, mode := range coord.Builtins() {
			for ci, ctrl := range []string{"rule", "greedy", "random"} {
				if (pi+mi+ci)%2 == 1 && testing.Short() {
					continue
				}
				seed := uint64(1 + (pi+mi+ci)%4)
				mk := func() coord.Controller {
					c, err := policy.New(ctrl, seed)
					if err != nil {
						t.Fatal(err)
					}
					return c
				}
				fresh := episodeBytes(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: mk()})
				reused := episodeBytes(t, Episode{Plant: p, Seed: seed, Mode: mode, Controller: mk(), Scratch: &sc})
				if fresh != reused {
					t.Fatalf("%s %s %s seed %d: the episode run on a used Scratch differs from a fresh one", ref, mode.ID, ctrl, seed)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d episodes compared", n)
	}
}
