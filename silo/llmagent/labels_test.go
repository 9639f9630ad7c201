package llmagent_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/pyvalue"
	"github.com/coordbench/coordbench/silo/round"
)

// Crafted runs, one per failure mode: a scripted model plays each mode
// through the real LLM-agent path (XML calls, the published str()
// conversion, the store), and the run's content-aware labels and
// flow-based labels are checked exactly (docs/silo-rounds.md).

// twoRoundModel plays: reply 1, share(v) (then wait); reply 2, read what
// the others shared (then wait); reply 3, submit(v). silent agents only
// ever wait.
type twoRoundModel struct {
	share  func(v silogather.View) (string, bool) // the text to share, or nothing
	submit func(v silogather.View) string         // the answer, as XML text
	silent map[int]bool
	// early: submit in reply 1 right after sharing.
	early bool
	// sameReply: submit in reply 2 right after reading, before the model
	// could have seen what it read.
	sameReply bool
}

func (m twoRoundModel) handle(req stubmodel.ChatRequest) stubmodel.Reply {
	v, ok := silogather.ReadView(req)
	if !ok {
		return stubmodel.Text("no agent here")
	}
	wait := silogather.Call{Name: "wait"}
	if m.silent[v.ID] {
		return silogather.Render(v, []silogather.Call{wait})
	}
	submit := silogather.Call{Name: "submit_result", Args: []silogather.Arg{{Name: "answer", Value: m.submit(v)}}}
	switch turnOf(req) {
	case 0:
		var calls []silogather.Call
		if text, ok := m.share(v); ok {
			calls = shareCalls(v, text)
		}
		if m.early {
			return silogather.Render(v, append(calls, submit))
		}
		return silogather.Render(v, append(calls, wait))
	case 1:
		if m.sameReply {
			return silogather.Render(v, append(readCalls(v), submit))
		}
		return silogather.Render(v, append(readCalls(v), wait))
	}
	return silogather.Render(v, []silogather.Call{submit})
}

// shareCalls sends text to every other agent under the view's protocol.
func shareCalls(v silogather.View, text string) []silogather.Call {
	content := silogather.Arg{Name: "content", Value: text}
	switch v.Protocol {
	case "broadcast":
		return []silogather.Call{{Name: "broadcast_message", Args: []silogather.Arg{content}}}
	case "sfs":
		return []silogather.Call{{Name: "write_file", Args: []silogather.Arg{{Name: "path", Value: "agent_" + strconv.Itoa(v.ID)}, content}}}
	}
	var out []silogather.Call
	for j := range v.N {
		if j != v.ID {
			out = append(out, silogather.Call{Name: "send_message", Args: []silogather.Arg{{Name: "target_id", Value: strconv.Itoa(j)}, content}})
		}
	}
	return out
}

// readCalls reads what the others shared.
func readCalls(v silogather.View) []silogather.Call {
	if v.Protocol != "sfs" {
		return []silogather.Call{{Name: "receive_messages"}}
	}
	var out []silogather.Call
	for j := range v.N {
		if j != v.ID {
			out = append(out, silogather.Call{Name: "read_file", Args: []silogather.Arg{{Name: "path", Value: "agent_" + strconv.Itoa(j)}}})
		}
	}
	return out
}

// localMax is the max of the agent's own I-01 shard, read from its prompt.
func localMax(v silogather.View) int64 {
	text, _ := silogather.PromptShard(v.Prompt)
	raw, err := pyvalue.ParseLiteral(text)
	if err != nil {
		return 0
	}
	var xs []int64
	json.Unmarshal(raw, &xs)
	return slices.Max(xs)
}

