package envserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/des/policy"
)

// createBody creates an episode from a raw create body; it fails the test
// unless the server answers 201.
func (c *client) createBody(body string) Status {
	c.t.Helper()
	code, b := c.do("POST", "/v1/episodes", []byte(body))
	if code != http.StatusCreated {
		c.t.Fatalf("create %s: %d %s", body, code, b)
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		c.t.Fatal(err)
	}
	return st
}

// playSeen plays the rule policy for the agents the client is shown,
// to the end of the episode, and returns every agent id it was shown.
func (c *client) playSeen(id string) map[string]bool {
	c.t.Helper()
	seen := map[string]bool{}
	for d := c.next(id); d != nil; d = c.next(id) {
		for a := range d.ActiveAgents {
			seen[a] = true
		}
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		if code, b := c.post(id, d.Step, acts); code != http.StatusOK {
			c.t.Fatalf("actions: %d %s", code, b)
		}
	}
	return seen
}

// A client that plays some agents sees only their decisions; the server's
// rule answers the rest. With the rule on the client's side too, the
// episode is the in-process rule episode byte for byte, its audits name
// who answered, and des validate accepts the run.
func TestPlaySomeAgents(t *testing.T) {
	dir := t.TempDir()
	_, hs := newServer(t, Config{DataDir: dir, Keep: true, Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	const seed = 3
	for _, tc := range []struct {
		paradigm string
		play     func(st Status) []string
	}{
		// the plant only: every area and cell decision stays in the server
		{"holonic_hybrid", func(Status) []string { return []string{"plant"} }},
		// one cell of a contract net: its bid rounds mix played and server-answered cells
		{"heterarchical_cnp", func(st Status) []string { return []string{st.Agents[len(st.Agents)-1]} }},
	} {
		t.Run(tc.paradigm, func(t *testing.T) {
			c := &client{t: t, base: c.base}
			all := c.createBody(fmt.Sprintf(`{"instance":%q,"paradigm":%q,"seed":%d}`, testInstance, tc.paradigm, seed))
			c.do("DELETE", "/v1/episodes/"+all.ID, nil)
			play := tc.play(all)
			body, _ := json.Marshal(map[string]any{"instance": testInstance, "paradigm": tc.paradigm, "seed": seed, "play": play})
			st := c.createBody(string(body))
			if !slices.Equal(st.Played, play) || st.Others != DefaultOthers || !slices.Equal(st.Agents, all.Agents) {
				t.Errorf("status: played %v, others %q, agents %v (want %v, %q, %v)", st.Played, st.Others, st.Agents, play, DefaultOthers, all.Agents)
			}
			seen := c.playSeen(st.ID)
			if len(seen) != 1 || !seen[play[0]] {
				t.Errorf("the client was shown %v, want only %v", seen, play)
			}
			code, tr := c.do("GET", "/v1/episodes/"+st.ID+"/artifacts/trace.jsonl", nil)
			if code != http.StatusOK || !bytes.Equal(tr, inProcessTrace(t, tc.paradigm, seed)) {
				t.Errorf("trace (%d, %d bytes) differs from the in-process rule episode", code, len(tr))
			}
			_, b := c.do("GET", "/v1/episodes/"+st.ID, nil)
			var end Status
			if json.Unmarshal(b, &end) != nil || end.Metrics == nil || end.Metrics.Controller != "http+rule" || end.Metrics.GFb != 0 {
				t.Fatalf("end status: %s", b)
			}
			if end.Answered == 0 || end.Answered >= end.Metrics.GDs {
				t.Errorf("%d decisions answered by the client of %d", end.Answered, end.Metrics.GDs)
			}

			// Who answered: the client for its agent (external), the server
			// for every other agent (builtin, with a builtin note where the
			// step was mixed), whatever else the step held.
			audits := readAudits(t, filepath.Join(dir, st.ID, harness.FileDecisions))
			byStep := map[int][]coord.Audit{}
			for _, a := range audits {
				byStep[a.Step] = append(byStep[a.Step], a)
			}
			var mixed, builtin, external int
			for step, as := range byStep {
				played := slices.ContainsFunc(as, func(a coord.Audit) bool { return a.AgentID == play[0] })
				for _, a := range as {
					switch {
					case !played && a.Source != coord.SourceBuiltin:
						t.Errorf("step %d, %s: source %s, want builtin", step, a.AgentID, a.Source)
					case a.AgentID == play[0] && a.Source != coord.SourceExternal:
						t.Errorf("step %d, %s: source %s, want external", step, a.AgentID, a.Source)
					case played && a.AgentID != play[0] && a.Source != coord.SourceBuiltin:
						t.Errorf("step %d, %s: source %s, want builtin (the server answered it)", step, a.AgentID, a.Source)
					case played && a.AgentID != play[0] && (a.AgentNote == nil || a.AgentNote.Model != "builtin:rule"):
						t.Errorf("step %d, %s: answered by the server without a builtin note: %+v", step, a.AgentID, a.AgentNote)
					}
				}
				switch {
				case played && len(as) > 1:
					mixed++
				case played:
					external++
				default:
					builtin++
				}
			}
			if builtin == 0 || external+mixed == 0 || (tc.paradigm == "heterarchical_cnp") != (mixed > 0) {
				t.Errorf("steps: %d builtin, %d played, %d mixed", builtin, external, mixed)
			}
			if want := end.Metrics.Secondary.DecisionsBySource; want["builtin"] == 0 || want["external"] == 0 {
				t.Errorf("decisions_by_source %v", want)
			}
			rep, err := check.Dir(filepath.Join(dir, st.ID))
			if err != nil || !rep.OK() {
				t.Errorf("des validate: %v %v", err, rep.Problems)
			}
		})
	}
}

// A client that plays no agent (an empty play) gets the server's whole
// episode: the in-process one, with nothing published.
func TestPlayNobody(t *testing.T) {
	_, hs := newServer(t, Config{Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	st := c.createBody(`{"instance":"A3C9-1","paradigm":"hierarchical","seed":3,"play":[],"others":"rule"}`)
	if len(st.Played) != 0 || st.Others != "rule" {
		t.Errorf("status: played %v, others %q", st.Played, st.Others)
	}
	if d := c.next(st.ID); d != nil {
		t.Fatalf("a decision was published: step %d", d.Step)
	}
	code, tr := c.do("GET", "/v1/episodes/"+st.ID+"/artifacts/trace.jsonl", nil)
	if code != http.StatusOK || !bytes.Equal(tr, inProcessTrace(t, "hierarchical", 3)) {
		t.Errorf("trace (%d, %d bytes) differs from the in-process rule episode", code, len(tr))
	}
	_, b := c.do("GET", "/v1/episodes/"+st.ID, nil)
	var end Status
	if json.Unmarshal(b, &end) != nil || end.Metrics == nil || end.Decisions != 0 ||
		end.Metrics.Secondary.DecisionsBySource["builtin"] != end.Metrics.GDs {
		t.Errorf("end status: %s", b)
	}
}

func TestPlayRefused(t *testing.T) {
	_, hs := newServer(t, Config{Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	for body, want := range map[string]string{
		`"play":["cell:C1"]`: `no agent "cell:C1"`,
		`"play":["plant","plant"],"paradigm":"hierarchical"`: "listed twice",
		`"play":["plant"],"others":"llm"`:                    `"others"`,
		`"others":"rule"`:                                    `give "play" too`,
		`"play":["plant","a","b","c","d"]`:                   "the episode has 1",
		`"play":["` + strings.Repeat("x", 500) + `"]`:        "no agent",
	} {
		code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"centralized",`+body+`}`))
		if msg := errMsg(t, b); code != http.StatusBadRequest || !strings.Contains(msg, want) || len(msg) > 400 {
			t.Errorf("%s: %d %s, want 400 with %q", body, code, b, want)
		}
	}
	// A batch item with a bad play fails alone.
	code, b := c.do("POST", "/v1/batch/create", []byte(`{"episodes":[{"instance":"A3C9-1","paradigm":"centralized","play":["nobody"]},
		{"instance":"A3C9-1","paradigm":"centralized","play":["plant"]}]}`))
	var res BatchResponse
	if code != 200 || json.Unmarshal(b, &res) != nil || len(res.Results) != 2 || res.Results[0].Code != 400 || res.Results[1].Code != 201 {
		t.Errorf("batch create: %d %s", code, b)
	}
	// A server without built-in controllers cannot answer for anyone.
	_, bare := newServer(t, Config{})
	c = &client{t: t, base: bare.URL}
	if code, b := c.do("POST", "/v1/episodes", []byte(`{"instance":"A3C9-1","paradigm":"centralized","play":["plant"]}`)); code != 400 ||
		!strings.Contains(errMsg(t, b), "no built-in controllers") {
		t.Errorf("no builtins: %d %s", code, b)
	}
}

// A paradigm file's adaptive paradigm lists the agents of every mode its
// rules may choose.
func TestAdaptiveParadigmAgents(t *testing.T) {
	var set coord.Paradigms
	if _, err := set.AddFile(filepath.Join("..", "..", "examples", "paradigms", "adaptive.yaml")); err != nil {
		t.Fatal(err)
	}
	calm := coord.Centralized()
	calm.ID = "calm"
	calm.Adaptive = &coord.Adaptive{Modes: []coord.AuthorityMode{heterarchical("bids")},
		Rules: []coord.ModeRule{{Mode: "bids", When: coord.Condition{Feature: "wip", Gt: ptr(3.0)}}}}
	if err := set.Add(calm); err != nil {
		t.Fatal(err)
	}
	_, hs := newServer(t, Config{Paradigms: &set, Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	for paradigm, want := range map[string][]string{
		"adaptive": {"plant", "area:A1", "cell:C03"}, // holonic_hybrid and centralized
		"calm":     {"plant", "cell:C01"},            // centralized and a contract net
	} {
		st := c.createBody(fmt.Sprintf(`{"instance":"A3C9-1","paradigm":%q,"seed":3}`, paradigm))
		for _, a := range want {
			if !slices.Contains(st.Agents, a) {
				t.Errorf("%s: agents %v lack %s", paradigm, st.Agents, a)
			}
		}
		if paradigm == "calm" && slices.ContainsFunc(st.Agents, func(a string) bool { return strings.HasPrefix(a, "area:") }) {
			t.Errorf("%s: agents %v include areas", paradigm, st.Agents)
		}
		seen := c.playSeen(st.ID)
		for a := range seen {
			if !slices.Contains(st.Agents, a) {
				t.Errorf("%s: active agent %s is not among the episode's agents %v", paradigm, a, st.Agents)
			}
		}
	}
}

func heterarchical(id string) coord.AuthorityMode {
	m := coord.HeterarchicalCNP()
	m.ID = id
	return m
}

func ptr[T any](v T) *T { return &v }

// The mode_selector of a paradigm whose modes an agent chooses is an agent
// like any other: listed (with the offer) and playable alone. The rule
// answers it on both sides, so the episode is the in-process one.
func TestPlayModeSelector(t *testing.T) {
	dir := t.TempDir()
	var set coord.Paradigms
	mode, err := set.AddFile(filepath.Join("..", "..", "examples", "paradigms", "adaptive_agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newServer(t, Config{DataDir: dir, Keep: true, Paradigms: &set, Builtins: policy.Builtins()})
	c := &client{t: t, base: hs.URL}
	st := c.createBody(`{"instance":"A3C9-1","paradigm":"adaptive_agent","seed":3,"play":["mode_selector"]}`)
	offer := []string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"}
	if !slices.Equal(st.Offer, offer) || st.Agents[len(st.Agents)-1] != coord.AgentModeSelector ||
		!slices.Contains(st.Agents, "area:A1") || !slices.Contains(st.Agents, "cell:C09") {
		t.Errorf("agents %v, offer %v", st.Agents, st.Offer)
	}
	n := 0
	for d := c.next(st.ID); d != nil; d = c.next(st.ID) {
		v := d.ActiveAgents[coord.AgentModeSelector]
		if len(d.ActiveAgents) != 1 || v == nil || v.Kind != coord.KindSelectMode || len(v.Options) != len(offer) ||
			v.Context.ModeState == nil || v.Options[2].Mode == nil || v.Options[2].Mode.ID != offer[2] {
			t.Fatalf("step %d: not a select_mode decision of the mode_selector alone: %+v", d.Step, d.ActiveAgents)
		}
		acts, _ := policy.Rule{}.Act(context.Background(), d)
		if code, b := c.post(st.ID, d.Step, acts); code != http.StatusOK {
			t.Fatalf("actions: %d %s", code, b)
		}
		n++
	}
	var buf bytes.Buffer
	in, err := ServerPlantLimits().Resolve(testInstance)
	if err != nil {
		t.Fatal(err)
	}
	res := harness.Run(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: 3, Mode: mode, Controller: policy.Rule{}, Trace: &buf})
	_, tr := c.do("GET", "/v1/episodes/"+st.ID+"/artifacts/trace.jsonl", nil)
	if res.Err != nil || !bytes.Equal(tr, buf.Bytes()) {
		t.Errorf("trace (%d bytes) differs from the in-process rule episode (%d bytes, %v)", len(tr), buf.Len(), res.Err)
	}
	if n == 0 || n != bytes.Count(tr, []byte(`"mode_selected"`)) {
		t.Errorf("%d selector decisions, %d mode_selected lines", n, bytes.Count(tr, []byte(`"mode_selected"`)))
	}
	if rep, err := check.Dir(filepath.Join(dir, st.ID)); err != nil || !rep.OK() {
		t.Errorf("des validate: %v %v", err, rep.Problems)
	}
}
