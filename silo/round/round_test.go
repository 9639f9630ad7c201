package round

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

var protocols = []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS}

func seeded(t testing.TB, id string, n int, seed uint64) *task.Instance {
	t.Helper()
	in, err := task.Seeded(id, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func mustRun(t testing.TB, cfg Config, agents []Agent) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, agents)
	if err != nil {
		t.Fatalf("%s N=%d %s: %v", cfg.Instance.Task.ID, cfg.Instance.N, cfg.Protocol, err)
	}
	return res
}

func checkPerfect(t *testing.T, label string, res *Result) {
	t.Helper()
	if !res.Success || res.S != 1 || res.P != 1 || res.PFine != 1 || !res.AllSubmitted {
		t.Errorf("%s: S=%v P=%v Pfine=%v success=%v all=%v errors=%v", label, res.S, res.P, res.PFine, res.Success, res.AllSubmitted, res.AgentErrors)
	}
	if res.CallErrors != 0 || res.CappedTurns != 0 || len(res.AgentErrors) != 0 {
		t.Errorf("%s: call errors %d, capped %d, agent errors %v", label, res.CallErrors, res.CappedTurns, res.AgentErrors)
	}
}

// TestReferenceSeeded: the reference team solves all 30 tasks under all
// three protocols for N in {1, 2, 5, 10}.
func TestReferenceSeeded(t *testing.T) {
	ns := []int{1, 2, 5, 10}
	if testing.Short() {
		ns = []int{1, 5}
	}
	type key struct {
		p proto.Protocol
		n int
	}
	maxRounds := map[key]int{}
	calls := map[key]int{}
	runs := 0
	for _, tk := range task.All() {
		for _, n := range ns {
			in := seeded(t, tk.ID, n, 7)
			for _, p := range protocols {
				res := mustRun(t, Config{Instance: in, Protocol: p}, NewReferenceTeam(n))
				checkPerfect(t, fmt.Sprintf("%s N=%d %s", tk.ID, n, p), res)
				k := key{p, n}
				maxRounds[k] = max(maxRounds[k], res.Rounds)
				calls[k] += res.ToolCalls
				runs++
			}
		}
	}
	for _, p := range protocols {
		for _, n := range ns {
			k := key{p, n}
			t.Logf("%-9s N=%-3d max rounds %d, mean tool calls %.1f", p, n, maxRounds[k], float64(calls[k])/float64(len(task.All())))
		}
	}
	t.Logf("%d runs", runs)
}

// TestReferenceOfficial: a handful of tasks on the published instances.
func TestReferenceOfficial(t *testing.T) {
	ids := []string{"I-01", "I-05", "II-11", "II-18", "III-21", "III-25", "III-30"}
	ns := []int{2, 20}
	if testing.Short() {
		ids, ns = []string{"I-01", "III-25"}, []int{2}
	}
	for _, id := range ids {
		for _, n := range ns {
			in, err := task.Official(id, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range protocols {
				res := mustRun(t, Config{Instance: in, Protocol: p}, NewReferenceTeam(n))
				checkPerfect(t, fmt.Sprintf("official %s N=%d %s", id, n, p), res)
				t.Logf("official %-6s N=%-3d %-9s rounds %d calls %d D %.3f", id, n, p, res.Rounds, res.ToolCalls, res.D)
			}
		}
	}
}

// TestReferenceSmallCap: with the smallest workable cap the reference team
// spreads its work over more rounds and still succeeds.
func TestReferenceSmallCap(t *testing.T) {
	in := seeded(t, "II-11", 12, 3)
	for _, p := range protocols {
		res := mustRun(t, Config{Instance: in, Protocol: p, MaxCallsPerTurn: 2}, NewReferenceTeam(12))
		checkPerfect(t, string(p), res)
		t.Logf("cap 2 %-9s N=12 rounds %d", p, res.Rounds)
	}
	// A tight content limit splits the broadcast answer vector.
	res := mustRun(t, Config{Instance: in, Protocol: proto.Broadcast, Options: proto.Options{MaxContentBytes: 200}}, NewReferenceTeam(12))
	checkPerfect(t, "broadcast small content", res)
	if res.Messages <= 12 {
		t.Errorf("expected the answer vector split over several broadcasts, got %d messages", res.Messages)
	}
}

func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	for _, p := range protocols {
		in := seeded(t, "III-25", 6, 11)
		var js [2][]byte
		var logs [2][]proto.LogEntry
		for k := range 2 {
			db := filepath.Join(dir, fmt.Sprintf("%s-%d.db", p, k))
			// Mix reference agents with misbehaving ones.
			agents := NewReferenceTeam(6)
			agents[5] = &looper{}
			agents[4] = panicker{round: 2}
			cfg := Config{Instance: in, Protocol: p, DB: db, MaxRounds: 8, MaxCallsPerTurn: 7} // the looper needs a cap
			res := mustRun(t, cfg, agents)
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			js[k] = b
			logs[k] = readLog(t, db)
		}
		if string(js[0]) != string(js[1]) {
			t.Errorf("%s: results differ:\n%s\n%s", p, js[0], js[1])
		}
		if !reflect.DeepEqual(logs[0], logs[1]) || len(logs[0]) == 0 {
			t.Errorf("%s: logs differ (%d vs %d entries)", p, len(logs[0]), len(logs[1]))
		}
	}
}

