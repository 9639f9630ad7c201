package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/suite"
)

// call is one tool call of a crafted run.
type call struct {
	agent int
	tool  string
	args  string
}

// agentJSON is one agent of a crafted result.json.
type agentJSON map[string]any

// craft writes a run directory whose run.db is played by the real store
// (one slice of calls per round) and whose result.json is written by hand
// from agents; it returns the directory.
func craft(t *testing.T, dir string, p proto.Protocol, rounds [][]call, agents []agentJSON) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := proto.Open(filepath.Join(dir, play.FileDB), p, len(agents), proto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r, calls := range rounds {
		if err := st.BeginRound(r + 1); err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			args := c.args
			if args == "" {
				args = "{}"
			}
			if res, _ := st.Call(c.agent, c.tool, json.RawMessage(args)); bytes.HasPrefix(res, []byte(`{"error"`)) {
				t.Fatalf("round %d: agent %d %s %s: %s", r+1, c.agent, c.tool, args, res)
			}
		}
		if err := st.EndRound(); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for i, a := range agents {
		a["agent_id"] = i
	}
	res := map[string]any{"task": "I-01", "mode": "seeded", "seed": 1, "n": len(agents), "protocol": string(p),
		"success": false, "S": 0, "rounds": len(rounds), "agents": agents}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, play.FileResult), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func send(from, to int) call {
	return call{from, proto.ToolSend, `{"target_id":` + itoa(to) + `,"content":"x"}`}
}