func TestCraftedFailureModes(t *testing.T) {
	const n = 3
	in := seeded(t, "I-01", n)
	var gold int64
	json.Unmarshal(in.Expected[0], &gold)
	wrong := strconv.FormatInt(gold+1, 10)
	shardText := func(v silogather.View) (string, bool) { return silogather.PromptShard(v.Prompt) }
	hi := func(silogather.View) (string, bool) { return "hi", true }
	constant := func(s string) func(silogather.View) string { return func(silogather.View) string { return s } }

	all := func(ls ...string) map[int][]string { return map[int][]string{0: ls, 1: ls, 2: ls} }
	// premature@local: each submits its own shard's max in round 1; the
	// agent holding the global max is right, the others premature and in
	// disagreement with it.
	local := map[int][]string{}
	for i := range n {
		var xs []int64
		json.Unmarshal(in.Shards[i], &xs)
		if slices.Max(xs) != gold {
			local[i] = []string{round.LabelConsensus, round.LabelPremature}
		}
	}
	if len(local) == 0 || len(local) == n {
		t.Fatalf("instance does not separate the agents: %v", local)
	}

	cases := []struct {
		name        string
		model       func(stubmodel.ChatRequest) stubmodel.Reply
		rounds      int
		labels, flw map[int][]string
	}{
		// none: the gather strategy, computed right.
		{"none", gatherModel(in, nil), 20, nil, nil},
		{"premature", twoRoundModel{share: shardText, submit: func(v silogather.View) string { return strconv.FormatInt(localMax(v), 10) }, early: true}.handle, 5, local, local},
		// computation: every shard reached everyone (its list, delivered
		// as str() of the typed value), and all agree on a wrong answer.
		{"computation", twoRoundModel{share: shardText, submit: constant(wrong)}.handle, 5,
			all(round.LabelComputation), all(round.LabelComputation)},
		// the same, but each agent submits in the reply that reads the
		// shards: the model had not seen them (issue 27 item 1).
		{"read-and-submit-in-one-reply", twoRoundModel{share: shardText, submit: constant(wrong), sameReply: true}.handle, 5,
			all(round.LabelPremature), all(round.LabelPremature)},
		// computation via the answer: the gatherer ships the right answers,
		// everyone submits a wrong one (the same).
		{"computation-answer", gatherModel(in, func(_ int, ans json.RawMessage) json.RawMessage { return json.RawMessage(wrong) }), 20,
			all(round.LabelComputation), all(round.LabelComputation)},
		// consensus: agents 1 and 2 change the gatherer's right answer, each
		// its own way.
		{"consensus", gatherModel(in, func(id int, ans json.RawMessage) json.RawMessage {
			if id == 0 {
				return ans
			}
			return json.RawMessage(strconv.FormatInt(gold+int64(id), 10))
		}), 20, map[int][]string{1: {round.LabelComputation, round.LabelConsensus}, 2: {round.LabelComputation, round.LabelConsensus}}, nil},
		// chat without data: everyone says "hi" to everyone, then all submit
		// the same wrong answer. Flow: every shard's messages arrived
		// (computation); content: no data arrived (premature).
		{"chat-without-data", twoRoundModel{share: hi, submit: constant(wrong)}.handle, 5,
			all(round.LabelPremature), all(round.LabelComputation)},
		// the same with a silent agent 2: the others agree with each other
		// and disagree only with an agent that never submitted, a consensus
		// failure; nothing of shard 2 reached them, by flow either.
		{"chat-silent-teammate", twoRoundModel{share: hi, submit: constant(wrong), silent: map[int]bool{2: true}}.handle, 4,
			map[int][]string{0: {round.LabelConsensus, round.LabelPremature}, 1: {round.LabelConsensus, round.LabelPremature}, 2: {round.LabelNoSubmission}}, nil},
	}
	for _, p := range []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS} {
		for _, c := range cases {
			name := fmt.Sprintf("%s %s", c.name, p)
			srv := stubmodel.NewServer(c.model)
			out := play(t, in, p, llmagent.Config{Model: client(t, srv, nil)}, c.rounds)
			srv.Close()
			flw := c.flw
			if flw == nil {
				flw = c.labels
			}
			checkCrafted(t, name, out.res, c.labels, flw)
		}
	}
}

// checkCrafted compares both label sets and their counts exactly.
func checkCrafted(t *testing.T, name string, res *round.Result, want, flow map[int][]string) {
	t.Helper()
	counts, countsFlow := map[string]int{}, map[string]int{}
	for i, a := range res.Agents {
		w, f := want[i], flow[i]
		if w == nil {
			w = []string{}
		}
		if f == nil {
			f = []string{}
		}
		if !slices.Equal(a.Labels, w) || !slices.Equal(a.LabelsFlow, f) {
			t.Errorf("%s: agent %d labels %q / flow %q, want %q / %q (answer %s, seen %v, informed %v)",
				name, i, a.Labels, a.LabelsFlow, w, f, a.Answer, a.Seen, a.Informed)
		}
		for _, l := range w {
			counts[l]++
		}
		for _, l := range f {
			countsFlow[l]++
		}
	}
	if !maps.Equal(res.Failures, counts) || !maps.Equal(res.FailuresFlow, countsFlow) {
		t.Errorf("%s: failures %v / flow %v, want %v / %v", name, res.Failures, res.FailuresFlow, counts, countsFlow)
	}
}

// TestSharedListArrivesAsStr: a list sent in XML reaches the others as
// Python's str() of it by default, as its JSON text with FormatJSON.
func TestSharedListArrivesAsStr(t *testing.T) {
	in := seeded(t, "I-01", 2)
	m := twoRoundModel{share: func(silogather.View) (string, bool) { return `{"max": [1e3, true]}`, true },
		submit: func(silogather.View) string { return "0" }}
	for _, f := range []proto.MessageFormat{proto.FormatStr, proto.FormatJSON} {
		srv := stubmodel.NewServer(m.handle)
		team, err := llmagent.NewTeam(in, proto.P2P, llmagent.Config{Model: client(t, srv, nil)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := round.Run(t.Context(), round.Config{Instance: in, Protocol: proto.P2P, MaxRounds: 3, Options: proto.Options{MessageFormat: f}}, team.Agents())
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := team.Records()
		want := map[proto.MessageFormat]string{proto.FormatStr: `"content":"{'max': [1000.0, True]}"`, proto.FormatJSON: `"content":"{\"max\":[1000.0,true]}"`}[f]
		found := false
		for _, r := range recs {
			for _, c := range r.Calls {
				found = found || c.Tool == proto.ToolReceive && strings.Contains(string(c.Result), want)
			}
		}
		if !found || res.MessageFormat != f {
			t.Errorf("%s: no receive_messages result holds %s (result format %q)", f, want, res.MessageFormat)
		}
	}
}
