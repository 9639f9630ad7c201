package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// Tool names.
const (
	ToolSend      = "send_message"
	ToolReceive   = "receive_messages"
	ToolBroadcast = "broadcast_message"
	ToolList      = "list_agents"
	ToolListFiles = "list_files"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolDelete    = "delete_file"
	ToolWait      = "wait"
	ToolSubmit    = "submit_result"
)

// Tools returns the tool names of protocol p, in the published order.
func Tools(p Protocol) []string {
	switch p {
	case P2P:
		return []string{ToolSend, ToolReceive, ToolWait, ToolSubmit}
	case Broadcast:
		return []string{ToolBroadcast, ToolReceive, ToolList, ToolWait, ToolSubmit}
	case SFS:
		return []string{ToolListFiles, ToolReadFile, ToolWriteFile, ToolDelete, ToolWait, ToolSubmit}
	}
	return nil
}

// maxToolName bounds the tool name kept in the log and the tallies.
const maxToolName = 64

// callErr is a rejected call: an error result for the agent, never a Go error.
type callErr string

type errResult struct {
	Error string `json:"error"`
}

type statusResult struct {
	Status string `json:"status"`
}

type sendResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

type inMsg struct {
	From      int    `json:"from"`
	Content   string `json:"content"`
	Timestamp int    `json:"timestamp"`
}

type msgsResult struct {
	Messages []inMsg `json:"messages"`
}

type bcastResult struct {
	Success     bool   `json:"success"`
	BroadcastID string `json:"broadcast_id"`
}

type agentsResult struct {
	AgentIDs []int `json:"agent_ids"`
	Total    int   `json:"total"`
}

type fileInfo struct {
	Path            string `json:"path"`
	ModifiedBy      int    `json:"modified_by"`
	ModifiedAtRound int    `json:"modified_at_round"`
}

type filesResult struct {
	Files []fileInfo `json:"files"`
}

type fileMeta struct {
	ModifiedBy      int `json:"modified_by"`
	ModifiedAtRound int `json:"modified_at_round"`
}

type readHit struct {
	Success  bool            `json:"success"`
	Content  json.RawMessage `json:"content"`
	Metadata fileMeta        `json:"metadata"`
}

type readMiss struct {
	Success  bool            `json:"success"`
	Content  json.RawMessage `json:"content"`
	Metadata struct{}        `json:"metadata"`
	Error    string          `json:"error"`
}