func analyzeOne(t *testing.T, dir string) *Report {
	t.Helper()
	rep, err := Analyze(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Suite {
		t.Fatalf("%d runs, suite %v", len(rep.Runs), rep.Suite)
	}
	return rep
}

// TestCraftedStar: everyone sends to agent 0 (agent 1 twice), agent 0
// reads; the star's figures follow from the definitions.
func TestCraftedStar(t *testing.T) {
	rounds := [][]call{
		{send(1, 0), send(1, 0), send(2, 0), send(3, 0), send(4, 0)},
		{{0, proto.ToolReceive, ""}},
	}
	agents := []agentJSON{
		{"submitted": true, "correct": true, "labels": []string{}},
		{"submitted": true, "correct": false, "labels": []string{"premature_submission", "consensus_failure"},
			"flow_labels": []string{"premature_submission"}},
		{"submitted": true, "correct": false, "labels": []string{"consensus_failure", "premature_submission", "zz_new"}},
		{"submitted": false, "correct": false, "labels": []string{"no_submission"}},
		{"submitted": true, "correct": false, "labels": []string{}, "label": "not a label field"},
	}
	rep := analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "star"), proto.P2P, rounds, agents))
	top := rep.Runs[0].Topology
	if top.Edges != 4 || top.Traffic != 5 || top.Hub != 0 || top.HubShare != 1 || top.HubReached != 4 ||
		!top.LeaderDefined || !top.Leader || top.MaxOut != 1 || top.MaxIn != 4 {
		t.Errorf("topology %+v", top)
	}
	if top.EdgeDensity != 0.2 || top.MeanOut != 0.8 || top.Gini != 0.3 {
		t.Errorf("density %v, mean out %v, Gini %v; want 0.2, 0.8, 0.3", top.EdgeDensity, top.MeanOut, top.Gini)
	}
	want := []AgentStats{
		{Out: 0, In: 4, Degree: 4, Reached: 4, Sent: 0, Received: 5, Traffic: 5},
		{Out: 1, In: 0, Degree: 1, Reached: 1, Sent: 2, Received: 0, Traffic: 2},
		{Out: 1, In: 0, Degree: 1, Reached: 1, Sent: 1, Received: 0, Traffic: 1},
		{Out: 1, In: 0, Degree: 1, Reached: 1, Sent: 1, Received: 0, Traffic: 1},
		{Out: 1, In: 0, Degree: 1, Reached: 1, Sent: 1, Received: 0, Traffic: 1},
	}
	if !slices.Equal(top.Agents, want) {
		t.Errorf("agents\n got %+v\nwant %+v", top.Agents, want)
	}

	// Label fields are read generically, known labels ordered first.
	if !slices.Equal(rep.Fields, []string{"labels", "flow_labels"}) {
		t.Errorf("fields %v", rep.Fields)
	}
	if got := rep.LabelOrder["labels"]; !slices.Equal(got, []string{"premature_submission", "consensus_failure", "no_submission", "zz_new"}) {
		t.Errorf("label order %v", got)
	}
	type cell struct{ agents, runs int }
	all := map[[3]string]cell{}
	groups := map[string]int{}
	for _, l := range rep.Labels {
		groups[l.Field+"/"+levelName(l.Level)+"/"+l.Protocol]++
		if l.GroupRuns != 1 || l.GroupAgents != 5 || l.Agent != NoAgent {
			t.Errorf("row %+v", l)
		}
		if l.Level == AllLevels {
			all[[3]string{l.Field, l.A, l.B}] = cell{l.Agents, l.Runs}
		}
	}
	if want := map[string]int{"labels/I/p2p": 10, "labels/all/all": 10, "flow_labels/I/p2p": 1, "flow_labels/all/all": 1}; !mapsEqual(groups, want) {
		t.Errorf("rows per group %v, want %v", groups, want)
	}
	for k, want := range map[[3]string]cell{
		{"labels", "premature_submission", "premature_submission"}:      {2, 1},
		{"labels", "premature_submission", "consensus_failure"}:         {2, 1},
		{"labels", "premature_submission", "zz_new"}:                    {1, 1},
		{"labels", "consensus_failure", "zz_new"}:                       {1, 1},
		{"labels", "premature_submission", "no_submission"}:             {0, 1},
		{"labels", "no_submission", "no_submission"}:                    {1, 1},
		{"flow_labels", "premature_submission", "premature_submission"}: {1, 1},
	} {
		if all[k] != want {
			t.Errorf("%v: %+v, want %+v", k, all[k], want)
		}
	}
	var sum bytes.Buffer
	rep.WriteSummary(&sum)
	for _, s := range []string{"hub: agent 0 (out 0, in 4, reached 4 of 4 peers, traffic share 1.0000); leader: true",
		"agents per label (labels): premature_submission 2, consensus_failure 2, no_submission 1, zz_new 1",
		"agents per label (flow_labels): premature_submission 1"} {
		if !strings.Contains(sum.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, sum.String())
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func plainAgents(n int) []agentJSON {
	out := make([]agentJSON, n)
	for i := range out {
		out[i] = agentJSON{"submitted": true, "correct": true, "labels": []string{}}
	}
	return out
}

// TestCraftedSFS: edges of the shared store are reads of another agent's
// entry; misses and reads of one's own entry are none.
func TestCraftedSFS(t *testing.T) {
	w := func(a int, path string) call {
		return call{a, proto.ToolWriteFile, `{"path":"` + path + `","content":"v"}`}
	}
	r := func(a int, path string) call { return call{a, proto.ToolReadFile, `{"path":"` + path + `"}`} }
	rounds := [][]call{
		{w(1, "a"), w(2, "b")},
		{r(0, "a"), r(0, "b"), r(0, "missing"), r(1, "a"), w(0, "ans")},
		{r(1, "ans"), r(2, "ans")},
	}
	top := analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "sfs"), proto.SFS, rounds, plainAgents(3))).Runs[0].Topology
	want := []AgentStats{
		{Out: 2, In: 2, Degree: 4, Reached: 2, Sent: 1, Received: 2, Traffic: 4},
		{Out: 1, In: 1, Degree: 2, Reached: 1, Sent: 1, Received: 2, Traffic: 2},
		{Out: 1, In: 1, Degree: 2, Reached: 1, Sent: 1, Received: 1, Traffic: 2},
	}
	if !slices.Equal(top.Agents, want) || top.Edges != 4 || top.Hub != 0 || top.HubShare != 1 || !top.Leader {
		t.Errorf("topology %+v", top)
	}
}

// TestCraftedOthers: one broadcaster reaches everyone; a two-agent run has
// no leader verdict; a hub short of dominance and a silent run have no
// leader.
func TestCraftedOthers(t *testing.T) {
	b := call{2, proto.ToolBroadcast, `{"content":"hello"}`}
	top := analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "bc"), proto.Broadcast, [][]call{{b, b}}, plainAgents(4))).Runs[0].Topology
	if top.Edges != 3 || top.Traffic != 6 || top.Hub != 2 || top.HubShare != 1 || top.HubReached != 3 || !top.Leader ||
		top.Agents[2].Sent != 2 || top.Agents[0].In != 1 {
		t.Errorf("topology %+v", top)
	}
	rep := analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "two"), proto.P2P, [][]call{{send(0, 1)}}, plainAgents(2)))
	if top := rep.Runs[0].Topology; top.LeaderDefined || top.Leader || top.Hub != 0 {
		t.Errorf("N=2: %+v", top)
	}
	if row := rep.Runs[0].row(); row[slices.Index(RunsHeader(), "leader")] != "" {
		t.Errorf("N=2 leader cell %q, want empty", row[slices.Index(RunsHeader(), "leader")])
	}
	// A hub that is not twice anyone else's degree is no leader (the first
	// five rounds of the chain 0-1-2-3: shards up, answers coming down).
	chain := [][]call{{send(0, 1), send(1, 2), send(2, 3), send(3, 2), send(2, 1)}}
	rep = analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "chain"), proto.P2P, chain, plainAgents(4)))
	if top := rep.Runs[0].Topology; top.Hub != 2 || top.Agents[2].Degree != 4 || top.Agents[1].Degree != 3 ||
		top.HubShare != 0.8 || top.Leader {
		t.Errorf("chain: %+v", top)
	}
	// No communication at all: no hub.
	rep = analyzeOne(t, craft(t, filepath.Join(t.TempDir(), "mute"), proto.P2P, [][]call{{}}, plainAgents(3)))
	if top := rep.Runs[0].Topology; top.Hub != -1 || top.Leader || top.Gini != 0 {
		t.Errorf("silent run: %+v", top)
	}
}

