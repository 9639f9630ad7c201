package llmagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

func seeded(t testing.TB, id string, n int) *task.Instance {
	t.Helper()
	in, err := task.Seeded(id, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func client(t testing.TB, srv *stubmodel.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: srv.URL, Model: "scripted", Concurrency: 64,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type runOut struct {
	res   *round.Result
	team  *llmagent.Team
	dir   string
	turns []llmagent.TurnRecord
}

// play runs the LLM team of in over p against c and writes its logs.
func play(t testing.TB, in *task.Instance, p proto.Protocol, cfg llmagent.Config, maxRounds int) runOut {
	t.Helper()
	return playCapped(t, in, p, cfg, maxRounds, 0)
}

// playCapped is play with a per-turn cap of maxCalls (0: none).
func playCapped(t testing.TB, in *task.Instance, p proto.Protocol, cfg llmagent.Config, maxRounds, maxCalls int) runOut {
	t.Helper()
	team, err := llmagent.NewTeam(in, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := round.Run(context.Background(), round.Config{Instance: in, Protocol: p, MaxRounds: maxRounds, MaxCallsPerTurn: maxCalls,
		DB: filepath.Join(dir, "run.db"), OnEnd: func(st *proto.Store) error { return team.WriteLogs(dir, st) }}, team.Agents())
	if err != nil && (res == nil || res.Status != round.StatusAborted) { // an aborted run's state is checked by the caller
		t.Fatal(err)
	}
	recs, _ := team.Records()
	return runOut{res, team, dir, recs}
}

func TestGatherReachesSuccess(t *testing.T) {
	for _, id := range []string{"I-01", "II-12", "III-21"} {
		for _, n := range []int{1, 2, 5} {
			for _, p := range []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS} {
				for _, native := range []bool{false, true} {
					in := seeded(t, id, n)
					srv := stubmodel.NewServer(gatherModel(in, nil))
					out := play(t, in, p, llmagent.Config{Model: client(t, srv, nil), Native: native}, 20)
					srv.Close()
					name := id + "/" + string(p) + "/n" + string(rune('0'+n))
					if native {
						name += "/native"
					}
					if !out.res.Success || out.res.S != 1 {
						t.Fatalf("%s: S = %v, agents %+v", name, out.res.S, out.res.Agents)
					}
					checkTokens(t, name, srv, out)
					if u := out.res.Usage; u.WastedCalls != 0 || u.ModelErrors != 0 {
						t.Errorf("%s: usage %+v", name, u)
					}
					if native {
						req := srv.Requests()[0]
						want := len(proto.Tools(p))
						if n == 1 { // alone: wait and submit_result only
							want = 2
						}
						if len(req.Tools) != want {
							t.Errorf("%s: %d tools offered, want %d", name, len(req.Tools), want)
						}
					}
				}
			}
		}
	}
}

// checkTokens: the run's token totals and its turn log equal what the
// server reported, call by call.
func checkTokens(t *testing.T, name string, srv *stubmodel.Server, out runOut) {
	t.Helper()
	n, total := srv.Completed()
	u := out.res.Usage
	if u == nil || u.InputTokens != total.PromptTokens || u.OutputTokens != total.CompletionTokens {
		t.Errorf("%s: usage %+v, server total %+v", name, u, total)
	}
	ok := 0
	for _, r := range out.turns {
		if r.Outcome != llmagent.OutcomeModelError {
			ok++
		}
	}
	if ok != n {
		t.Errorf("%s: %d answered turns logged, server completed %d", name, ok, n)
	}
	if out.res.C == nil || out.res.CCode == nil {
		t.Fatalf("%s: C missing", name)
	}
	if want := float64(u.OutputTokens) / float64(out.res.MaxRounds); *out.res.C != want {
		t.Errorf("%s: C = %v, want %v", name, *out.res.C, want)
	}
	if want := float64(u.InputTokens+u.OutputTokens) / float64(out.res.Rounds); *out.res.CCode != want {
		t.Errorf("%s: C_code = %v, want %v", name, *out.res.CCode, want)
	}
}

func labels(res *round.Result) map[int][]string {
	out := map[int][]string{}
	for _, a := range res.Agents {
		if len(a.Labels) > 0 {
			out[a.ID] = a.Labels
		}
	}
	return out
}

func TestEarlySubmitterIsPremature(t *testing.T) {
	in := seeded(t, "I-01", 4)
	h := func(req stubmodel.ChatRequest) stubmodel.Reply {
		v, ok := silogather.ReadView(req)
		if !ok {
			return stubmodel.Text("?")
		}
		return silogather.Render(v, []silogather.Call{{Name: "submit_result", Args: []silogather.Arg{{Name: "answer", Value: "-1"}}}})
	}
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	out := play(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil)}, 10)
	if out.res.S != 0 || out.res.Rounds != 1 {
		t.Fatalf("S %v rounds %d", out.res.S, out.res.Rounds)
	}
	for i := range in.N {
		if got := labels(out.res)[i]; !slices.Equal(got, []string{round.LabelPremature}) {
			t.Errorf("agent %d labels %v, want premature only", i, got)
		}
	}
}

func TestDisagreeingAgentsAreConsensusFailures(t *testing.T) {
	in := seeded(t, "I-01", 4)
	g := gatherModel(in, func(id int, ans json.RawMessage) json.RawMessage {
		if id == 0 {
			return ans
		}
		var v int
		json.Unmarshal(ans, &v)
		b, _ := json.Marshal(v + 1000*id)
		return b
	})
	srv := stubmodel.NewServer(g)
	defer srv.Close()
	out := play(t, in, proto.Broadcast, llmagent.Config{Model: client(t, srv, nil)}, 20)
	got := labels(out.res)
	if len(got[0]) != 0 {
		t.Errorf("agent 0 labels %v", got[0])
	}
	for i := 1; i < in.N; i++ {
		if !slices.Contains(got[i], round.LabelConsensus) {
			t.Errorf("agent %d labels %v, want consensus_failure", i, got[i])
		}
	}
	if out.res.Failures[round.LabelConsensus] != in.N-1 {
		t.Errorf("failures %v", out.res.Failures)
	}
}

// TestNastyReplies: malformed XML, unknown tools, missing parameters,
// several calls, calls after wait, prose and empty replies never crash a
// run; each is answered as documented and logged.
func TestNastyReplies(t *testing.T) {
	replies := []string{
		"",
		"I will think about it.",
		"<tool_call><tool>send_message</tool><parameters><content>hi</content></parameters></tool_call>",
		"<tool_call><tool>teleport</tool></tool_call><tool_call><tool>receive_messages</tool></tool_call>",
		"<tool_call><tool>send_message</tool><parameters><target_id>zero</target_id><content>x</content></parameters></tool_call>",
		"<tool_call><tool>wait</tool></tool_call><tool_call><tool>submit_result</tool><parameters><answer>1</answer></parameters></tool_call>",
		"<tool_call><tool>send_message<parameters><target_id>1</target_id></parameters></tool_call>",
		"<tool_call><tool>send_message</tool><parameters><target_id>1</target_id><content>unclosed</parameters></tool_call>",
		strings.Repeat("<tool_call><tool>receive_messages</tool></tool_call>", 30),
		"<tool_call><tool>submit_result</tool></tool_call>",
	}
	h := func(req stubmodel.ChatRequest) stubmodel.Reply {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		return stubmodel.Text(replies[min(turn, len(replies)-1)])
	}
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	in := seeded(t, "I-01", 2)
	out := playCapped(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil)}, len(replies), 20) // the cap is opt-in
	if out.res.Rounds != len(replies) || !out.res.AllSubmitted {
		t.Fatalf("rounds %d, all submitted %v", out.res.Rounds, out.res.AllSubmitted)
	}
	var outcomes []string
	for _, r := range out.turns {
		if r.Agent == 0 {
			outcomes = append(outcomes, r.Outcome)
		}
	}
	want := []string{"no_tool_call", "no_tool_call", "ok", "ok", "ok", "ok", "no_tool_call", "ok", "capped", "ok"}
	if !slices.Equal(outcomes, want) {
		t.Errorf("outcomes %v\nwant     %v", outcomes, want)
	}
	if u := out.res.Agents[0].Usage; u.WastedCalls != 3 {
		t.Errorf("wasted calls %d, want 3", u.WastedCalls)
	}
	r5 := out.turns[2*5] // agent 0, round 6: wait, then a dropped submit
	if r5.Dropped != 1 || len(r5.Calls) != 1 {
		t.Errorf("round 6: dropped %d, calls %+v", r5.Dropped, r5.Calls)
	}
	if out.res.CappedTurns != 2 {
		t.Errorf("capped turns %d, want 2", out.res.CappedTurns)
	}
	// the feedback for a reply without calls restates the format
	if in := out.turns[2].Input; len(in) != 1 || !strings.Contains(in[0].Content, "<tool_call>") {
		t.Errorf("feedback %+v", in)
	}
}

