package envserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// batch posts a batch body and decodes the results; it fails unless the
// request as a whole got 200.
func (c *client) batch(path string, body any) []BatchResult {
	c.t.Helper()
	b, _ := json.Marshal(body)
	code, out := c.do("POST", "/v1/batch/"+path, b)
	if code != http.StatusOK {
		c.t.Fatalf("batch %s: %d %s", path, code, out)
	}
	var resp BatchResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp.Results
}

func decode(t testing.TB, raw json.RawMessage) *coord.Decision {
	t.Helper()
	var d coord.Decision
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestBatchMatchesInProcess plays the rule policy on the four built-in
// paradigms at once through the batched endpoints: the traces are those of
// in-process runs, the agents listed cover every active agent, and the
// final progress equals the metrics.
func TestBatchMatchesInProcess(t *testing.T) {
	_, hs := newServer(t, Config{Token: "tok"})
	c := &client{t: t, base: hs.URL, token: "tok"}
	const seed = 3
	var creates []CreateRequest
	for i, m := range coord.Builtins() {
		s := uint64(seed)
		// The first episode does not ask for progress: it must get none.
		creates = append(creates, CreateRequest{Instance: testInstance, Paradigm: m.ID, Seed: &s, Progress: i > 0})
	}
	res := c.batch("create", BatchCreateRequest{Episodes: creates})
	ids := make([]string, len(res))
	agents := make([][]string, len(res))
	live := map[int]*coord.Decision{}
	for i, r := range res {
		if (r.Progress == nil) != (i == 0) {
			t.Errorf("create %d: progress %v, asked for: %v", i, r.Progress, creates[i].Progress)
		}
		if r.Code != http.StatusCreated || r.Episode == nil || r.Decision == nil {
			t.Fatalf("create %d: %+v", i, r)
		}
		ids[i], agents[i] = r.ID, r.Episode.Agents
		live[i] = decode(t, r.Decision)
	}
	final := make([]BatchResult, len(res))
	for len(live) > 0 {
		var items []BatchStepItem
		var order []int
		for i, d := range live {
			for a := range d.ActiveAgents {
				if !slices.Contains(agents[i], a) {
					t.Fatalf("%s: active agent %s not in agents %v", creates[i].Paradigm, a, agents[i])
				}
			}
			acts, _ := policy.Rule{}.Act(context.Background(), d)
			it := BatchStepItem{ID: ids[i]}
			step := d.Step
			it.Step = &step
			it.Actions = map[string]json.RawMessage{}
			for a, v := range acts {
				it.Actions[a] = json.RawMessage(fmt.Sprint(v))
			}
			items = append(items, it)
			order = append(order, i)
		}
		for k, r := range c.batch("step", BatchStepRequest{Items: items}) {
			i := order[k]
			switch {
			case r.Code != http.StatusOK || len(r.Problems) > 0 || r.ID != ids[i]:
				t.Fatalf("step: %+v", r)
			case r.Done:
				final[i] = r
				delete(live, i)
			default:
				live[i] = decode(t, r.Decision)
			}
		}
	}
	for i, r := range final {
		m := r.Metrics
		if i == 0 {
			if r.Progress != nil {
				t.Errorf("%s: progress at the end, not asked for", creates[i].Paradigm)
			}
			continue
		}
		if m == nil || r.Progress == nil || r.Status != m.Status {
			t.Fatalf("%s: end %+v", creates[i].Paradigm, r)
		}
		p := r.Progress
		if p.Completed != m.GCj || math.Abs(p.Tardiness-m.GTd) > 1e-6 || p.Time != m.GMk {
			t.Errorf("%s: progress %+v, metrics G_cj %d G_td %g G_mk %g", creates[i].Paradigm, *p, m.GCj, m.GTd, m.GMk)
		}
		code, tr := c.do("GET", "/v1/episodes/"+ids[i]+"/artifacts/trace.jsonl", nil)
		if code != 200 || !bytes.Equal(tr, inProcessTrace(t, creates[i].Paradigm, seed)) {
			t.Errorf("%s: the batched trace differs from the in-process one", creates[i].Paradigm)
		}
	}
	for i, r := range c.batch("delete", BatchDeleteRequest{IDs: ids}) {
		if r.Code != 200 || r.Episode == nil || r.Episode.State != StateDone || r.Episode.Metrics.GFb != 0 {
			t.Errorf("delete %d: %+v", i, r)
		}
	}
}

// TestBatchErrorsPerItem: a bad item gets its own error; the others go on.
func TestBatchErrorsPerItem(t *testing.T) {
	_, hs := newServer(t, Config{MaxBatch: 4})
	c := &client{t: t, base: hs.URL}
	s := uint64(1)
	res := c.batch("create", BatchCreateRequest{Episodes: []CreateRequest{
		{Instance: testInstance, Paradigm: "centralized", Seed: &s},
		{Instance: testInstance, Paradigm: "no-such-paradigm"},
		{Instance: "/etc/passwd", Paradigm: "centralized"},
		{Instance: testInstance, Paradigm: "heterarchical_cnp", Seed: &s},
	}})
	if res[0].Code != 201 || res[1].Code != 400 || res[2].Code != 400 || res[3].Code != 201 || res[1].Error == "" {
		t.Fatalf("create: %+v", res)
	}
	if want := []string{"plant"}; !slices.Equal(res[0].Episode.Agents, want) {
		t.Errorf("centralized agents %v, want %v", res[0].Episode.Agents, want)
	}
	a, b := res[0].ID, res[3].ID
	da, db := decode(t, res[0].Decision), decode(t, res[3].Decision)
	wrong := da.Step + 7
	stepA, stepB := da.Step, db.Step
	// An illegal index: the agent falls back, the step is taken.
	items := []BatchStepItem{
		{ID: "nope", ActionsRequest: ActionsRequest{Step: &stepA, Actions: map[string]json.RawMessage{"plant": json.RawMessage("0")}}},
		{ID: a, ActionsRequest: ActionsRequest{Step: &wrong, Actions: map[string]json.RawMessage{"plant": json.RawMessage("0")}}},
		{ID: b, ActionsRequest: ActionsRequest{Step: &stepB, Actions: map[string]json.RawMessage{"plant": json.RawMessage("999")}}},
		{ID: b},
	}
	res = c.batch("step", BatchStepRequest{Items: items})
	if res[0].Code != 404 || res[1].Code != 409 || res[1].Consumed || res[3].Code != 400 {
		t.Fatalf("step: %+v", res)
	}
	if res[2].Code != 200 || !strings.Contains(res[2].Problems["plant"], "not legal") || res[2].Decision == nil {
		t.Fatalf("illegal action: %+v", res[2])
	}
	// A peek (no actions) returns the pending decision, still a's first.
	res = c.batch("step", BatchStepRequest{Items: []BatchStepItem{{ID: a}}})
	if res[0].Code != 200 || decode(t, res[0].Decision).Step != stepA {
		t.Fatalf("peek: %+v", res[0])
	}
	// An unknown agent consumes the step.
	res = c.batch("step", BatchStepRequest{Items: []BatchStepItem{{ID: a, ActionsRequest: ActionsRequest{Step: &stepA,
		Actions: map[string]json.RawMessage{"cell:nowhere": json.RawMessage("0")}}}}})
	if res[0].Code != 422 || !res[0].Consumed {
		t.Fatalf("unknown agent: %+v", res[0])
	}
	// Whole-request errors: too many items, none, not JSON.
	five := make([]string, 5)
	for _, tc := range []struct {
		body string
		code int
	}{
		{mustJSON(BatchDeleteRequest{IDs: five}), http.StatusRequestEntityTooLarge},
		{`{"ids":[]}`, http.StatusBadRequest},
		{`{"ids":`, http.StatusBadRequest},
	} {
		if code, out := c.do("POST", "/v1/batch/delete", []byte(tc.body)); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.body, code, out, tc.code)
		}
	}
	res = c.batch("delete", BatchDeleteRequest{IDs: []string{a, a, "nope"}})
	if res[0].Code != 200 || res[1].Code != 400 || res[2].Code != 404 {
		t.Errorf("delete: %+v", res)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