func TestGini(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want float64
	}{
		{[]int{0, 0}, 0},
		{[]int{2, 2, 2}, 0},
		{[]int{6, 2, 2, 2}, 0.25},
		{[]int{0, 0, 0, 4}, 0.75},
	} {
		if got := gini(c.xs); got != c.want {
			t.Errorf("gini(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

// TestSuite runs a real offline suite (scripted star and chain teams on
// every protocol), analyses it, and checks the known topologies, that
// failed/ and temporaries are ignored, and that the output is the same
// bytes every time.
func TestSuite(t *testing.T) {
	s, err := suite.Resolve(suite.Options{Tasks: "I-01", Agents: "4", Protocols: "all", Agent: "reference,chain", NoBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := suite.Run(context.Background(), s, dir, suite.RunOptions{Workers: 2})
	if err != nil || len(rep.Cases) != 6 {
		t.Fatalf("suite: %v, %d cases", err, len(rep.Cases))
	}
	for _, d := range []string{filepath.Join(dir, suite.FailedDir, "x"), filepath.Join(dir, suite.RunsDir, ".tmp-y")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Analyze(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Suite || len(a.Runs) != 6 {
		t.Fatalf("suite %v, %d runs", a.Suite, len(a.Runs))
	}
	byID := map[string]*Run{}
	for i := range a.Runs {
		byID[a.Runs[i].ID] = &a.Runs[i]
		if i > 0 && a.Runs[i-1].ID >= a.Runs[i].ID {
			t.Errorf("runs out of order: %s, %s", a.Runs[i-1].ID, a.Runs[i].ID)
		}
	}
	get := func(p, agent string) *Topology {
		r := byID["I-01__n4__"+p+"__"+agent+"__seeded-s1"]
		if r == nil {
			t.Fatalf("no run %s/%s", p, agent)
		}
		if r.Agent != agent || r.Level != 1 || !r.Success {
			t.Errorf("%s: %+v", r.ID, r)
		}
		return &r.Topology
	}
	// The reference team is a star around agent 0: shards in, answers out.
	for _, p := range []string{"p2p", "sfs"} {
		top := get(p, "reference")
		if h := top.Agents[0]; top.Hub != 0 || h.Out != 3 || h.In != 3 || top.HubShare != 1 || !top.Leader || top.Edges != 6 {
			t.Errorf("reference %s: %+v", p, top)
		}
	}
	// A broadcast reaches everyone: the send graph is complete, no leader.
	if top := get("broadcast", "reference"); top.Edges != 12 || top.Leader || top.Gini != 0 {
		t.Errorf("reference broadcast: %+v", top)
	}
	// The chain 0-1-2-3: two middle agents of degree 4, no unique hub.
	if top := get("p2p", "chain"); top.Edges != 6 || top.Hub != 1 || top.Leader || top.Agents[1].Degree != 4 || top.Agents[2].Degree != 4 {
		t.Errorf("chain p2p: %+v", top)
	}
	var refAll *LeaderRow
	for i := range a.Leaders {
		if l := &a.Leaders[i]; l.Agent == "reference" && l.Protocol == AllProtocols {
			refAll = l
		}
	}
	if refAll == nil || refAll.Runs != 3 || refAll.Leaders != 2 || refAll.SuccessWith != 1 || refAll.SuccessWithout != 1 {
		t.Errorf("reference leaders: %+v", refAll)
	}
	if len(a.Topology) != 6 || len(a.Labels) != 0 || !slices.Equal(a.Fields, []string{"labels", "labels_flow"}) {
		t.Errorf("%d topology rows, %d label rows, fields %v", len(a.Topology), len(a.Labels), a.Fields)
	}

	out1, out2 := filepath.Join(t.TempDir(), "a"), filepath.Join(dir, DefaultOutDir)
	if err := a.Write(out1); err != nil {
		t.Fatal(err)
	}
	again, err := Analyze(dir, Options{}) // the run databases are read only: same answers
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Write(out2); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileRuns, FileAgents, FileTopology, FileLeaders, FileLabels, FileMarkdown} {
		b1, err1 := os.ReadFile(filepath.Join(out1, f))
		b2, err2 := os.ReadFile(filepath.Join(out2, f))
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) || len(b1) == 0 {
			t.Errorf("%s differs between two analyses (%v, %v)", f, err1, err2)
		}
	}
	// The analysis directory inside the suite is no run.
	if a3, err := Analyze(dir, Options{}); err != nil || len(a3.Runs) != 6 {
		t.Errorf("after writing: %v, %d runs", err, len(a3.Runs))
	}
	if _, err := Analyze(dir, Options{MaxRuns: 5}); err == nil || !strings.Contains(err.Error(), "more than 5 runs") {
		t.Errorf("MaxRuns: %v", err)
	}
}

func TestErrors(t *testing.T) {
	base := t.TempDir()
	good := func(name string) string {
		return craft(t, filepath.Join(base, name), proto.P2P, [][]call{{send(1, 0)}}, plainAgents(2))
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	emptySuite := filepath.Join(base, "empty")
	os.MkdirAll(filepath.Join(emptySuite, suite.RunsDir), 0o755)

	noDB := good("nodb")
	os.Remove(filepath.Join(noDB, play.FileDB))
	badJSON := good("badjson")
	os.WriteFile(filepath.Join(badJSON, play.FileResult), []byte("{"), 0o644)
	wrongN := good("wrongn")
	os.WriteFile(filepath.Join(wrongN, play.FileResult), []byte(`{"task":"I-01","protocol":"p2p","n":3,"agents":[{},{},{}]}`), 0o644)
	wrongProto := good("wrongproto")
	os.WriteFile(filepath.Join(wrongProto, play.FileResult), []byte(`{"task":"I-01","protocol":"sfs","n":2,"agents":[{},{}]}`), 0o644)
	hugeN := good("hugen")
	os.WriteFile(filepath.Join(hugeN, play.FileResult), []byte(`{"task":"I-01","protocol":"p2p","n":100000,"agents":[]}`), 0o644)
	badLabel := good("badcorrect")
	os.WriteFile(filepath.Join(badLabel, play.FileResult), []byte(`{"task":"I-01","protocol":"p2p","n":2,"agents":[{"correct":"yes"},{}]}`), 0o644)
	notDB := good("notdb")
	os.WriteFile(filepath.Join(notDB, play.FileDB), []byte("not a database"), 0o644)
	suiteBad := filepath.Join(base, "suitebad")
	os.MkdirAll(filepath.Join(suiteBad, suite.RunsDir), 0o755)
	os.Rename(good("tmp"), filepath.Join(suiteBad, suite.RunsDir, "case1"))
	os.Remove(filepath.Join(suiteBad, suite.RunsDir, "case1", play.FileDB))

	for _, c := range []struct{ dir, want string }{
		{filepath.Join(base, "missing"), "no such file"},
		{file, "not a directory"},
		{base, "neither a run directory"},
		{emptySuite, "no finished runs"},
		{noDB, "no run.db"},
		{badJSON, "result.json"},
		{wrongN, "run database holds protocol \"p2p\" with 2 agents"},
		{wrongProto, "result.json says \"sfs\""},
		{hugeN, "want 1..1000"},
		{badLabel, "agent 0: correct"},
		{notDB, "not a SILO-BENCH run database"},
		{suiteBad, "run case1: "},
	} {
		_, err := Analyze(c.dir, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", filepath.Base(c.dir), err, c.want)
		}
	}
}

// BenchmarkAnalyze analyses a suite of 18 scripted runs (N = 10, three
// teams, three protocols, two tasks); runs/s is the figure to quote.
func BenchmarkAnalyze(b *testing.B) {
	s, err := suite.Resolve(suite.Options{Tasks: "I-01,III-21", Agents: "10", Protocols: "all", Agent: "reference,tree,chain", NoBaseline: true})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if _, err := suite.Run(context.Background(), s, dir, suite.RunOptions{Workers: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := Analyze(dir, Options{})
		if err != nil || len(rep.Runs) != len(s.Cases) {
			b.Fatalf("%v, %d runs", err, len(rep.Runs))
		}
	}
	b.ReportMetric(float64(len(s.Cases)*b.N)/b.Elapsed().Seconds(), "runs/s")
}