// readLog reads a finished run's tool-call log from its database.
func readLog(t *testing.T, path string) []proto.LogEntry {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT round, agent, seq, tool, args, result, coalesce(error, '') FROM calls ORDER BY round, agent, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []proto.LogEntry
	for rows.Next() {
		var e proto.LogEntry
		var args, res string
		if err := rows.Scan(&e.Round, &e.Agent, &e.Seq, &e.Tool, &args, &res, &e.Error); err != nil {
			t.Fatal(err)
		}
		e.Args, e.Result = json.RawMessage(args), json.RawMessage(res)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// --- misbehaving agents ---

// publishShard does the reference team's round-1 publication, so that the
// rest of the team can finish, and nothing else.
func publishShard(t *Turn) error {
	if t.Round != 1 {
		return nil
	}
	var err error
	switch t.Protocol {
	case proto.SFS:
		_, _, err = t.Call(proto.ToolWriteFile, map[string]any{"path": fmt.Sprintf("shard/%d", t.ID), "content": t.Shard})
	case proto.P2P:
		msg, _ := encode(envelope{Kind: "shard", Shard: t.Shard})
		_, _, err = t.Call(proto.ToolSend, map[string]any{"target_id": 0, "content": msg})
	default:
		msg, _ := encode(envelope{Kind: "shard", Shard: t.Shard})
		_, _, err = t.Call(proto.ToolBroadcast, map[string]any{"content": msg})
	}
	return err
}

// wrongSubmitter publishes its shard and submits a wrong answer at once.
type wrongSubmitter struct{}

func (wrongSubmitter) Turn(_ context.Context, t *Turn) error {
	if err := publishShard(t); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolSubmit, map[string]any{"answer": "definitely wrong"})
	return err
}

// neverSubmit publishes its shard and then only waits.
type neverSubmit struct{}

func (neverSubmit) Turn(_ context.Context, t *Turn) error {
	if err := publishShard(t); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolWait, nil)
	return err
}

// looper calls receive_messages (or list_files) until the cap stops it.
type looper struct{}

func (*looper) Turn(_ context.Context, t *Turn) error {
	tool := proto.ToolReceive
	if t.Protocol == proto.SFS {
		tool = proto.ToolListFiles
	}
	if err := publishShard(t); err != nil {
		return err
	}
	for {
		if _, _, err := t.Call(tool, nil); err != nil {
			if errors.Is(err, ErrCapped) {
				return nil
			}
			return err
		}
	}
}

// ignorer keeps calling whatever Call returns.
type ignorer struct{}

func (ignorer) Turn(_ context.Context, t *Turn) error {
	for {
		t.Call(proto.ToolReceive, nil)
	}
}

type panicker struct{ round int }

func (p panicker) Turn(_ context.Context, t *Turn) error {
	if t.Round == p.round {
		panic("boom")
	}
	if err := publishShard(t); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolWait, nil)
	return err
}

type failer struct{ round int }

func (f failer) Turn(_ context.Context, t *Turn) error {
	if t.Round == f.round {
		return errors.New("model unavailable")
	}
	if err := publishShard(t); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolWait, nil)
	return err
}

