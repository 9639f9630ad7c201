package llmagent_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/llm/llmtest"
	"github.com/coordbench/coordbench/silobench/task"
)

// This file is a scripted test model: an OpenAI-compatible "model" that
// plays a gather strategy through the real prompt and parser path. It
// reads its id and the team size from the system prompt, checks that its
// shard is in the task prompt, writes XML tool calls (or native function
// calls when the request offers tools), and reads the tool results back
// from the conversation. Its only oracle is the computation: once agent 0
// has received every shard intact, it takes the instance's gold answers
// (the model "computes correctly"). All its state is derived from the
// conversation, so it is stateless across requests and deterministic.

// call is one tool call the model makes.
type call struct {
	name string
	args [][2]any // name, value (string: raw XML text; other: JSON value)
}

// observed is one tool result found in the conversation.
type observed struct {
	tool   string
	result json.RawMessage
}

// view is what the model understands of a request.
type view struct {
	id, n    int
	native   bool
	protocol string
	results  []observed
	sent     string // all assistant text and call arguments so far
	prompt   string
}

var (
	idRE      = regexp.MustCompile(`Your agent id is (\d+)\. The team has (\d+) agent`)
	resultRE  = regexp.MustCompile(`(?s)<tool_result>\n<tool>(\w+)</tool>\n<result>(.*?)</result>\n</tool_result>`)
	dataRE    = regexp.MustCompile(`^DATA (\d+) `)
	planRound = "## Planning round"
)

func readView(req llmtest.ChatRequest) (view, bool) {
	var v view
	if len(req.Messages) < 2 {
		return v, false
	}
	m := idRE.FindStringSubmatch(req.Messages[0].Content)
	if m == nil {
		return v, false
	}
	v.id, _ = strconv.Atoi(m[1])
	v.n, _ = strconv.Atoi(m[2])
	v.native = len(req.Tools) > 0
	sys := req.Messages[0].Content
	switch {
	case strings.Contains(sys, "send_message"):
		v.protocol = "p2p"
	case strings.Contains(sys, "broadcast_message"):
		v.protocol = "broadcast"
	default:
		v.protocol = "sfs"
	}
	v.prompt = req.Messages[1].Content
	names := map[string]string{}
	for _, msg := range req.Messages[2:] {
		switch msg.Role {
		case "assistant":
			v.sent += msg.Content
			for _, c := range msg.ToolCalls {
				names[c.ID] = c.Name
				v.sent += c.Name + c.Arguments
			}
		case "tool":
			v.results = append(v.results, observed{names[msg.ToolCallID], json.RawMessage(msg.Content)})
		case "user":
			for _, r := range resultRE.FindAllStringSubmatch(msg.Content, -1) {
				v.results = append(v.results, observed{r[1], json.RawMessage(r[2])})
			}
		}
	}
	return v, true
}