type pathResult struct {
	Success bool   `json:"success"`
	Path    string `json:"path,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Call executes one tool call in agent's turn of the current round and
// returns the result as compact JSON. done reports that the agent's turn is
// over: wait and submit_result end it, and so does any call from an agent
// whose turn already ended, that has submitted, or that is made when no round
// is open (those are rejected). A malformed call, an unknown tool or
// oversized content yields an error result {"error": "..."}, is counted, and
// does not end the turn. Call never panics on bad input and never fails the
// run.
func (s *Store) Call(agent int, tool string, args json.RawMessage) (result json.RawMessage, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case agent < 0 || agent >= s.n:
		return mustJSON(errResult{fmt.Sprintf("invalid agent id %d", agent)}), true
	case s.broken != nil:
		return mustJSON(errResult{"store failed: " + s.broken.Error()}), true
	case !s.open:
		return mustJSON(errResult{"no round in progress"}), true
	}
	a := s.agents[agent]
	if len(tool) > maxToolName {
		tool = truncUTF8(tool, maxToolName)
	}
	seq := a.seq
	a.seq++
	a.tally.call(tool)

	var res any
	var cerr callErr
	switch {
	case a.submitted:
		cerr, done = "agent already submitted", true
	case a.turnDone:
		cerr, done = "turn already ended this round", true
	case len(args) > s.opts.MaxArgsBytes:
		cerr = callErr(fmt.Sprintf("arguments too large: %d bytes (max %d)", len(args), s.opts.MaxArgsBytes))
	default:
		res, done, cerr = s.exec(a, seq, tool, args)
	}
	if cerr != "" {
		if res == nil {
			res = errResult{string(cerr)}
		}
		a.tally.Errors++
	}
	if done {
		a.turnDone = true
	}
	result = mustJSON(res)
	a.log = append(a.log, LogEntry{
		Round: s.round, Agent: agent, Seq: seq, Tool: tool,
		Args: s.logArgs(args), Result: result, Error: string(cerr),
	})
	return result, done
}

// logArgs renders args for the log: compact JSON, or a JSON string of the
// raw text if it is not valid JSON, or a size note if it is oversized.
func (s *Store) logArgs(args json.RawMessage) json.RawMessage {
	if len(args) > s.opts.MaxArgsBytes {
		return mustJSON(map[string]any{"oversized_args_bytes": len(args)})
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage(`{}`)
	}
	var buf bytes.Buffer
	if json.Valid(args) && json.Compact(&buf, args) == nil {
		return buf.Bytes()
	}
	return mustJSON(strings.ToValidUTF8(string(args), "\uFFFD"))
}

// mustJSON encodes a tool result (or a logged argument) as compact JSON
// without HTML escaping: '<', '>' and '&' stay as they are, as in the
// published results (json.Marshal would write \u003c, \u003e, \u0026,
// and the model would read those six-character escapes).
func mustJSON(v any) json.RawMessage {
	b, err := CompactJSON(v)
	if err != nil { // not reachable with the result types above
		b, _ = CompactJSON(errResult{"internal: " + err.Error()})
	}
	return b
}

// CompactJSON is json.Marshal without HTML escaping: compact JSON in which
// '<', '>' and '&' are written as themselves.
func CompactJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// params lists the parameters each tool accepts.
var params = map[string][]string{
	ToolSend:      {"target_id", "content"},
	ToolReceive:   {},
	ToolBroadcast: {"content"},
	ToolList:      {},
	ToolListFiles: {"prefix"},
	ToolReadFile:  {"path"},
	ToolWriteFile: {"path", "content"},
	ToolDelete:    {"path"},
	ToolWait:      {},
	ToolSubmit:    {"answer"},
	ToolPropose:   {"value"},
	ToolVote:      {"proposal_id", "agree"},
}

func (s *Store) hasTool(tool string) bool {
	for _, t := range ToolsWith(s.proto, s.cons != nil) {
		if t == tool {
			return true
		}
	}
	return false
}

func parseArgs(tool string, raw json.RawMessage) (map[string]json.RawMessage, callErr) {
	m := map[string]json.RawMessage{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return m, ""
	}
	if raw[0] != '{' {
		return nil, "malformed arguments: not a JSON object"
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, callErr("malformed arguments: " + err.Error())
	}
	allowed := params[tool]
	for k := range m {
		ok := false
		for _, p := range allowed {
			ok = ok || p == k
		}
		if !ok {
			return nil, callErr(fmt.Sprintf("%s: unexpected parameter %q", tool, truncUTF8(k, 64)))
		}
	}
	return m, ""
}

func (s *Store) exec(a *agentState, seq int, tool string, raw json.RawMessage) (any, bool, callErr) {
	if !s.hasTool(tool) {
		return nil, false, callErr(fmt.Sprintf("unknown tool %q for protocol %s", tool, s.proto))
	}
	args, cerr := parseArgs(tool, raw)
	if cerr != "" {
		return nil, false, cerr
	}
	switch tool {
	case ToolWait:
		return statusResult{"waiting"}, true, ""
	case ToolSubmit:
		ans := json.RawMessage("null")
		if v, ok := args["answer"]; ok {
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return nil, false, callErr("malformed answer: " + err.Error())
			}
			ans = buf.Bytes()
		}
		if cerr := s.checkValue("answer", ans, len(ans)); cerr != "" {
			return nil, false, cerr
		}
		a.submitted, a.newSub = true, true
		a.sub = Submission{Answer: ans, Round: s.round, At: Pos{s.round, seq}, Seen: a.seen.list()}
		return statusResult{"submitted"}, true, ""
	case ToolSend:
		return s.send(a, seq, args)
	case ToolPropose:
		return s.propose(a, seq, args)
	case ToolVote:
		return s.vote(a, seq, args)
	case ToolBroadcast:
		content, cerr := s.textContent(args)
		if cerr != "" {
			return nil, false, cerr
		}
		a.out = append(a.out, &message{round: s.round, sender: a.id, seq: seq, to: -1, content: content, prov: a.seen.clone()})
		a.tally.MessagesSent++
		a.tally.BytesSent += int64(len(content))
		a.tally.M++
		return bcastResult{true, fmt.Sprintf("r%d-a%d-s%d", s.round, a.id, seq)}, false, ""
	case ToolReceive:
		a.tally.Reads++
		out := msgsResult{Messages: []inMsg{}}
		if s.proto == P2P {
			for _, m := range a.inbox {
				out.Messages = append(out.Messages, inMsg{m.sender, m.content, m.round})
				a.seen.merge(m.prov)
				a.got = append(a.got, delivery{round: s.round, after: seq + 1, msg: m})
				a.readIDs = append(a.readIDs, m.id)
			}
			a.inbox = nil
		} else {
			for _, m := range s.bcasts[a.cursor:] {
				if m.sender == a.id {
					continue
				}
				out.Messages = append(out.Messages, inMsg{m.sender, m.content, m.round})
				a.seen.merge(m.prov)
				a.got = append(a.got, delivery{round: s.round, after: seq + 1, msg: m})
			}
			if a.cursor != len(s.bcasts) {
				a.cursor, a.curMove = len(s.bcasts), true
			}
		}
		if n := len(out.Messages); n > 0 {
			a.tally.Received += n
			a.seenDirty = true
		}
		return out, false, ""
	case ToolList:
		ids := make([]int, s.n)
		for i := range ids {
			ids[i] = i
		}
		return agentsResult{ids, s.n}, false, ""
	case ToolListFiles:
		prefix := ""
		if v, ok := args["prefix"]; ok {
			_ = json.Unmarshal(v, &prefix) // a non-string prefix is ignored, as published
		}
		a.tally.Reads++
		out := filesResult{Files: []fileInfo{}}
		for _, p := range s.order {
			if strings.HasPrefix(p, prefix) {
				e := s.files[p]
				out.Files = append(out.Files, fileInfo{p, e.modifiedBy, e.round})
			}
		}
		return out, false, ""
	case ToolReadFile:
		p, cerr := s.pathArg(args)
		if cerr != "" {
			return nil, false, cerr
		}
		a.tally.Reads++
		e, ok := s.files[p]
		if !ok {
			return readMiss{Content: json.RawMessage("null"), Error: "Key not found: " + p}, false, ""
		}
		a.tally.Received++
		if e.modifiedBy != a.id {
			a.tally.ReadsOfOthers++
		}
		a.seen.merge(e.prov)
		a.seenDirty = true
		a.got = append(a.got, delivery{round: s.round, after: seq + 1, file: e})
		return readHit{true, e.content, fileMeta{e.modifiedBy, e.round}}, false, ""
	case ToolWriteFile:
		p, cerr := s.pathArg(args)
		if cerr != "" {
			return nil, false, cerr
		}
		content := json.RawMessage(`""`) // published default
		if v, ok := args["content"]; ok {
			c, err := fileContent(v, s.opts.MessageFormat)
			if err != nil {
				return nil, false, callErr("malformed content: " + err.Error())
			}
			content = c
		}
		if cerr := s.checkValue("content", content, contentSize(content)); cerr != "" {
			return nil, false, cerr
		}
		a.ops = append(a.ops, &fileOp{seq: seq, path: p, content: content, prov: a.seen.clone()})
		a.tally.Writes++
		a.tally.BytesSent += int64(contentSize(content))
		return pathResult{Success: true, Path: p}, false, ""
	case ToolDelete:
		p, cerr := s.pathArg(args)
		if cerr != "" {
			return nil, false, cerr
		}
		// Exists in the caller's view: the round-start snapshot plus its
		// own earlier writes and deletes of this round.
		_, exists := s.files[p]
		for _, op := range a.ops {
			if op.path == p {
				exists = !op.del
			}
		}
		if !exists {
			return pathResult{Success: false, Error: "Key not found: " + p}, false, ""
		}
		a.ops = append(a.ops, &fileOp{seq: seq, del: true, path: p})
		a.tally.Writes++
		return pathResult{Success: true, Path: p}, false, ""
	}
	return nil, false, callErr("unknown tool " + tool) // not reachable
}

// checkValue bounds a JSON value an agent hands the store (an answer, a
// file's content) of the given size: MaxContentBytes, and a nesting depth
// of untrusted.MaxValueDepth, because the artifacts indent it (result.json)
// and indentation grows with the square of the depth (a 10 kB answer 5,000
// levels deep wrote a 150 MB result.json).
func (s *Store) checkValue(what string, v json.RawMessage, size int) callErr {
	if size > s.opts.MaxContentBytes {
		return s.tooLarge(what, size)
	}
	if d := untrusted.JSONDepth(v); d > untrusted.MaxValueDepth {
		return callErr(fmt.Sprintf("%s nested too deeply: %d levels of lists and objects (max %d); send a flatter value",
			what, d, untrusted.MaxValueDepth))
	}
	return ""
}

func (s *Store) tooLarge(what string, n int) callErr {
	return callErr(fmt.Sprintf("%s too large: %d bytes (max %d)", what, n, s.opts.MaxContentBytes))
}

func (s *Store) send(a *agentState, seq int, args map[string]json.RawMessage) (any, bool, callErr) {
	v, ok := args["target_id"]
	if !ok {
		return nil, false, "send_message: missing parameter target_id"
	}
	target, err := pyInt(v)
	if err != nil {
		return nil, false, callErr("send_message: target_id: " + err.Error())
	}
	content, cerr := s.textContent(args)
	if cerr != "" {
		return nil, false, cerr
	}
	if target < 0 || target >= int64(s.n) {
		return sendResult{false, "invalid target"}, false, callErr(fmt.Sprintf("invalid target %d", target))
	}
	if int(target) == a.id {
		return sendResult{false, "cannot send a message to yourself"}, false, "cannot send to self"
	}
	a.out = append(a.out, &message{round: s.round, sender: a.id, seq: seq, to: int(target), content: content, prov: a.seen.clone()})
	a.tally.MessagesSent++
	a.tally.BytesSent += int64(len(content))
	a.tally.M++
	return sendResult{true, fmt.Sprintf("Message sent to agent %d", target)}, false, ""
}

// textContent reads the required content of a message or broadcast: a JSON
// string as is, any other JSON value converted by the message format
// (messageText).
func (s *Store) textContent(args map[string]json.RawMessage) (string, callErr) {
	v, ok := args["content"]
	if !ok {
		return "", "missing parameter content"
	}
	t, err := messageText(v, s.opts.MessageFormat)
	if err != nil {
		return "", callErr("malformed content: " + err.Error())
	}
	if len(t) > s.opts.MaxContentBytes {
		return "", s.tooLarge("content", len(t))
	}
	return t, ""
}

// contentSize is the size charged for a JSON value: the UTF-8 bytes of a
// string's text, the compact encoding of anything else.
func contentSize(v json.RawMessage) int {
	var str string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &str) == nil {
		return len(str)
	}
	return len(v)
}

// pathArg validates an sfs path: a plain key, not a filesystem path. A
// value that is not a string is converted by the message format (pathText);
// the path must be non-empty valid UTF-8 without NUL, at most MaxPathBytes.
func (s *Store) pathArg(args map[string]json.RawMessage) (string, callErr) {
	v, ok := args["path"]
	if !ok {
		return "", "missing parameter path"
	}
	p, ok := jsonString(v)
	if !ok {
		var cerr callErr
		if p, cerr = pathText(v, s.opts.MessageFormat); cerr != "" {
			return "", cerr
		}
	}
	switch {
	case p == "":
		return "", "invalid path: empty"
	case len(p) > s.opts.MaxPathBytes:
		return "", callErr(fmt.Sprintf("invalid path: %d bytes (max %d)", len(p), s.opts.MaxPathBytes))
	case strings.IndexByte(p, 0) >= 0:
		return "", "invalid path: contains NUL"
	case !utf8.ValidString(p):
		return "", "invalid path: not valid UTF-8"
	}
	return p, ""
}

// pyInt converts like Python's int(): integers, floats (truncated), bools,
// and strings holding an integer (surrounding space allowed).
func pyInt(v json.RawMessage) (int64, error) {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return 0, fmt.Errorf("malformed value")
	}
	switch t := x.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, nil
		}
		f, err := t.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
			return 0, fmt.Errorf("not an integer: %s", truncUTF8(t.String(), 32))
		}
		return int64(f), nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(strings.ReplaceAll(t, "_", "")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("not an integer: %q", truncUTF8(t, 32))
		}
		return i, nil
	}
	return 0, fmt.Errorf("not an integer")
}

func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