func TestMisbehavingAgents(t *testing.T) {
	in := seeded(t, "I-01", 4, 1)
	for _, p := range protocols {
		// A wrong immediate submission.
		agents := NewReferenceTeam(4)
		agents[2] = wrongSubmitter{}
		res := mustRun(t, Config{Instance: in, Protocol: p}, agents)
		if res.Success || res.S != 0.75 || res.Agents[2].Correct || !res.Agents[2].Submitted || res.Agents[2].Round != 1 {
			t.Errorf("%s wrong submitter: %+v", p, res)
		}
		if string(res.Agents[2].Answer) != `"definitely wrong"` {
			t.Errorf("%s: answer %s", p, res.Agents[2].Answer)
		}

		// Never submits: the run goes to the round cap.
		agents = NewReferenceTeam(4)
		agents[3] = neverSubmit{}
		res = mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: 10}, agents)
		if res.Rounds != 10 || res.S != 0.75 || res.Success || res.AllSubmitted || res.Agents[3].Submitted || string(res.Agents[3].Answer) != "null" || res.Agents[3].Partial != 0 {
			t.Errorf("%s never submits: rounds %d S %v agent %+v", p, res.Rounds, res.S, res.Agents[3])
		}
		if res.P != 0.75 {
			t.Errorf("%s: P = %v, want 0.75", p, res.P)
		}

		// Looping receive: capped every turn, counted.
		agents = NewReferenceTeam(4)
		agents[1] = &looper{}
		res = mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: 6, MaxCallsPerTurn: 7}, agents)
		a := res.Agents[1]
		if a.CappedTurns != 6 || res.CappedTurns != 6 || a.Calls != 6*7 || res.Success || a.Submitted {
			t.Errorf("%s looper: %+v total capped %d", p, a, res.CappedTurns)
		}
		if res.S != 0.75 || res.Rounds != 6 {
			t.Errorf("%s looper: S = %v rounds %d", p, res.S, res.Rounds)
		}

		// Ignoring ErrCapped/ErrTurnOver: stopped as a runaway, recorded.
		agents = NewReferenceTeam(4)
		agents[1] = ignorer{}
		res = mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: 5, MaxCallsPerTurn: 20}, agents)
		if len(res.AgentErrors) != 1 || res.AgentErrors[0].Agent != 1 || !strings.Contains(res.AgentErrors[0].Error, "runaway") || res.CappedTurns != 1 {
			t.Errorf("%s ignorer: %+v", p, res.AgentErrors)
		}

		// Panics and errors: recorded, run completes, the agent gets no more turns.
		agents = NewReferenceTeam(4)
		agents[3] = panicker{round: 2}
		agents[2] = failer{round: 2}
		res = mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: 5}, agents)
		if len(res.AgentErrors) != 2 || res.AgentErrors[0].Agent != 2 || res.AgentErrors[1].Agent != 3 || !res.AgentErrors[1].Panic || res.AgentErrors[1].Error != "panic: boom" || res.AgentErrors[1].Round != 2 {
			t.Errorf("%s panicker: %+v", p, res.AgentErrors)
		}
		// Ended agents take no more turns; the others finish (round 3), S = 2/4.
		if res.Agents[3].Calls != 2 || res.Agents[3].Error == "" || res.Rounds != 3 || res.S != 0.5 || res.AllSubmitted {
			t.Errorf("%s panicker: %+v rounds %d S %v", p, res.Agents[3], res.Rounds, res.S)
		}
	}
}

func TestRunErrors(t *testing.T) {
	in := seeded(t, "I-01", 3, 1)
	if _, err := Run(context.Background(), Config{Instance: in, Protocol: proto.P2P}, NewReferenceTeam(2)); err == nil {
		t.Error("wrong agent count accepted")
	}
	if _, err := Run(context.Background(), Config{Instance: in, Protocol: "carrier-pigeon"}, NewReferenceTeam(3)); err == nil {
		t.Error("bad protocol accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{Instance: in, Protocol: proto.P2P}, NewReferenceTeam(3)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestResultJSON(t *testing.T) {
	in := seeded(t, "I-03", 3, 2)
	res := mustRun(t, Config{Instance: in, Protocol: proto.SFS}, NewReferenceTeam(3))
	b, _ := json.Marshal(res)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range []string{"S", "P", "D", "D_reads", "success", "rounds", "tool_calls", "calls_by_tool", "agents", "capped_turns", "agent_errors", "messages", "bytes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result.json lacks %q (has %v)", k, keys)
		}
	}
	if res.D <= 0 || res.DReads == nil || *res.DReads <= 0 {
		t.Errorf("sfs densities: D %v DReads %v", res.D, res.DReads)
	}
}