// contents returns the message contents (p2p/broadcast) or file contents
// (sfs, as strings or JSON text) the agent has received so far.
func (v view) contents() []string {
	var out []string
	for _, o := range v.results {
		switch o.tool {
		case "receive_messages":
			var r struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if json.Unmarshal(o.result, &r) == nil {
				for _, m := range r.Messages {
					out = append(out, m.Content)
				}
			}
		case "read_file":
			var r struct {
				Success bool            `json:"success"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(o.result, &r) == nil && r.Success {
				var s string
				if json.Unmarshal(r.Content, &s) == nil {
					out = append(out, s)
				} else {
					out = append(out, "ANSWERS "+string(r.Content))
				}
			}
		}
	}
	return out
}

// gather is the correct strategy: everyone ships its shard to agent 0,
// which computes every agent's answer and ships the answers back.
// wrong, if set, changes agent i's submitted answer.
type gather struct {
	in    *task.Instance
	wrong func(id int, ans json.RawMessage) json.RawMessage
}

func (g gather) decide(v view) []call {
	shard := g.in.ShardText(v.id)
	if !strings.Contains(v.prompt, shard) {
		return nil // not our instance: reply without a call
	}
	recv := call{name: "receive_messages"}
	wait := call{name: "wait"}
	data := fmt.Sprintf("DATA %d %s", v.id, shard)
	got := v.contents()
	if strings.Contains(v.prompt, planRound) && !strings.Contains(v.sent, "PLAN") {
		return g.talk(v, "PLAN gather at agent 0", recv, wait)
	}
	if v.id != 0 {
		for _, c := range got {
			if rest, ok := strings.CutPrefix(c, "ANSWERS "); ok {
				var all []json.RawMessage
				if json.Unmarshal([]byte(rest), &all) == nil && len(all) == v.n {
					return []call{g.submit(v.id, all[v.id])}
				}
			}
		}
		if !strings.Contains(v.sent, "DATA ") {
			return g.talk(v, data, recv, wait)
		}
		if v.protocol == "sfs" {
			return []call{{name: "read_file", args: [][2]any{{"path", "answers"}}}, wait}
		}
		return []call{recv, wait}
	}
	have := map[int]string{0: shard}
	for _, c := range got {
		if m := dataRE.FindStringSubmatch(c); m != nil {
			i, _ := strconv.Atoi(m[1])
			have[i] = strings.TrimPrefix(c, m[0])
		}
	}
	for i := range v.n {
		if have[i] != g.in.ShardText(i) {
			if v.protocol == "sfs" {
				var calls []call
				for j := 1; j < v.n; j++ {
					if have[j] == "" {
						calls = append(calls, call{name: "read_file", args: [][2]any{{"path", fmt.Sprintf("data_%d", j)}}})
					}
				}
				return append(calls, wait)
			}
			return []call{recv, wait}
		}
	}
	answers, _ := json.Marshal(g.in.Expected)
	var calls []call
	if v.n > 1 {
		calls = g.talk(v, "ANSWERS "+string(answers))
	}
	return append(calls, g.submit(0, g.in.Expected[0]))
}

// talk ships text to agent 0 (or from agent 0 to everyone) with the
// protocol's tool, then adds the extra calls.
func (g gather) talk(v view, text string, extra ...call) []call {
	var calls []call
	switch v.protocol {
	case "p2p":
		if v.id != 0 {
			calls = append(calls, call{name: "send_message", args: [][2]any{{"target_id", "0"}, {"content", text}}})
		} else {
			for j := 1; j < v.n; j++ {
				calls = append(calls, call{name: "send_message", args: [][2]any{{"target_id", strconv.Itoa(j)}, {"content", text}}})
			}
		}
	case "broadcast":
		calls = append(calls, call{name: "broadcast_message", args: [][2]any{{"content", text}}})
	default:
		path := fmt.Sprintf("data_%d", v.id)
		content := any(text)
		if rest, ok := strings.CutPrefix(text, "ANSWERS "); ok {
			path, content = "answers", json.RawMessage(rest)
		} else if strings.HasPrefix(text, "PLAN") {
			path = fmt.Sprintf("plan_%d", v.id)
		}
		calls = append(calls, call{name: "write_file", args: [][2]any{{"path", path}, {"content", content}}})
	}
	return append(calls, extra...)
}

func (g gather) submit(id int, ans json.RawMessage) call {
	if g.wrong != nil {
		ans = g.wrong(id, ans)
	}
	return call{name: "submit_result", args: [][2]any{{"answer", ans}}}
}

// reply renders calls in the request's format: XML in the content, or
// native function calls.
func reply(v view, calls []call) llmtest.Reply {
	if len(calls) == 0 {
		return llmtest.Text("I am not sure what to do.")
	}
	if v.native {
		var tcs []llmtest.ToolCall
		for k, c := range calls {
			args := map[string]any{}
			for _, a := range c.args {
				args[a[0].(string)] = nativeValue(a[1])
			}
			b, _ := json.Marshal(args)
			tcs = append(tcs, llmtest.ToolCall{ID: fmt.Sprintf("call_%d", k), Name: c.name, Arguments: string(b)})
		}
		return llmtest.Calls(tcs...)
	}
	var b strings.Builder
	b.WriteString("Plan: follow the gather strategy.\n")
	for _, c := range calls {
		b.WriteString("<tool_call>\n<tool>" + c.name + "</tool>\n<parameters>\n")
		for _, a := range c.args {
			fmt.Fprintf(&b, "<%s>%s</%s>\n", a[0], xmlValue(a[1]), a[0])
		}
		b.WriteString("</parameters>\n</tool_call>\n")
	}
	return llmtest.Text(b.String())
}

// xmlValue writes a value so that the published parser reads it back:
// strings bare, JSON strings unquoted, other JSON as is.
func xmlValue(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.RawMessage:
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s
		}
		return string(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// nativeValue types a value for function-call arguments.
func nativeValue(v any) any {
	if s, ok := v.(string); ok {
		if i, err := strconv.Atoi(s); err == nil {
			return i
		}
	}
	return v
}

// handler serves the strategy; requests that are not for a known agent get
// a reply without tool calls.
func (g gather) handler(req llmtest.ChatRequest) llmtest.Reply {
	v, ok := readView(req)
	if !ok {
		return llmtest.Text("no agent here")
	}
	return reply(v, g.decide(v))
}
