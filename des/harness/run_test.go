package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

func plantOf(t testing.TB, ref string) *factory.Plant {
	t.Helper()
	in, err := factory.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	return factory.Compile(in)
}

// funcController adapts a function to coord.Controller.
type funcController func(d *coord.Decision) (map[string]int, error)

func (funcController) Name() string         { return "test" }
func (funcController) Source() coord.Source { return coord.SourceExternal }
func (f funcController) Act(_ context.Context, d *coord.Decision) (map[string]int, error) {
	return f(d)
}

func TestEveryEventTypeIsRealized(t *testing.T) {
	seen := map[string]bool{}
	for _, ref := range factory.BuiltinNames() {
		p := plantOf(t, ref)
		for _, name := range policy.Names() {
			for seed := uint64(1); seed <= 3; seed++ {
				c, _ := policy.New(name, seed)
				var tr bytes.Buffer
				if r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: coord.Centralized(), Controller: c, Trace: &tr}); r.Err != nil {
					t.Fatal(r.Err)
				}
				sc := bufio.NewScanner(&tr)
				for sc.Scan() {
					var rec struct {
						Ev string `json:"ev"`
					}
					if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
						t.Fatal(err)
					}
					seen[rec.Ev] = true
				}
			}
		}
	}
	for e := factory.EventType(0); e < factory.NumEventTypes; e++ {
		if !seen[e.String()] {
			t.Errorf("event %q never realized", e)
		}
	}
}

func TestNoProgressTruncation(t *testing.T) {
	in, err := factory.Resolve("A5C12-1")
	if err != nil {
		t.Fatal(err)
	}
	in.Horizon = 1e9 // so that no_progress, not the time limit, ends it
	p := factory.Compile(in)
	// Release nothing, ever: breakdowns keep events pending, so the plant
	// can defer forever; the no-progress rule must stop the episode.
	deferAll := funcController(func(d *coord.Decision) (map[string]int, error) {
		out := map[string]int{}
		for id, v := range d.ActiveAgents {
			out[id] = v.LegalActions[0]
			for _, i := range v.LegalActions {
				if v.Options[i].Action == "defer" {
					out[id] = i
				}
			}
		}
		return out, nil
	})
	r := Run(context.Background(), Episode{Plant: p, Seed: 1, Mode: coord.Centralized(), Controller: deferAll})
	m := r.Metrics
	if r.Err != nil || m.Status != string(factory.NoProgress) || m.GTr != 1 {
		t.Fatalf("status %s err %v, want no_progress", m.Status, r.Err)
	}
	if m.GDs != p.Inst.Limits.NoProgressSteps || m.GCj != 0 || m.GDj != m.Secondary.Jobs {
		t.Errorf("G_ds %d (limit %d), G_cj %d, G_dj %d", m.GDs, p.Inst.Limits.NoProgressSteps, m.GCj, m.GDj)
	}
}

func TestDecisionLimit(t *testing.T) {
	in, err := factory.Resolve("A5C12-1")
	if err != nil {
		t.Fatal(err)
	}
	in.Limits.MaxDecisions = 25
	r := Run(context.Background(), Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(), Controller: policy.Rule{}})
	if r.Metrics.Status != string(factory.DecisionLimit) || r.Metrics.GDs != 25 || r.Metrics.GTr != 1 {
		t.Errorf("status %s after %d steps, want decision_limit after 25", r.Metrics.Status, r.Metrics.GDs)
	}
}

// A controller that fails in every way still yields a complete, audited
// episode: its bad replies become fallbacks and the results are kept.
func TestMisbehavingControllerIsAudited(t *testing.T) {
	p := plantOf(t, "A5C12-1")
	n := 0
	bad := funcController(func(d *coord.Decision) (map[string]int, error) {
		n++
		switch n % 4 {
		case 0:
			panic("controller bug")
		case 1:
			return nil, errors.New("endpoint down")
		case 2:
			return map[string]int{"plant": 1 << 20}, nil
		}
		return map[string]int{"plant": d.ActiveAgents["plant"].LegalActions[0]}, nil
	})
	var dec bytes.Buffer
	r := Run(context.Background(), Episode{Plant: p, Seed: 1, Mode: coord.Centralized(), Controller: bad, Decisions: &dec})
	m := r.Metrics
	if r.Err != nil || m.Status == "" {
		t.Fatalf("episode failed: %v", r.Err)
	}
	if m.GFb == 0 || m.GFb+m.Secondary.DecisionsBySource["external"] != m.GDs {
		t.Errorf("G_fb %d of %d steps, by source %v", m.GFb, m.GDs, m.Secondary.DecisionsBySource)
	}
	want := (m.GDs + 1) * 3 / 4 // steps 1,2,3 of each 4 fail (n%4 = 1, 2, 0)
	if m.GFb < want-1 || m.GFb > want+1 {
		t.Errorf("G_fb = %d, want about %d", m.GFb, want)
	}
	reasons := map[string]int{}
	sc := bufio.NewScanner(&dec)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var a coord.Audit
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Source == coord.SourceFallback {
			reasons[a.Reason]++
		}
	}
	for _, r := range []string{"controller error: controller test panicked: controller bug", "controller error: endpoint down", "illegal action index 1048576"} {
		if reasons[r] == 0 {
			t.Errorf("no fallback audited with reason %q (have %v)", r, reasons)
		}
	}
}

// badSelector returns an invalid mode: the episode must stop with a clear
// error, not run silently under some other protocol.
type badSelector struct{}

func (badSelector) ModeFor(*coord.WorkItem, *coord.PlantObservation) coord.AuthorityMode {
	return coord.AuthorityMode{ID: "broken", RoutingAuthorityMode: "anarchy", CellContractActions: "whatever"}
}

func TestInvalidDynamicModeStopsTheEpisode(t *testing.T) {
	r := Run(context.Background(), Episode{Plant: plantOf(t, "A3C9-1"), Seed: 11, Mode: coord.Centralized(), Selector: badSelector{}, Controller: policy.Rule{}})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "routing_authority_mode") || r.Metrics.Status != string(factory.ControllerFail) {
		t.Fatalf("err %v status %s", r.Err, r.Metrics.Status)
	}
}
