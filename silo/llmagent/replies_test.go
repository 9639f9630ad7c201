package llmagent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
)

// longTurn is a native turn whose reply text and first call's arguments
// are over MaxInlineReply, and whose executed call's arguments are over
// MaxLoggedArgs.
func longTurn() TurnRecord {
	text := strings.Repeat("é thought ", 1000)                         // 11,000 bytes, a cut inside no rune
	args := `{"content":"` + strings.Repeat("x", MaxLoggedArgs) + `"}` // over both bounds
	return TurnRecord{Round: 1, Agent: 0, Outcome: OutcomeOK,
		Input: []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "task"}},
		Reply: text,
		ReplyToolCalls: []ReplyCall{{ToolCall: llm.ToolCall{ID: "c1", Name: "broadcast_message", Arguments: args}},
			{ToolCall: llm.ToolCall{ID: "c2", Name: "wait", Arguments: "{}"}}},
		Calls: []CallRecord{{Tool: "broadcast_message", Args: json.RawMessage(args), Result: json.RawMessage(`{"error":"arguments too large"}`), Executed: true}},
	}
}

// A long reply is cut in the record the log keeps, whole in the reply
// store once however often it is written, and read back whole; the
// record in memory is left as it was.
func TestReplyStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rec := longTurn()
	st, bodies := rec.stored()
	if len(bodies) != 2 {
		t.Fatalf("%d texts for the store, want 2 (the reply, the long arguments)", len(bodies))
	}
	for range 2 { // the journal, then WriteLogs
		if err := putReplies(dir, bodies); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := os.ReadDir(filepath.Join(dir, DirReplies))
	if len(files) != 2 {
		t.Errorf("%d files in the store, want 2", len(files))
	}
	if len(st.Reply) > MaxInlineReply || !st.RawText.Truncated || st.RawText.Len != len(rec.Reply) || len(st.RawText.SHA256) != 64 {
		t.Errorf("kept reply: %d bytes, %+v", len(st.Reply), st.RawText)
	}
	if c := st.ReplyToolCalls[0]; !c.Truncated || len(c.Arguments) > MaxInlineReply || st.ReplyToolCalls[1].Truncated {
		t.Errorf("kept calls: %+v", st.ReplyToolCalls)
	}
	if string(st.Calls[0].Args) != `{"oversized_args_bytes":`+itoa(len(rec.Calls[0].Args))+`}` {
		t.Errorf("kept call arguments: %.80s", st.Calls[0].Args)
	}
	if len(rec.Reply) != 11000 || len(rec.Calls[0].Args) <= MaxLoggedArgs || rec.ReplyToolCalls[0].Truncated {
		t.Error("stored changed the record in memory")
	}
	line, err := marshalLine(&st)
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > 3*MaxInlineReply {
		t.Errorf("the log line is %d bytes", len(line))
	}
	var back TurnRecord
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	recs := []TurnRecord{back, {Round: 2, Agent: 0, Outcome: OutcomeOK}}
	if _, err := Conversation(recs, 0, 2); err == nil || !strings.Contains(err.Error(), "LoadReplies") {
		t.Errorf("a conversation over a cut reply: %v, want an error naming LoadReplies", err)
	}
	if again, more := back.stored(); len(more) != 0 || again.RawText != back.RawText {
		t.Errorf("a record read back is cut again: %+v, %d texts", again.RawText, len(more))
	}
	if err := LoadReplies(dir, recs); err != nil {
		t.Fatal(err)
	}
	if recs[0].Reply != rec.Reply || recs[0].ReplyToolCalls[0].Arguments != rec.ReplyToolCalls[0].Arguments || recs[0].RawText.Truncated {
		t.Error("LoadReplies did not restore the whole reply")
	}
	msgs, err := Conversation(recs, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m := msgs[2]; m.Content != rec.Reply || m.ToolCalls[0].Arguments != rec.ReplyToolCalls[0].Arguments {
		t.Error("the rebuilt request does not hold the whole reply")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A log written before the reply store holds every reply whole (no raw_*
// fields): it reads as before.
func TestReplyStoreOldLog(t *testing.T) {
	old := `{"round":1,"agent":0,"input":[{"role":"system","content":"sys"},{"role":"user","content":"task"}],"context":{"messages":2,"chars":7,"dropped_turns":0},"reply":"` +
		strings.Repeat("long ", 3000) + `","calls":[],"dropped":0,"outcome":"no_tool_call","usage":{"prompt_tokens":0,"completion_tokens":0}}`
	var rec TurnRecord
	if err := json.Unmarshal([]byte(old), &rec); err != nil {
		t.Fatal(err)
	}
	recs := []TurnRecord{rec, {Round: 2, Agent: 0, Outcome: OutcomeOK}}
	if err := LoadReplies(t.TempDir(), recs); err != nil {
		t.Fatal(err)
	}
	msgs, err := Conversation(recs, 0, 2)
	if err != nil || len(msgs) != 3 || len(msgs[2].Content) != 15000 {
		t.Errorf("old log: %d messages, %v", len(msgs), err)
	}
}

// What the store cannot give back is a clear error: a text over
// MaxStoredReply (never stored), a missing or altered file, a hash that
// is not one (it names a file: no path may come from the log).
func TestReplyStoreErrors(t *testing.T) {
	over := TurnRecord{Reply: strings.Repeat("y", MaxStoredReply+1)}
	st, bodies := over.stored()
	if len(bodies) != 0 || !st.RawText.Truncated || st.RawText.Len != MaxStoredReply+1 {
		t.Fatalf("a reply over the cap: %d texts stored, %+v", len(bodies), st.RawText)
	}
	dir := t.TempDir()
	rec := longTurn()
	cut, b := rec.stored()
	if err := putReplies(dir, b); err != nil {
		t.Fatal(err)
	}
	stored := filepath.Join(dir, DirReplies, cut.RawText.SHA256)
	altered := cut
	altered.RawText.Len--
	traversal := cut
	traversal.RawText.SHA256 = "../../../../etc/passwd"
	missing := cut
	missing.RawText.SHA256 = strings.Repeat("0", 64)
	for name, tc := range map[string]struct {
		rec     TurnRecord
		want    string
		errIs   error
		prepare func()
	}{
		"over the cap": {st, "over the store's cap of 8388608 bytes", ErrReplyNotStored, nil},
		"missing":      {missing, "replies/" + strings.Repeat("0", 64) + " is missing", ErrReplyNotStored, nil},
		"altered":      {altered, "do not match raw_len", nil, nil},
		"traversal":    {traversal, "is not a hex SHA-256", nil, nil},
		"replaced": {cut, "do not match raw_len", nil, func() {
			os.WriteFile(stored, []byte(strings.Repeat("z", cut.RawText.Len)), 0o644)
		}},
	} {
		if tc.prepare != nil {
			tc.prepare()
		}
		err := LoadReplies(dir, []TurnRecord{tc.rec})
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.errIs != nil && !errors.Is(err, tc.errIs)) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
