package proto

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/internal/untrusted"
)

func open(t testing.TB, p Protocol, n int) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "run.db"), p, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func begin(t testing.TB, s *Store, r int) {
	t.Helper()
	if err := s.BeginRound(r); err != nil {
		t.Fatal(err)
	}
}

func end(t testing.TB, s *Store) {
	t.Helper()
	if err := s.EndRound(); err != nil {
		t.Fatal(err)
	}
}

// call runs one tool call and decodes its result.
func call(t testing.TB, s *Store, agent int, tool, args string) map[string]any {
	t.Helper()
	res, _ := s.Call(agent, tool, json.RawMessage(args))
	var m map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("%s result %s: %v", tool, res, err)
	}
	return m
}

type msg struct {
	From    int
	Content string
	Round   int
}

func receive(t testing.TB, s *Store, agent int) []msg {
	t.Helper()
	res, done := s.Call(agent, ToolReceive, nil)
	if done {
		t.Fatalf("receive ended the turn: %s", res)
	}
	var r struct {
		Messages []struct {
			From      int    `json:"from"`
			Content   string `json:"content"`
			Timestamp int    `json:"timestamp"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Messages == nil {
		t.Fatalf("receive result %s: %v", res, err)
	}
	out := []msg{}
	for _, m := range r.Messages {
		out = append(out, msg{m.From, m.Content, m.Timestamp})
	}
	return out
}

func send(t testing.TB, s *Store, from, to int, content string) {
	t.Helper()
	if r := call(t, s, from, ToolSend, fmt.Sprintf(`{"target_id":%d,"content":%q}`, to, content)); r["success"] != true {
		t.Fatalf("send %d->%d: %v", from, to, r)
	}
}

func TestVisibilityNextRound(t *testing.T) {
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		t.Run(string(p), func(t *testing.T) {
			s := open(t, p, 3)
			begin(t, s, 1)
			switch p {
			case P2P:
				send(t, s, 0, 1, "hi")
			case Broadcast:
				call(t, s, 0, ToolBroadcast, `{"content":"hi"}`)
			case SFS:
				call(t, s, 0, ToolWriteFile, `{"path":"k","content":"hi"}`)
			}
			// Same round: neither a later agent nor the writer sees it.
			for _, a := range []int{0, 1} {
				if p == SFS {
					if r := call(t, s, a, ToolReadFile, `{"path":"k"}`); r["success"] != false {
						t.Fatalf("agent %d read a same-round write: %v", a, r)
					}
					if r := call(t, s, a, ToolListFiles, `{}`); len(r["files"].([]any)) != 0 {
						t.Fatalf("same-round listing: %v", r)
					}
				} else if got := receive(t, s, a); len(got) != 0 {
					t.Fatalf("agent %d received a same-round message: %v", a, got)
				}
			}
			end(t, s)
			begin(t, s, 2)
			if p == SFS {
				r := call(t, s, 1, ToolReadFile, `{"path":"k"}`)
				if r["success"] != true || r["content"] != "hi" {
					t.Fatalf("round 2 read: %v", r)
				}
				md := r["metadata"].(map[string]any)
				if md["modified_by"] != 0.0 || md["modified_at_round"] != 1.0 {
					t.Fatalf("metadata %v", md)
				}
			} else if got := receive(t, s, 1); !reflect.DeepEqual(got, []msg{{0, "hi", 1}}) {
				t.Fatalf("round 2 receive: %v", got)
			}
			end(t, s)
		})
	}
}

func TestP2PPerSenderOrderAndReadFlags(t *testing.T) {
	s := open(t, P2P, 3)
	begin(t, s, 1)
	// Agent 1's calls arrive first; delivery is still by sender id.
	send(t, s, 1, 2, "x")
	send(t, s, 1, 2, "y")
	send(t, s, 0, 2, "a")
	send(t, s, 0, 2, "b")
	send(t, s, 0, 2, "c")
	end(t, s)
	begin(t, s, 2)
	send(t, s, 0, 2, "d")
	end(t, s)
	begin(t, s, 3)
	want := []msg{{0, "a", 1}, {0, "b", 1}, {0, "c", 1}, {1, "x", 1}, {1, "y", 1}, {0, "d", 2}}
	if got := receive(t, s, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := receive(t, s, 2); len(got) != 0 {
		t.Fatalf("re-delivered in the same round: %v", got)
	}
	end(t, s)
	begin(t, s, 4)
	if got := receive(t, s, 2); len(got) != 0 {
		t.Fatalf("re-delivered next round: %v", got)
	}
	end(t, s)
	var unread, readR3 int
	if err := s.DB().QueryRow(`SELECT count(*) FILTER (WHERE read_round IS NULL), count(*) FILTER (WHERE read_round = 3) FROM messages`).Scan(&unread, &readR3); err != nil {
		t.Fatal(err)
	}
	if unread != 0 || readR3 != 6 {
		t.Fatalf("read flags in db: unread %d, read in round 3 %d", unread, readR3)
	}
	c := s.Counts()
	if c.Total.M != 6 || c.ByAgent[0].MessagesSent != 4 || c.ByAgent[2].Received != 6 || c.ByAgent[2].Reads != 3 {
		t.Fatalf("counts %+v", c)
	}
	if d := c.D(); d != 1.0 { // 6 / (3*2)
		t.Fatalf("D = %v", d)
	}
}

func TestP2PSendErrors(t *testing.T) {
	s := open(t, P2P, 2)
	begin(t, s, 1)
	for _, args := range []string{`{"target_id":5,"content":"x"}`, `{"target_id":-1,"content":"x"}`, `{"target_id":0,"content":"x"}`} {
		if r := call(t, s, 0, ToolSend, args); r["success"] != false {
			t.Fatalf("%s: %v", args, r)
		}
	}
	// Python int(): "1", 1.0 and true are all agent 1.
	for _, args := range []string{`{"target_id":"1","content":"s"}`, `{"target_id":1.0,"content":2}`, `{"target_id":true,"content":{"a":1}}`} {
		if r := call(t, s, 0, ToolSend, args); r["success"] != true {
			t.Fatalf("%s: %v", args, r)
		}
	}
	end(t, s)
	begin(t, s, 2)
	want := []msg{{0, "s", 1}, {0, "2", 1}, {0, `{'a': 1}`, 1}} // str() of the content (format_test.go)
	if got := receive(t, s, 1); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	end(t, s)
	if c := s.Counts(); c.Total.Errors != 3 || c.Total.M != 3 {
		t.Fatalf("errors %d, m %d", c.Total.Errors, c.Total.M)
	}
}

func TestBroadcastCursorAndListAgents(t *testing.T) {
	s := open(t, Broadcast, 3)
	// Round 1: agents 2 and 0 broadcast (2 first in arrival).
	begin(t, s, 1)
	call(t, s, 2, ToolBroadcast, `{"content":"c1"}`)
	call(t, s, 0, ToolBroadcast, `{"content":"a1"}`)
	call(t, s, 0, ToolBroadcast, `{"content":"a1b"}`)
	end(t, s)
	begin(t, s, 2)
	if got := receive(t, s, 1); !reflect.DeepEqual(got, []msg{{0, "a1", 1}, {0, "a1b", 1}, {2, "c1", 1}}) {
		t.Fatalf("round 2: %v", got)
	}
	// Own broadcasts are never returned.
	if got := receive(t, s, 0); !reflect.DeepEqual(got, []msg{{2, "c1", 1}}) {
		t.Fatalf("agent 0 round 2: %v", got)
	}
	call(t, s, 0, ToolBroadcast, `{"content":"a2"}`)
	end(t, s)
	// Round 3: agent 1 skips receive_messages.
	begin(t, s, 3)
	call(t, s, 2, ToolBroadcast, `{"content":"c3"}`)
	end(t, s)
	begin(t, s, 4)
	if got := receive(t, s, 1); !reflect.DeepEqual(got, []msg{{0, "a2", 2}, {2, "c3", 3}}) {
		t.Fatalf("after skipping a round: %v (no re-delivery expected)", got)
	}
	if got := receive(t, s, 1); len(got) != 0 {
		t.Fatalf("second receive: %v", got)
	}
	r := call(t, s, 1, ToolList, `{}`)
	if r["total"] != 3.0 || !reflect.DeepEqual(r["agent_ids"], []any{0.0, 1.0, 2.0}) {
		t.Fatalf("list_agents: %v", r)
	}
	end(t, s)
	c := s.Counts()
	if c.Total.M != 5 || c.Total.MessagesSent != 5 {
		t.Fatalf("m = %d", c.Total.M)
	}
	var cursor int
	if err := s.DB().QueryRow(`SELECT bcast_cursor FROM agents WHERE id = 1`).Scan(&cursor); err != nil || cursor != 5 {
		t.Fatalf("cursor %d, %v", cursor, err)
	}
}

func TestSFSLastWriterWins(t *testing.T) {
	const n = 6
	s := open(t, SFS, n)
	begin(t, s, 1)
	// Writes arrive in reverse agent order, each from its own goroutine.
	var wg sync.WaitGroup
	prev := make(chan struct{})
	close(prev)
	for a := n - 1; a >= 0; a-- {
		next := make(chan struct{})
		wg.Add(1)
		go func(a int, prev <-chan struct{}, next chan<- struct{}) {
			defer wg.Done()
			<-prev
			s.Call(a, ToolWriteFile, json.RawMessage(fmt.Sprintf(`{"path":"k","content":"v%d-first"}`, a)))
			s.Call(a, ToolWriteFile, json.RawMessage(fmt.Sprintf(`{"path":"k","content":"v%d"}`, a)))
			close(next)
		}(a, prev, next)
		prev = next
	}
	wg.Wait()
	end(t, s)
	begin(t, s, 2)
	r := call(t, s, 0, ToolReadFile, `{"path":"k"}`)
	if r["content"] != fmt.Sprintf("v%d", n-1) || r["metadata"].(map[string]any)["modified_by"] != float64(n-1) {
		t.Fatalf("last writer: %v", r)
	}
	end(t, s)
	c := s.Counts()
	if c.Total.M != 1 || c.ByAgent[n-1].M != 1 || c.Total.Writes != 2*n {
		t.Fatalf("m %d, writes %d", c.Total.M, c.Total.Writes)
	}
	if c.Total.ReadsOfOthers != 1 {
		t.Fatalf("reads of others %d", c.Total.ReadsOfOthers)
	}
}

func TestSFSDeleteAndList(t *testing.T) {
	s := open(t, SFS, 2)
	begin(t, s, 1)
	for _, p := range []string{"data/a", "data/b", "x", "data/c"} {
		call(t, s, 0, ToolWriteFile, fmt.Sprintf(`{"path":%q,"content":[1,2]}`, p))
	}
	if r := call(t, s, 1, ToolDelete, `{"path":"data/a"}`); r["success"] != false {
		t.Fatalf("delete of another agent's same-round write: %v", r)
	}
	call(t, s, 1, ToolWriteFile, `{"path":"tmp","content":1}`)
	if r := call(t, s, 1, ToolDelete, `{"path":"tmp"}`); r["success"] != true {
		t.Fatalf("delete own same-round write: %v", r)
	}
	end(t, s)
	paths := func(r map[string]any) []string {
		var out []string
		for _, f := range r["files"].([]any) {
			out = append(out, f.(map[string]any)["path"].(string))
		}
		return out
	}
	begin(t, s, 2)
	if got := paths(call(t, s, 1, ToolListFiles, `{"prefix":"data/"}`)); !reflect.DeepEqual(got, []string{"data/a", "data/b", "data/c"}) {
		t.Fatalf("prefix listing %v", got)
	}
	if got := paths(call(t, s, 1, ToolListFiles, `{"prefix":7}`)); len(got) != 4 {
		t.Fatalf("non-string prefix is ignored: %v", got)
	}
	if r := call(t, s, 1, ToolDelete, `{"path":"data/a"}`); r["success"] != true {
		t.Fatal(r)
	}
	call(t, s, 1, ToolWriteFile, `{"path":"data/b","content":"new"}`) // rewrite keeps place
	if r := call(t, s, 1, ToolReadFile, `{"path":"data/a"}`); r["success"] != true {
		t.Fatalf("deleted key still visible this round: %v", r)
	}
	end(t, s)
	begin(t, s, 3)
	r := call(t, s, 0, ToolReadFile, `{"path":"data/a"}`)
	if r["success"] != false || r["error"] != "Key not found: data/a" || r["content"] != nil {
		t.Fatalf("read after delete: %v", r)
	}
	call(t, s, 0, ToolWriteFile, `{"path":"data/a"}`) // recreate moves to the end; content defaults to ""
	end(t, s)
	begin(t, s, 4)
	if got := paths(call(t, s, 0, ToolListFiles, ``)); !reflect.DeepEqual(got, []string{"data/b", "x", "data/c", "data/a"}) {
		t.Fatalf("insertion order %v", got)
	}
	if r := call(t, s, 0, ToolReadFile, `{"path":"data/a"}`); r["content"] != "" {
		t.Fatalf("default content %v", r)
	}
	end(t, s)
	var k int
	if err := s.DB().QueryRow(`SELECT count(*) FROM files`).Scan(&k); err != nil || k != 4 {
		t.Fatalf("files in db %d %v", k, err)
	}
	// m: round 1: 4 keys (tmp deleted), round 2: data/b, round 3: data/a.
	if c := s.Counts(); c.Total.M != 6 {
		t.Fatalf("m = %d", c.Total.M)
	}
}

func TestSFSPathValidation(t *testing.T) {
	s := open(t, SFS, 1)
	begin(t, s, 1)
	bad := []string{
		`{"path":"","content":1}`,
		`{"path":"` + strings.Repeat("p", 257) + `","content":1}`,
		`{"path":"a\u0000b","content":1}`,
		`{"content":1}`, // non-string paths: format_test.go
	}
	for _, args := range bad {
		r := call(t, s, 0, ToolWriteFile, args)
		if _, ok := r["error"]; !ok {
			t.Fatalf("%s accepted: %v", args, r)
		}
	}
	for _, args := range []string{`{"path":"../../etc/passwd","content":1}`, `{"path":"/abs","content":1}`, `{"path":1,"content":1}`} {
		if r := call(t, s, 0, ToolWriteFile, args); r["success"] != true {
			t.Fatalf("%s rejected: %v", args, r)
		}
	}
	end(t, s)
	begin(t, s, 2)
	if r := call(t, s, 0, ToolReadFile, `{"path":"1"}`); r["success"] != true {
		t.Fatalf("numeric path: %v", r)
	}
	end(t, s)
	if c := s.Counts(); c.Total.Errors != len(bad) {
		t.Fatalf("errors %d", c.Total.Errors)
	}
}

func TestSubmitAndRejection(t *testing.T) {
	s := open(t, P2P, 2)
	begin(t, s, 1)
	res, done := s.Call(0, ToolSubmit, json.RawMessage(`{"answer": [1, 2.5, "x"]}`))
	if !done || string(res) != `{"status":"submitted"}` {
		t.Fatalf("%s %v", res, done)
	}
	if res, done := s.Call(0, ToolReceive, nil); !done || !strings.Contains(string(res), "already submitted") {
		t.Fatalf("same round: %s %v", res, done)
	}
	if res, done := s.Call(1, ToolWait, nil); !done || string(res) != `{"status":"waiting"}` {
		t.Fatalf("wait %s %v", res, done)
	}
	if res, done := s.Call(1, ToolReceive, nil); !done || !strings.Contains(string(res), "turn already ended") {
		t.Fatalf("after wait: %s %v", res, done)
	}
	end(t, s)
	if res, done := s.Call(1, ToolWait, nil); !done || !strings.Contains(string(res), "no round") {
		t.Fatalf("between rounds: %s %v", res, done)
	}
	begin(t, s, 2)
	if res, done := s.Call(0, ToolSubmit, json.RawMessage(`{"answer":9}`)); !done || !strings.Contains(string(res), "already submitted") {
		t.Fatalf("next round: %s %v", res, done)
	}
	send(t, s, 1, 0, "to a submitted agent is allowed")
	if _, done := s.Call(1, ToolSubmit, nil); !done {
		t.Fatal("submit without answer")
	}
	end(t, s)
	if ans, ok := s.Submitted(0); !ok || string(ans) != `[1,2.5,"x"]` {
		t.Fatalf("answer %s %v", ans, ok)
	}
	if sub, ok := s.Submission(1); !ok || string(sub.Answer) != "null" || sub.Round != 2 {
		t.Fatalf("submission %+v", sub)
	}
	var k int
	if err := s.DB().QueryRow(`SELECT count(*) FROM submissions`).Scan(&k); err != nil || k != 2 {
		t.Fatalf("submissions %d %v", k, err)
	}
	if c := s.Counts(); c.Total.Errors != 3 {
		t.Fatalf("errors %d", c.Total.Errors)
	}
}

func TestProvenanceChain(t *testing.T) {
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		t.Run(string(p), func(t *testing.T) {
			s := open(t, p, 4)
			// round 1: 0 speaks; round 2: 1 hears and speaks; round 3: 2 hears 1.
			begin(t, s, 1)
			switch p {
			case P2P:
				send(t, s, 0, 1, "d0")
			case Broadcast:
				call(t, s, 0, ToolBroadcast, `{"content":"d0"}`)
			case SFS:
				call(t, s, 0, ToolWriteFile, `{"path":"k0","content":"d0"}`)
			}
			end(t, s)
			begin(t, s, 2)
			switch p {
			case P2P:
				receive(t, s, 1)
				send(t, s, 1, 2, "d01")
			case Broadcast:
				receive(t, s, 1)
				call(t, s, 1, ToolBroadcast, `{"content":"d01"}`)
			case SFS:
				call(t, s, 1, ToolReadFile, `{"path":"k0"}`)
				call(t, s, 1, ToolWriteFile, `{"path":"k1","content":"d01"}`)
			}
			s.Call(1, ToolSubmit, json.RawMessage(`{"answer":1}`))
			end(t, s)
			begin(t, s, 3)
			switch p {
			case P2P, Broadcast:
				receive(t, s, 2)
			case SFS:
				call(t, s, 2, ToolReadFile, `{"path":"k1"}`)
			}
			end(t, s)
			for a, want := range [][]int{{0}, {0, 1}, {0, 1, 2}, {3}} {
				if p == Broadcast && a == 2 {
					want = []int{0, 1, 2} // also heard 0 directly
				}
				if got := s.Seen(a); !reflect.DeepEqual(got, want) {
					t.Fatalf("Seen(%d) = %v, want %v", a, got, want)
				}
			}
			if sub, _ := s.Submission(1); !reflect.DeepEqual(sub.Seen, []int{0, 1}) {
				t.Fatalf("submission seen %v", sub.Seen)
			}
			table := map[Protocol]string{P2P: "messages", Broadcast: "broadcasts", SFS: "files"}[p]
			var prov string
			if err := s.DB().QueryRow(`SELECT provenance FROM ` + table + ` WHERE content = '"d01"' OR content = 'd01'`).Scan(&prov); err != nil || prov != "[0,1]" {
				t.Fatalf("stored provenance %q %v", prov, err)
			}
			var seen string
			if err := s.DB().QueryRow(`SELECT seen FROM agents WHERE id = 2`).Scan(&seen); err != nil || seen != "[0,1,2]" {
				t.Fatalf("stored seen %q %v", seen, err)
			}
		})
	}
}

func TestErrorResultsCounted(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "run.db"), P2P, 2, Options{MaxContentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	begin(t, s, 1)
	cases := []struct{ tool, args string }{
		{ToolSend, `{"target_id":1,"content":`},                                    // malformed JSON
		{ToolSend, `[1,2]`},                                                        // not an object
		{ToolSend, `{"target_id":"one","content":"x"}`},                            // bad target
		{ToolSend, `{"target_id":1}`},                                              // missing content
		{ToolSend, `{"target_id":1,"content":"x","cc":2}`},                         // unexpected parameter
		{ToolSend, `{"target_id":1,"content":"` + strings.Repeat("x", 101) + `"}`}, // oversized
		{ToolWriteFile, `{"path":"a","content":1}`},                                // tool of another protocol
		{"no_such_tool", `{}`},                                                     // unknown
		{ToolSend, strings.Repeat(" ", 2*100+4097)},                                // oversized args
		{ToolSubmit, `{"answer":"` + strings.Repeat("x", 200) + `"}`},
	}
	for _, c := range cases {
		res, done := s.Call(0, c.tool, json.RawMessage(c.args))
		var m map[string]any
		if err := json.Unmarshal(res, &m); err != nil || m["error"] == nil || done {
			t.Fatalf("%s %q: %s done=%v", c.tool, c.args, res, done)
		}
	}
	if res, done := s.Call(7, ToolWait, nil); !done || !strings.Contains(string(res), "invalid agent") {
		t.Fatalf("bad agent: %s", res)
	}
	send(t, s, 0, 1, strings.Repeat("y", 100)) // exactly at the limit
	end(t, s)
	c := s.Counts()
	if c.Total.Errors != len(cases) || c.ByAgent[0].Calls["no_such_tool"] != 1 || c.ByAgent[0].Calls[ToolSend] != 8 {
		t.Fatalf("counts %+v", c.Total)
	}
	log, err := s.Log()
	if err != nil {
		t.Fatal(err)
	}
	nerr := 0
	for _, e := range log {
		if e.Error != "" {
			nerr++
		}
		if !json.Valid(e.Args) || !json.Valid(e.Result) {
			t.Fatalf("invalid JSON in log %+v", e)
		}
	}
	if nerr != len(cases) || len(log) != len(cases)+1 {
		t.Fatalf("log rows %d, errors %d", len(log), nerr)
	}
}

func TestOpenRefusesExistingRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.db")
	s, err := Open(path, SFS, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path, SFS, 2, Options{}); err == nil {
		t.Fatal("reopened a run database")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x.db"), "smoke", 2, Options{}); err == nil {
		t.Fatal("unknown protocol accepted")
	}
	m, err := Open(":memory:", P2P, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

// script is a deterministic pseudo-random workload: calls[round][agent].
type scriptCall struct {
	tool string
	args string
}

func makeScript(p Protocol, n, rounds int, seed uint64) [][][]scriptCall {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][][]scriptCall, rounds)
	tools := Tools(p)
	for r := range out {
		out[r] = make([][]scriptCall, n)
		for a := range n {
			k := rng.IntN(6)
			for i := range k {
				var c scriptCall
				switch tools[rng.IntN(len(tools)-2)] {
				case ToolSend:
					c = scriptCall{ToolSend, fmt.Sprintf(`{"target_id":%d,"content":"m%d.%d.%d"}`, rng.IntN(n+1), r, a, i)}
				case ToolBroadcast:
					c = scriptCall{ToolBroadcast, fmt.Sprintf(`{"content":"b%d.%d.%d"}`, r, a, i)}
				case ToolReceive:
					c = scriptCall{ToolReceive, `{}`}
				case ToolList:
					c = scriptCall{ToolList, ``}
				case ToolListFiles:
					c = scriptCall{ToolListFiles, `{"prefix":"k"}`}
				case ToolReadFile:
					c = scriptCall{ToolReadFile, fmt.Sprintf(`{"path":"k%d"}`, rng.IntN(4))}
				case ToolWriteFile:
					c = scriptCall{ToolWriteFile, fmt.Sprintf(`{"path":"k%d","content":{"r":%d,"a":%d}}`, rng.IntN(4), r, a)}
				case ToolDelete:
					c = scriptCall{ToolDelete, fmt.Sprintf(`{"path":"k%d"}`, rng.IntN(4))}
				}
				out[r][a] = append(out[r][a], c)
			}
			if rng.IntN(20) == 0 {
				out[r][a] = append(out[r][a], scriptCall{ToolSubmit, fmt.Sprintf(`{"answer":%d}`, a)})
			} else {
				out[r][a] = append(out[r][a], scriptCall{ToolWait, ``})
			}
		}
	}
	return out
}

// runScript plays the script; concurrent runs each agent's turn in its own
// goroutine, started in a shuffled order with random yields.
func runScript(t *testing.T, p Protocol, n int, script [][][]scriptCall, concurrent bool, seed uint64) (results []string, log []LogEntry, counts Counts, seen [][]int, dump string) {
	s := open(t, p, n)
	res := make([][]string, n)
	rng := rand.New(rand.NewPCG(seed, 2))
	for r, calls := range script {
		begin(t, s, r+1)
		turn := func(a int, yield bool) {
			for _, c := range calls[a] {
				if yield {
					runtime.Gosched()
				}
				out, done := s.Call(a, c.tool, json.RawMessage(c.args))
				res[a] = append(res[a], fmt.Sprintf("%d %s", r+1, out))
				if done {
					break
				}
			}
		}
		if concurrent {
			order := rng.Perm(n)
			var wg sync.WaitGroup
			for _, a := range order {
				wg.Add(1)
				go func() { defer wg.Done(); turn(a, true) }()
			}
			wg.Wait()
		} else {
			for a := range n {
				turn(a, false)
			}
		}
		end(t, s)
	}
	for a := range n {
		results = append(results, strings.Join(res[a], "\n"))
		seen = append(seen, s.Seen(a))
	}
	log, err := s.Log()
	if err != nil {
		t.Fatal(err)
	}
	return results, log, s.Counts(), seen, dumpDB(t, s)
}

// dumpDB renders every table of the run database in a fixed order.
func dumpDB(t *testing.T, s *Store) string {
	var b strings.Builder
	for _, q := range []string{
		`SELECT * FROM meta ORDER BY k`, `SELECT * FROM agents ORDER BY id`,
		`SELECT * FROM messages ORDER BY id`, `SELECT * FROM broadcasts ORDER BY id`,
		`SELECT * FROM file_ops ORDER BY round, agent, seq`, `SELECT * FROM files ORDER BY path`,
		`SELECT * FROM submissions ORDER BY agent`, `SELECT * FROM calls ORDER BY round, agent, seq`,
		`SELECT * FROM tallies ORDER BY round, agent`, `SELECT * FROM rounds ORDER BY round`,
	} {
		rows, err := s.DB().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%q\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

func TestDeterminismAcrossInterleavings(t *testing.T) {
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		t.Run(string(p), func(t *testing.T) {
			const n, rounds = 8, 12
			script := makeScript(p, n, rounds, 7)
			r1, l1, c1, s1, d1 := runScript(t, p, n, script, false, 0)
			for _, seed := range []uint64{1, 2, 3} {
				r2, l2, c2, s2, d2 := runScript(t, p, n, script, true, seed)
				if d1 != d2 {
					t.Fatalf("databases differ (seed %d)", seed)
				}
				if !reflect.DeepEqual(r1, r2) {
					t.Fatalf("results differ (seed %d)", seed)
				}
				if !reflect.DeepEqual(l1, l2) {
					t.Fatalf("logs differ (seed %d)", seed)
				}
				if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(s1, s2) {
					t.Fatalf("counts or provenance differ (seed %d)", seed)
				}
			}
			if len(l1) < n*rounds || c1.Total.Errors == 0 || c1.Total.Reads == 0 || len(d1) < 1000 {
				t.Fatalf("weak script: log %d, counts %+v", len(l1), c1.Total)
			}
			if p != SFS && c1.Total.M == 0 || p == SFS && c1.Total.Writes == 0 {
				t.Fatalf("script sends nothing: %+v", c1.Total)
			}
		})
	}
}

// TestResultsAreNotHTMLEscaped: results are compact JSON with '<', '>'
// and '&' written as themselves, as published (json.Marshal would write
// \u003c, \u003e and \u0026), under every protocol.
func TestResultsAreNotHTMLEscaped(t *testing.T) {
	const content = `x < y & z > w`
	for _, p := range []Protocol{P2P, Broadcast, SFS} {
		s := open(t, p, 2)
		begin(t, s, 1)
		var args string
		tool, read, readArgs := ToolSend, ToolReceive, `{}`
		switch p {
		case P2P:
			args = `{"target_id": 1, "content": "` + content + `"}`
		case Broadcast:
			tool, args = ToolBroadcast, `{"content": "`+content+`"}`
		case SFS:
			tool, args = ToolWriteFile, `{"path": "a&b", "content": "`+content+`"}`
			read, readArgs = ToolReadFile, `{"path": "a&b"}`
		}
		if res, _ := s.Call(0, tool, json.RawMessage(args)); strings.Contains(string(res), "error") {
			t.Fatalf("%s: %s", p, res)
		}
		end(t, s)
		begin(t, s, 2)
		res, _ := s.Call(1, read, json.RawMessage(readArgs))
		if !strings.Contains(string(res), `"content":"`+content+`"`) || strings.Contains(string(res), `\u00`) {
			t.Errorf("%s: %s", p, res)
		}
		end(t, s)
	}
}

// An answer or a file content nested deeper than untrusted.MaxValueDepth
// is refused with a tool error the agent reads (and the log keeps), even
// when it is small: the artifacts indent it, quadratically in the depth.
// The agent can submit a flatter answer after.
func TestDeepValuesRefused(t *testing.T) {
	nest := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	for _, tc := range []struct {
		proto Protocol
		tool  string
		arg   string
	}{{P2P, ToolSubmit, "answer"}, {SFS, ToolWriteFile, "content"}} {
		s, err := Open(filepath.Join(t.TempDir(), "run.db"), tc.proto, 2, Options{})
		if err != nil {
			t.Fatal(err)
		}
		begin(t, s, 1)
		extra := ""
		if tc.tool == ToolWriteFile {
			extra = `"path":"a",`
		}
		call := func(v string) (json.RawMessage, bool) {
			return s.Call(0, tc.tool, json.RawMessage(`{`+extra+`"`+tc.arg+`":`+v+`}`))
		}
		for _, d := range []int{untrusted.MaxValueDepth + 1, 5000} {
			res, done := call(nest(d))
			if done || !strings.Contains(string(res), "nested too deeply") {
				t.Fatalf("%s depth %d: %s done=%v", tc.tool, d, res, done)
			}
		}
		if res, _ := call(nest(untrusted.MaxValueDepth)); strings.Contains(string(res), "error") {
			t.Fatalf("%s at the limit: %s", tc.tool, res)
		}
		end(t, s)
		log, err := s.Log()
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 3 || !strings.Contains(log[0].Error, "nested too deeply") || log[2].Error != "" {
			t.Fatalf("%s log: %+v", tc.tool, log)
		}
		s.Close()
	}
}

// TestDeliveryPositions: a delivery records where its reader got it (after
// the returning call) and where its author wrote it; a submission where it
// was made. The failure labels count reads by these positions.
func TestDeliveryPositions(t *testing.T) {
	for _, p := range []Protocol{P2P, SFS} {
		s := open(t, p, 2)
		begin(t, s, 1)
		s.Call(0, ToolWait, nil) // nothing: agent 1 ends its turn too
		s.Call(1, ToolWait, nil)
		if err := s.EndRound(); err != nil {
			t.Fatal(err)
		}
		begin(t, s, 2)
		if p == P2P {
			s.Call(0, ToolReceive, nil)                                              // call 0
			s.Call(0, ToolSend, json.RawMessage(`{"target_id": 1, "content": "x"}`)) // call 1
		} else {
			s.Call(0, ToolListFiles, nil)                                              // call 0
			s.Call(0, ToolWriteFile, json.RawMessage(`{"path": "a", "content": "x"}`)) // call 1
		}
		s.Call(0, ToolWait, nil)
		s.Call(1, ToolWait, nil)
		if err := s.EndRound(); err != nil {
			t.Fatal(err)
		}
		begin(t, s, 3)
		s.Call(1, ToolWait, json.RawMessage(`{"x": 1}`)) // rejected: call 0, not the end of the turn
		if p == P2P {
			s.Call(1, ToolReceive, nil) // call 1
		} else {
			s.Call(1, ToolReadFile, json.RawMessage(`{"path": "a"}`)) // call 1
		}
		s.Call(1, ToolSubmit, json.RawMessage(`{"answer": 1}`)) // call 2
		ds := s.Deliveries(1)
		if len(ds) != 1 || ds[0].At != (Pos{3, 2}) || ds[0].Written != (Pos{2, 1}) || ds[0].From != 0 {
			t.Errorf("%s: deliveries %+v, want one at {3 2} written at {2 1} by 0", p, ds)
		}
		sub, ok := s.Submission(1)
		if !ok || sub.At != (Pos{3, 2}) {
			t.Errorf("%s: submission %+v, want at {3 2}", p, sub)
		}
		if !ds[0].At.Before(sub.At) || sub.At.Before(Pos{3, 1}) {
			t.Errorf("%s: Pos.Before is wrong", p)
		}
	}
}
