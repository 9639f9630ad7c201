package jetstream

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A worker's model client asks for its permits under the key of the
// coordinator's limit for the same model entry: two entries at one base
// URL (written two ways) get a limit each, and every call of each
// entry's client is granted a permit of that limit (a key the coordinator
// does not hold would be answered "no global limit", and the call would
// go unlimited).
func TestPermitKeyMatches(t *testing.T) {
	srv := httptest.NewServer(stubmodel.Handler(nil))
	defer srv.Close()
	e := parseExperiment(t, "benchmark: des\ndes:\n  instances: [A3C9-1]\n  controllers: [llm]\nmodels:\n"+
		"  - name: a\n    model: m\n    base_url: "+srv.URL+"/v1/\n    limits: {concurrency: 1}\n"+
		"  - name: b\n    model: m\n    base_url: "+srv.URL+"/v1\n    limits: {concurrency: 3, rpm: 600}\n")
	limits, err := ExperimentLimits(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(limits) != 2 || limits[0].Endpoint == limits[1].Endpoint || limits[0].Concurrency != 1 || limits[1].Concurrency != 3 || limits[1].RPM != 600 {
		t.Fatalf("limits %+v: want one per entry", limits)
	}

	_, nc, ps := servePermitLimits(t, limits)
	pc, err := NewPermitClient(nc, permitsTestID)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	rec := &recordingLimiter{l: pc}

	for i, m := range e.ModelList() {
		c, err := llm.New(llm.Config{BaseURL: m.BaseURL, Model: m.Model, Limiter: EntryLimiter(rec, m.Label())})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "hi"}}); err != nil {
			t.Fatal(err)
		}
		if got := rec.keys[len(rec.keys)-1]; got != limits[i].Endpoint {
			t.Errorf("entry %s asked under %q, the coordinator's limit is %q", m.Label(), got, limits[i].Endpoint)
		}
		if g := ps.Granted(); g != uint64(i+1) {
			t.Errorf("after entry %s's call: %d permits granted, want %d", m.Label(), g, i+1)
		}
	}
	if EntryLimiter(nil, "a") != nil {
		t.Error("EntryLimiter of no limiter is a limiter")
	}
}

// recordingLimiter records the keys asked of l (one goroutine at a time).
type recordingLimiter struct {
	l    llm.Limiter
	keys []string
}

func (r *recordingLimiter) Acquire(ctx context.Context, endpoint string) (func(), error) {
	r.keys = append(r.keys, endpoint)
	return r.l.Acquire(ctx, endpoint)
}