// TestServerFaults: 429s, 500s, a hang, malformed bodies and a reply with
// no tool call are retried or recorded, the run finishes and solves the
// task, and the tokens equal what the server reported.
func TestServerFaults(t *testing.T) {
	in := seeded(t, "I-01", 3)
	g := gatherModel(in, nil)
	h := func(req stubmodel.ChatRequest) stubmodel.Reply {
		switch {
		case req.Seq == 2:
			return stubmodel.Hang()
		case req.Seq%7 == 3:
			return stubmodel.Status(500, "boom")
		case req.Seq%11 == 5:
			return stubmodel.RateLimited("0")
		case req.Seq%13 == 6:
			return stubmodel.BadJSON()
		case req.Seq == 9:
			return stubmodel.Text("Let me think step by step without calling anything.")
		}
		return g(req)
	}
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	c := client(t, srv, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
	out := play(t, in, proto.P2P, llmagent.Config{Model: c}, 30)
	if !out.res.Success {
		t.Fatalf("S = %v (%+v)", out.res.S, out.res.Agents)
	}
	checkTokens(t, "faults", srv, out)
	if c.Stats().Snapshot().Retries == 0 {
		t.Error("no retries recorded")
	}
	if out.res.Usage.WastedCalls != 1 {
		t.Errorf("wasted calls %d, want 1", out.res.Usage.WastedCalls)
	}
}

// TestModelErrorsSpendTurns: a call that fails after all retries is
// recorded and spends the turn; MaxModelFailures in a row abort the run
// (a dead model is not a coordination outcome, as in des), which still
// writes every artifact, with status aborted and the model's error.
func TestModelErrorsSpendTurns(t *testing.T) {
	out, _ := agentOneFails(t, stubmodel.Status(503, "agent 1's model is down"))
	a1 := out.res.Agents[1]
	if a1.Submitted || a1.Usage.ModelErrors != 2 {
		t.Fatalf("agent 1: %+v usage %+v", a1, a1.Usage)
	}
	if r := out.res; r.Status != round.StatusAborted || r.Rounds != 2 || !strings.Contains(r.Error, "round 2, agent 1: run aborted: model failed 2 times in a row") || !strings.Contains(r.Error, "503") {
		t.Errorf("status %q, rounds %d, error %q", r.Status, r.Rounds, r.Error)
	}
	for _, f := range []string{llmagent.FileTurns, llmagent.FileTiming} {
		if _, err := os.Stat(filepath.Join(out.dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// agentOneFails plays I-01 with two agents over p2p, agent 1's model
// answering every call with fail, the other's solving the task; an agent
// aborts the run after 2 failed calls in a row.
func agentOneFails(t *testing.T, fail stubmodel.Reply) (runOut, *stubmodel.Server) {
	t.Helper()
	in := seeded(t, "I-01", 2)
	g := gatherModel(in, nil)
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		if v, ok := silogather.ReadView(req); ok && v.ID == 1 {
			return fail
		}
		return g(req)
	})
	t.Cleanup(srv.Close)
	c := client(t, srv, func(c *llm.Config) { c.MaxAttempts = 2 })
	return play(t, in, proto.P2P, llmagent.Config{Model: c, MaxModelFailures: 2}, 10), srv
}

// TestReplayIsOffline: a run recorded into a cache replays with the server
// gone, giving the same result and turn log byte for byte; a replay that
// misses the cache fails the run instead of scoring it.
func TestReplayIsOffline(t *testing.T) {
	in := seeded(t, "II-12", 3)
	srv := stubmodel.NewServer(gatherModel(in, nil))
	cachePath := filepath.Join(t.TempDir(), "cache.db")
	cache, err := llm.OpenCache(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	live := play(t, in, proto.SFS, llmagent.Config{Model: client(t, srv, func(c *llm.Config) { c.Cache = cache })}, 20)
	srv.Close()
	replayed := play(t, in, proto.SFS, llmagent.Config{Model: client(t, srv, func(c *llm.Config) {
		c.Cache, c.CacheMode = cache, llm.CacheReplay
	})}, 20)
	for _, f := range []string{llmagent.FileTurns} {
		a, _ := os.ReadFile(filepath.Join(live.dir, f))
		b, _ := os.ReadFile(filepath.Join(replayed.dir, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs after replay (%d vs %d bytes)", f, len(a), len(b))
		}
	}
	ja, _ := json.Marshal(live.res)
	jb, _ := json.Marshal(replayed.res)
	if !bytes.Equal(ja, jb) {
		t.Errorf("result differs after replay:\n%s\n%s", ja, jb)
	}
	// a different instance misses the cache: the run fails
	other := seeded(t, "II-12", 2)
	team, _ := llmagent.NewTeam(other, proto.SFS, llmagent.Config{Model: client(t, srv, func(c *llm.Config) {
		c.Cache, c.CacheMode = cache, llm.CacheReplay
	})})
	_, err = round.Run(context.Background(), round.Config{Instance: other, Protocol: proto.SFS, MaxRounds: 5}, team.Agents())
	if err == nil || !strings.Contains(err.Error(), "cache") {
		t.Fatalf("replay miss: err = %v", err)
	}
}

// TestAgentsCallConcurrently: the agents of a round call the model at the
// same time: the server holds every request until all N have arrived.
func TestAgentsCallConcurrently(t *testing.T) {
	const n = 8
	in := seeded(t, "I-01", n)
	g := gatherModel(in, nil)
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	h := func(req stubmodel.ChatRequest) stubmodel.Reply {
		if req.Seq < n {
			arrived <- struct{}{}
			if len(arrived) == n {
				close(release)
			}
			select {
			case <-release:
			case <-time.After(20 * time.Second):
				return stubmodel.Text("the round was not concurrent")
			}
		}
		return g(req)
	}
	srv := stubmodel.NewServer(h)
	defer srv.Close()
	out := play(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil)}, 20)
	if !out.res.Success || out.res.Usage.WastedCalls != 0 {
		t.Fatalf("S %v, usage %+v", out.res.S, out.res.Usage)
	}
	if srv.MaxConcurrent() < n {
		t.Errorf("max concurrent %d, want %d", srv.MaxConcurrent(), n)
	}
}

func TestDeterministic(t *testing.T) {
	in := seeded(t, "III-21", 3)
	var prev []byte
	for range 3 {
		srv := stubmodel.NewServer(gatherModel(in, nil))
		out := play(t, in, proto.Broadcast, llmagent.Config{Model: client(t, srv, nil)}, 20)
		srv.Close()
		b, _ := os.ReadFile(filepath.Join(out.dir, llmagent.FileTurns))
		r, _ := json.Marshal(out.res)
		b = append(b, r...)
		if prev != nil && !bytes.Equal(prev, b) {
			t.Fatal("turn log or result differ between identical runs")
		}
		prev = b
	}
}

// TestToolResultsKeepHTMLCharacters: a message holding '<', '>' and '&'
// reaches the receiving model verbatim inside the compact JSON result, as
// in the published results (no \u003c, \u003e, \u0026 escapes).
func TestToolResultsKeepHTMLCharacters(t *testing.T) {
	const msg = "x < y & z > w"
	for _, native := range []bool{false, true} {
		h := func(req stubmodel.ChatRequest) stubmodel.Reply {
			v, ok := silogather.ReadView(req)
			if !ok {
				return stubmodel.Text("no agent here")
			}
			turn := 0
			for _, m := range req.Messages {
				if m.Role == "assistant" {
					turn++
				}
			}
			type call struct{ tool, args string }
			var calls []call
			switch {
			case v.ID == 0 && turn == 0:
				calls = []call{{"send_message", `{"target_id":1,"content":"` + msg + `"}`}, {"wait", `{}`}}
			case v.ID == 1 && turn == 1:
				calls = []call{{"receive_messages", `{}`}, {"wait", `{}`}}
			case v.ID == 1 && turn == 0:
				calls = []call{{"wait", `{}`}}
			default:
				calls = []call{{"submit_result", `{"answer":0}`}}
			}
			if native {
				var tc []stubmodel.ToolCall
				for k, c := range calls {
					tc = append(tc, stubmodel.ToolCall{ID: "c" + string(rune('0'+k)), Name: c.tool, Arguments: c.args})
				}
				return stubmodel.Calls(tc...)
			}
			var b strings.Builder
			for _, c := range calls {
				b.WriteString("<tool_call><tool>" + c.tool + "</tool><parameters>")
				var args map[string]any
				_ = json.Unmarshal([]byte(c.args), &args)
				for _, k := range []string{"target_id", "content", "answer"} {
					if a, ok := args[k]; ok {
						b.WriteString("<" + k + ">" + fmt.Sprint(a) + "</" + k + ">")
					}
				}
				b.WriteString("</parameters></tool_call>")
			}
			return stubmodel.Text(b.String())
		}
		srv := stubmodel.NewServer(h)
		in := seeded(t, "I-01", 2)
		out := play(t, in, proto.P2P, llmagent.Config{Model: client(t, srv, nil), Native: native}, 5)
		srv.Close()
		found := false
		for _, rec := range srv.Log() {
			for _, m := range rec.Request.Messages {
				if strings.Contains(m.Content, `\u00`) {
					t.Errorf("native %v: escaped text reaches the model: %q", native, m.Content)
				}
				if strings.Contains(m.Content, `"content":"`+msg+`"`) && (m.Role == "user" || m.Role == "tool") {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("native %v: no request shows the message %q verbatim in a tool result", native, msg)
		}
		if !out.res.AllSubmitted || out.res.Messages != 1 {
			t.Errorf("native %v: all submitted %v, messages %d", native, out.res.AllSubmitted, out.res.Messages)
		}
	}
}

// A reply with an empty "choices" list fails the call, but the tokens the
// server reported with it are counted: in the turn log and the agent's and
// the run's totals.
func TestEmptyChoicesTokensCount(t *testing.T) {
	out, srv := agentOneFails(t, stubmodel.NoChoices(7, 3))
	a1 := out.res.Agents[1]
	if a1.Usage == nil || a1.Usage.ModelErrors != 2 || a1.Usage.InputTokens != 14 || a1.Usage.OutputTokens != 6 {
		t.Fatalf("agent 1 usage %+v", a1.Usage)
	}
	_, total := srv.Completed()
	if u := out.res.Usage; u.InputTokens != total.PromptTokens+14 || u.OutputTokens != total.CompletionTokens+6 {
		t.Errorf("run usage %+v, server's usable replies %+v", u, total)
	}
	n := 0
	for _, r := range out.turns {
		if r.Agent == 1 && r.Outcome == llmagent.OutcomeModelError && r.Usage == (llm.Usage{PromptTokens: 7, CompletionTokens: 3}) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d failed turns of agent 1 logged with their tokens, want 2", n)
	}
}

// TestJournalKeepsTurnsOfAnAbortedRun: with a journal, the turns of a run
// that aborts (a model error with AbortOnModelError, as suites run) are in
// the turn log, paired line for line with their timings; a run that ends
// writes the same log, in (round, agent) order, as one without a journal.
func TestJournalKeepsTurnsOfAnAbortedRun(t *testing.T) {
	in := seeded(t, "III-21", 3)
	runOnce := func(journal bool, failAfter int64) (dir string, err error) {
		var calls atomic.Int64
		inner := gatherModel(in, nil)
		srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
			if failAfter > 0 && calls.Add(1) > failAfter {
				return stubmodel.Status(http.StatusUnauthorized, "invalid key")
			}
			return inner(req)
		})
		defer srv.Close()
		team, err := llmagent.NewTeam(in, proto.Broadcast, llmagent.Config{Model: client(t, srv, nil), AbortOnModelError: true})
		if err != nil {
			t.Fatal(err)
		}
		dir = t.TempDir()
		if journal {
			if err := team.Journal(dir); err != nil {
				t.Fatal(err)
			}
			defer team.CloseJournal()
		}
		_, err = round.Run(context.Background(), round.Config{Instance: in, Protocol: proto.Broadcast, MaxRounds: 20,
			DB: filepath.Join(dir, "run.db"), OnEnd: func(st *proto.Store) error { return team.WriteLogs(dir, st) }}, team.Agents())
		return dir, err
	}
	read := func(dir string) ([]byte, []byte) {
		a, _ := os.ReadFile(filepath.Join(dir, llmagent.FileTurns))
		b, _ := os.ReadFile(filepath.Join(dir, llmagent.FileTiming))
		return a, b
	}
	plain, err := runOnce(false, 0)
	if err != nil {
		t.Fatal(err)
	}
	journaled, err := runOnce(true, 0)
	if err != nil {
		t.Fatal(err)
	}
	t1, m1 := read(plain)
	t2, m2 := read(journaled)
	// timing.jsonl holds wall-clock latencies: its lines are compared in number.
	if len(t1) == 0 || !bytes.Equal(t1, t2) || bytes.Count(m1, []byte("\n")) != bytes.Count(m2, []byte("\n")) {
		t.Error("a journaled run that ends writes another turn log than a run without a journal")
	}

	aborted, err := runOnce(true, 5)
	if err == nil {
		t.Fatal("the run did not abort")
	}
	turns, timing := read(aborted)
	var recs []llmagent.TurnRecord
	for _, line := range bytes.Split(bytes.TrimSuffix(turns, []byte("\n")), []byte("\n")) {
		var r llmagent.TurnRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("turn log of the aborted run: %v", err)
		}
		recs = append(recs, r)
	}
	billed := 0
	for _, r := range recs {
		if r.Usage.PromptTokens > 0 {
			billed++
		}
	}
	if billed != 5 || bytes.Count(timing, []byte("\n")) != len(recs) {
		t.Errorf("aborted run: %d turns (%d billed, want 5), %d timing lines", len(recs), billed, bytes.Count(timing, []byte("\n")))
	}
}
