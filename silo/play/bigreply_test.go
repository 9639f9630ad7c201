package play_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
	"github.com/coordbench/coordbench/silo/transcript"
)

// replyOverhead is what one long reply may cost a run directory beyond
// its own bytes: the head its turn record keeps inline
// (llmagent.MaxInlineReply, in turns.jsonl and again in the run
// database), its length and hash, and the pages the database grows by.
const replyOverhead = 64 << 10

// playPadded runs I-01 with three LLM agents in mode native against the
// silo-gather stub, agent 0's first reply prefixed with pad, and returns
// the run directory and the stub (its captured requests).
func playPadded(t *testing.T, pad string, native bool) (string, *stubmodel.Server) {
	t.Helper()
	m := silogather.Model{Solve: silogather.PromptSolver}
	var padded atomic.Bool
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		r := m.Handle(req)
		if v, ok := silogather.ReadView(req); ok && v.ID == 0 && pad != "" && padded.CompareAndSwap(false, true) {
			if native { // the pad in the arguments of a call that asks nothing
				r.ToolCalls = append([]stubmodel.ToolCall{{ID: "pad", Name: "list_agents", Arguments: `{"note":"` + pad + `"}`}}, r.ToolCalls...)
			} else {
				r.Content = pad + "\n" + r.Content
			}
		}
		return r
	})
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "silo-gather", Concurrency: 4, RetryBaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	in, err := task.Seeded("I-01", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	players := play.Players{Kind: play.AgentLLM, LLM: &play.LLMAgent{Config: llmagent.Config{Model: c, Native: native}, Model: "silo-gather"}}
	res, _, err := play.Run(context.Background(), in, proto.P2P, players, play.Limits{MaxRounds: 10}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Fatalf("the padded run failed: %+v", res.Agents)
	}
	return dir, srv
}

// TestLongReplyStoredOnce (issue 31): a 3 MiB reply of one agent costs
// the run directory at most its size plus replyOverhead over the same
// run without it (it was in turns.jsonl and again in the run database),
// and silo show --request still rebuilds every request agent 0 sent, byte
// for byte as the stub received it, the 3 MiB reply in its history
// included. In both tool formats: the reply text, and a native tool call's
// arguments.
func TestLongReplyStoredOnce(t *testing.T) {
	const size = 3 << 20
	pad := strings.Repeat("I am thinking about this at length. ", size/36+1)[:size]
	for _, native := range []bool{false, true} {
		plain, _ := playPadded(t, "", native)
		dir, srv := playPadded(t, pad, native)
		base, got := testenv.DirBytes(t, plain), testenv.DirBytes(t, dir)
		t.Logf("native %v: run directory %d bytes, %d without the long reply: the reply of %d bytes costs %d more", native, got, base, size, got-base-size)
		if got > base+size+replyOverhead {
			t.Errorf("native %v: run directory %d bytes, %d without the long reply: more than its %d bytes + %d", native, got, base, size, replyOverhead)
		}

		var sent [][]stubmodel.Message // agent 0's requests, round by round
		for _, req := range srv.Requests() {
			if v, ok := silogather.ReadView(req); ok && v.ID == 0 {
				sent = append(sent, req.Messages)
			}
		}
		if len(sent) < 2 {
			t.Fatalf("agent 0 made %d model calls; want the padded reply in a later request", len(sent))
		}
		for r, want := range sent {
			msgs, err := transcript.Request(dir, 0, r+1)
			if err != nil {
				t.Fatalf("native %v round %d: %v", native, r+1, err)
			}
			if a, b := requestJSON(t, msgs), stubJSON(t, want); !bytes.Equal(a, b) {
				t.Errorf("native %v round %d: the rebuilt request (%d bytes) differs from what the stub received (%d bytes)", native, r+1, len(a), len(b))
			}
		}
		var out bytes.Buffer
		if err := transcript.WriteRequest(&out, dir, 0, 2, transcript.Options{Full: true}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), pad[:size-100]) {
			t.Errorf("native %v: silo show --request --full does not print the whole long reply (%d bytes printed)", native, out.Len())
		}
		if native {
			continue
		}
		out.Reset()
		if err := transcript.Write(&out, dir, transcript.Options{Agent: 0, Round: 1, Full: true, Replies: true}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), pad[:size-100]) || strings.Contains(out.String(), "[coordbench: cut at") {
			t.Errorf("silo show --replies --full does not print the whole long reply (%d bytes printed)", out.Len())
		}
	}
}

// requestJSON encodes messages with what a request sends of them, to
// compare the rebuilt request with the one the stub received.
func requestJSON(t *testing.T, ms []llm.Message) []byte {
	type call struct{ ID, Name, Arguments string }
	type msg struct {
		Role, Content, ToolCallID string
		Calls                     []call
	}
	out := make([]msg, len(ms))
	for i, m := range ms {
		out[i] = msg{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].Calls = append(out[i].Calls, call{c.ID, c.Name, c.Arguments})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stubJSON is requestJSON of the messages the stub received.
func stubJSON(t *testing.T, ms []stubmodel.Message) []byte {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = llm.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return requestJSON(t, out)
}
