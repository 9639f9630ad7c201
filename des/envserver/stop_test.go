package envserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// bigInstance is a plant whose episode, played on with fallbacks, takes
// far longer than the few decisions the tests answer.
const bigInstance = "gen:A16C64J2000"

// TestDeleteStopsARunningEpisode: DELETE of a running episode ends its
// run before its next decision: the pending decision falls back, no later
// one is played, and the metrics say interrupted. Before, the rest of
// the episode was played with fallbacks (all 2000 jobs, gigabytes of
// decisions on the largest plants) before DELETE could answer.
func TestDeleteStopsARunningEpisode(t *testing.T) {
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true})
	c := &client{t: t, base: hs.URL}
	id := c.createBody(`{"instance":"` + bigInstance + `","paradigm":"centralized","seed":1}`).ID
	for range 3 {
		d := c.next(id)
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		if code, b := c.post(id, d.Step, acts); code != http.StatusOK {
			t.Fatalf("actions: %d %s", code, b)
		}
	}
	c.next(id) // the fourth decision is pending
	code, b := c.do("DELETE", "/v1/episodes/"+id, nil)
	var st Status
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil || st.State != StateDone || st.Metrics == nil {
		t.Fatalf("delete: %d %s", code, b)
	}
	if st.Metrics.Status != string(factory.Interrupted) || st.Metrics.GCj >= 2000 {
		t.Errorf("metrics: status %q, %d jobs completed; want interrupted, not played to the end", st.Metrics.Status, st.Metrics.GCj)
	}
	steps := map[int]bool{}
	for _, a := range readAudits(t, filepath.Join(dir, id, harness.FileDecisions)) {
		steps[a.Step] = true
	}
	if len(steps) != 4 || st.Metrics.GDs != 4 {
		t.Errorf("%d steps audited, %d in the metrics; want 4 (3 answered, the pending one fallen back)", len(steps), st.Metrics.GDs)
	}
}

// TestCloseStopsRunningEpisodes: Close (the shutdown of des serve) ends
// the running episodes rather than waiting for them to play out, and
// leaves the artifacts of an ended episode as they were, and refuses
// later creates. Before, Close waited for every running episode to be
// played to its end with fallbacks, and a later create started an episode.
func TestCloseStopsRunningEpisodes(t *testing.T) {
	dir := t.TempDir()
	s, hs := newServer(t, Config{DataDir: dir, Keep: true, Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	ended := c.createBody(`{"instance":"A3C9-1","paradigm":"centralized","seed":2,"play":[]}`).ID
	if c.next(ended) != nil {
		t.Fatal("a decision of an episode the server plays was published")
	}
	before := readFiles(t, filepath.Join(dir, ended))
	running := c.createBody(`{"instance":"` + bigInstance + `","paradigm":"centralized","seed":1}`).ID
	c.next(running)
	s.Close()
	var m harness.Metrics
	readJSON(t, filepath.Join(dir, running, harness.FileMetrics), &m)
	if m.Status != string(factory.Interrupted) || m.GDs != 1 {
		t.Errorf("the running episode: status %q after %d steps, want interrupted after 1", m.Status, m.GDs)
	}
	// A create racing the shutdown would start an episode nobody waits for.
	if code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"centralized"}`)); code != http.StatusServiceUnavailable {
		t.Errorf("create after Close: %d %s, want 503", code, b)
	}
	after := readFiles(t, filepath.Join(dir, ended))
	if len(after) != len(before) {
		t.Errorf("the ended episode's files: %d, then %d", len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s of the ended episode changed at Close", name)
		}
	}
}

// TestArtifactBudget: an episode whose artifacts outgrow its budget is
// stopped with a reason naming the budget and the flag that raises it,
// and its directory stays within the budget plus the files written once
// at the end. Before, nothing bounded an episode's artifacts.
func TestArtifactBudget(t *testing.T) {
	const budget = 64 << 10
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true, ArtifactBudget: budget, Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	id := c.createBody(`{"instance":"A3C9-1","paradigm":"centralized","seed":2,"play":[]}`).ID
	if c.next(id) != nil {
		t.Fatal("a decision of an episode the server plays was published")
	}
	_, b := c.do("GET", "/v1/episodes/"+id, nil)
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Metrics == nil || st.Metrics.Status != string(factory.Interrupted) ||
		!strings.Contains(st.Reason, "artifact budget of 65536 bytes is spent") || !strings.Contains(st.Reason, "--artifact-budget") {
		t.Errorf("status: %s", b)
	}
	var streamed, once int64
	for name, body := range readFiles(t, filepath.Join(dir, id)) {
		switch name {
		case harness.FileTrace, harness.FileDecisions, harness.FileMessages, harness.FileTiming:
			streamed += int64(len(body))
			if body != "" && !strings.HasSuffix(body, "\n") {
				t.Errorf("%s ends within a line", name)
			}
		default:
			once += int64(len(body))
		}
	}
	if streamed > budget || once > 32<<10 {
		t.Errorf("streamed artifacts %d bytes (budget %d), the others %d", streamed, budget, once)
	}
	// The whole episode writes more: the budget did cut it.
	_, hs2 := newServer(t, Config{Builtins: policy.Builtins()})
	c2 := &client{t: t, base: hs2.URL}
	full := c2.createBody(`{"instance":"A3C9-1","paradigm":"centralized","seed":2,"play":[]}`).ID
	c2.next(full)
	_, tr := c2.do("GET", "/v1/episodes/"+full+"/artifacts/trace.jsonl", nil)
	if len(tr) <= budget {
		t.Fatalf("the whole episode's trace is %d bytes, within the budget: the test proves nothing", len(tr))
	}
}

// TestServerPlantLimits: the server's plant limits are well below the
// CLI's, and a create over them is refused with 400 naming the limit and
// the des serve flag that raises it. Before, the largest plant the CLI
// accepts (gen:A256C1024J100000) was created, and its episode wrote
// gigabytes.
func TestServerPlantLimits(t *testing.T) {
	_, hs := newServer(t, Config{})
	c := &client{t: t, base: hs.URL}
	code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"gen:A256C1024J100000","paradigm":"centralized"}`))
	if code != http.StatusBadRequest || !strings.Contains(string(b), "256 areas: over the limit of 64") ||
		!strings.Contains(string(b), "des serve --plant-limit areas=256") {
		t.Errorf("got %d %s, want 400 naming the areas limit and --plant-limit", code, b)
	}
	// A server started with raised limits accepts more (the flag's
	// value); still no request raises them.
	lim := ServerPlantLimits()
	lim.Areas = 128
	_, hs2 := newServer(t, Config{PlantLimits: &lim})
	c2 := &client{t: t, base: hs2.URL}
	code, b = c2.do("POST", "/v1/episodes", []byte(`{"instance":"gen:A100C100J10","paradigm":"centralized"}`))
	if code != http.StatusCreated {
		t.Errorf("within raised limits: %d %s", code, b)
	}
}

// readFiles reads every file of dir by name.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}