// BenchmarkReferenceP2P100: 100 reference agents on P2P, Level I.
func BenchmarkReferenceP2P100(b *testing.B) {
	in := seeded(b, "I-01", 100, 5)
	var res *Result
	start := time.Now()
	calls := 0
	for range b.N {
		res = mustRun(b, Config{Instance: in, Protocol: proto.P2P}, NewReferenceTeam(100))
		if !res.Success {
			b.Fatal("not solved")
		}
		calls += res.ToolCalls
	}
	el := time.Since(start)
	b.ReportMetric(float64(res.Rounds), "rounds")
	b.ReportMetric(float64(calls)/el.Seconds(), "calls/s")
}

// aggregator sends one message to each other agent and submits, all in its
// first turn (N-1 sends and a submit: 30 calls at N = 30).
type aggregator struct{}

func (aggregator) Turn(_ context.Context, t *Turn) error {
	for j := range t.N {
		if j == t.ID {
			continue
		}
		if _, _, err := t.Call(proto.ToolSend, map[string]any{"target_id": j, "content": "answer"}); err != nil {
			return nil // capped: the turn is over
		}
	}
	t.Call(proto.ToolSubmit, map[string]any{"answer": 0})
	return nil
}

// receiver waits for the aggregator's message, then submits.
type receiver struct{}

func (receiver) Turn(_ context.Context, t *Turn) error {
	res, _, err := t.Call(proto.ToolReceive, nil)
	if err != nil {
		return err
	}
	if strings.Contains(string(res), `"answer"`) {
		t.Call(proto.ToolSubmit, map[string]any{"answer": 0})
		return nil
	}
	t.Call(proto.ToolWait, nil)
	return nil
}

// TestNoPerTurnCapByDefault: as in the published engine, a turn runs all
// its calls unless a cap is set; 0 means no cap; a positive cap still caps.
func TestNoPerTurnCapByDefault(t *testing.T) {
	const n = 30
	in := seeded(t, "I-01", n, 1)
	team := func() []Agent {
		agents := []Agent{aggregator{}}
		for range n - 1 {
			agents = append(agents, receiver{})
		}
		return agents
	}
	for _, capped := range []int{DefaultMaxCallsPerTurn, 0} {
		res := mustRun(t, Config{Instance: in, Protocol: proto.P2P, MaxCallsPerTurn: capped}, team())
		a := res.Agents[0]
		if a.Calls != n || !a.Submitted || a.Round != 1 || res.CappedTurns != 0 || res.MaxCallsPerTurn != 0 {
			t.Errorf("cap %d: aggregator %+v, capped turns %d, max_calls_per_turn %d", capped, a, res.CappedTurns, res.MaxCallsPerTurn)
		}
		if res.Messages != n-1 || !res.AllSubmitted || res.Rounds != 2 {
			t.Errorf("cap %d: messages %d, all submitted %v, rounds %d", capped, res.Messages, res.AllSubmitted, res.Rounds)
		}
	}
	// The opt-in cap of 20: 20 sends run, the rest and the submit do not.
	res := mustRun(t, Config{Instance: in, Protocol: proto.P2P, MaxCallsPerTurn: 20, MaxRounds: 1}, team())
	a := res.Agents[0]
	if a.Calls != 20 || a.CappedTurns != 1 || a.Submitted || res.CappedTurns != 1 || res.Messages != 20 || res.MaxCallsPerTurn != 20 {
		t.Errorf("cap 20: aggregator %+v, capped turns %d, messages %d", a, res.CappedTurns, res.Messages)
	}
	if _, err := Run(context.Background(), Config{Instance: in, Protocol: proto.P2P, MaxCallsPerTurn: -1}, team()); err == nil {
		t.Error("a negative cap was accepted")
	}
}
