// Package silogather is a scripted chat model that plays the gather strategy
// of SILO-BENCH through the real LLM-agent path: it reads the conversation
// an llmagent sends to an OpenAI-compatible endpoint and answers with the
// tool calls a competent model would make.
//
// The strategy: every agent ships its shard to agent 0 ("DATA i <shard>");
// agent 0, once it holds every shard, computes every agent's answer, ships
// them back ("ANSWERS [...]") and submits its own; the others submit theirs
// once the answers arrive. The model reads its id and the team size from
// the system prompt, the protocol from the tools it names, its shard from
// the task prompt (the text under "**Your Data**", see [PromptShard]), and
// the tool results from the conversation. It writes XML tool calls, or
// native function calls when the request offers tools. All its state is
// derived from the conversation, so it is stateless across requests and
// deterministic.
//
// With the consensus scaffold (its tools in the system prompt) agent 0
// proposes the answers instead of shipping them and the others vote for
// the proposal and submit it (consensus.go). [HastyPolicy] is a sibling
// whose agents other than 0 submit prematurely (Model.Hasty), so that a
// mixed team of the two is told apart per model.
//
// The computation is [Model.Solve]: [PromptSolver] computes the answers from
// the task prompt and the shard texts alone (any task of the generated
// benchmark); tests may plug in an instance's gold answers instead.
//
// Serve it with stubmodel.NewServer(m.Handle) in tests, or with
// stubmodel.Handler(m.Handle) behind any http.Server; [Policy] is the
// stub policy silo-gather (coordbench llm stub --policy silo-gather).
// It lives beside package stubmodel, not under silo/, because it is a
// model a stub plays; it imports SILO-BENCH's tasks, which stubmodel must
// not.
package silogather

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/coordbench/coordbench/llm/stubmodel"
)

// Model is the gather strategy with a pluggable computation.
type Model struct {
	// Solve computes every agent's answer (one per agent, in id order) from
	// agent 0's task prompt and the shard texts of all agents, in id order,
	// as the prompts show them. An error makes agent 0 say so and share,
	// and submit, null answers: the run fails with wrong answers.
	Solve func(taskPrompt string, shardTexts []string) ([]json.RawMessage, error)
	// Wrong, if set, changes agent id's submitted answer.
	Wrong func(id int, ans json.RawMessage) json.RawMessage
	// Hasty makes the agents other than 0 impatient (the stub policy
	// silo-hasty): one that has shipped its shard and has no answer by
	// its next turn submits the answer over its own shard alone, a
	// premature submission, unless the consensus helper is on, in which
	// case it waits for a proposal as the others do (consensus.go).
	Hasty bool
}

// Arg is one argument of a tool call. A string Value is written as raw
// text (XML) or, if it is an integer, as a JSON number (native calls); a
// json.RawMessage is written as is; anything else as its JSON encoding.
type Arg struct {
	Name  string
	Value any
}

// Call is one tool call the model makes.
type Call struct {
	Name string
	Args []Arg
}

// Observed is one tool result found in the conversation.
type Observed struct {
	Tool   string
	Result json.RawMessage
}

// View is what the model understands of a request.
type View struct {
	ID, N    int
	Native   bool   // the request offers tools: answer with function calls
	Protocol string // "p2p", "broadcast" or "sfs"
	Results  []Observed
	Sent     string // all assistant text and call arguments so far
	Prompt   string // the first user message: the task prompt
	// Consensus: the system prompt offers the consensus helper's tools.
	Consensus bool
}

var (
	idRE      = regexp.MustCompile(`Your agent id is (\d+)\.(?: The team has (\d+) agent)?`)
	resultRE  = regexp.MustCompile(`(?s)<tool_result>\n<tool>(\w+)</tool>\n<result>(.*?)</result>\n</tool_result>`)
	dataRE    = regexp.MustCompile(`^DATA (\d+) `)
	planRound = "## Planning round"
)

// ReadView decodes a request; false if it is not an agent's conversation
// (no system prompt naming the agent, or no task prompt).
func ReadView(req stubmodel.ChatRequest) (View, bool) {
	var v View
	if len(req.Messages) < 2 {
		return v, false
	}
	m := idRE.FindStringSubmatch(req.Messages[0].Content)
	if m == nil {
		return v, false
	}
	v.ID, _ = strconv.Atoi(m[1])
	v.N = 1 // a single agent's prompt names no team size
	if m[2] != "" {
		v.N, _ = strconv.Atoi(m[2])
	}
	v.Native = len(req.Tools) > 0
	sys := req.Messages[0].Content
	switch {
	case strings.Contains(sys, "send_message"):
		v.Protocol = "p2p"
	case strings.Contains(sys, "broadcast_message"):
		v.Protocol = "broadcast"
	default:
		v.Protocol = "sfs"
	}
	v.Prompt = req.Messages[1].Content
	v.Consensus = strings.Contains(sys, "propose_answer")
	names := map[string]string{}
	for _, msg := range req.Messages[2:] {
		switch msg.Role {
		case "assistant":
			v.Sent += msg.Content
			for _, c := range msg.ToolCalls {
				names[c.ID] = c.Name
				v.Sent += c.Name + c.Arguments
			}
		case "tool":
			v.Results = append(v.Results, Observed{names[msg.ToolCallID], json.RawMessage(msg.Content)})
		case "user":
			for _, r := range resultRE.FindAllStringSubmatch(msg.Content, -1) {
				v.Results = append(v.Results, Observed{r[1], json.RawMessage(r[2])})
			}
		}
	}
	return v, true
}

// Contents returns the message contents (p2p/broadcast) or file contents
// (sfs: strings as they are, other JSON as "ANSWERS <json>") the agent has
// received so far.
func (v View) Contents() []string {
	var out []string
	for _, o := range v.Results {
		switch o.Tool {
		case "receive_messages":
			var r struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if json.Unmarshal(o.Result, &r) == nil {
				for _, m := range r.Messages {
					out = append(out, m.Content)
				}
			}
		case "read_file":
			var r struct {
				Success bool            `json:"success"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(o.Result, &r) == nil && r.Success {
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

// PromptShard returns the agent's shard as a task prompt shows it: the
// text after the "**Your Data**: …" line, up to the blank line before
// "**Algorithm**". False if the prompt has no such section.
func PromptShard(prompt string) (string, bool) {
	_, rest, ok := strings.Cut(prompt, "**Your Data**:")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "\n")
	if !ok {
		return "", false
	}
	end := strings.Index(rest, "\n\n**Algorithm**")
	if end < 0 || end == 0 {
		return "", false
	}
	return rest[:end], true
}

// Handle answers one request; requests that are not an agent's turn get a
// reply without tool calls.
func (m Model) Handle(req stubmodel.ChatRequest) stubmodel.Reply {
	v, ok := ReadView(req)
	if !ok {
		return stubmodel.Text("no agent here")
	}
	calls, note := m.decide(v)
	return render(v, calls, note)
}

func (m Model) decide(v View) ([]Call, string) {
	shard, ok := PromptShard(v.Prompt)
	if !ok {
		return nil, "" // not a task prompt we understand: reply without a call
	}
	recv := Call{Name: "receive_messages"}
	if v.Protocol == "sfs" { // no inbox: reading happens through files
		recv = Call{Name: "list_files"}
	}
	wait := Call{Name: "wait"}
	data := fmt.Sprintf("DATA %d %s", v.ID, shard)
	got := v.Contents()
	if strings.Contains(v.Prompt, planRound) && !strings.Contains(v.Sent, "PLAN") {
		return m.talk(v, "PLAN gather at agent 0", recv, wait), ""
	}
	if v.Consensus && v.ID != 0 {
		if calls, ok := m.adopt(v); ok {
			return calls, ""
		}
	}
	if v.ID != 0 {
		for _, c := range got {
			if rest, ok := strings.CutPrefix(c, "ANSWERS "); ok {
				var all []json.RawMessage
				if json.Unmarshal([]byte(rest), &all) == nil && len(all) == v.N {
					return []Call{m.submit(v.ID, all[v.ID])}, ""
				}
				var same struct {
					All json.RawMessage `json:"all"`
				}
				if json.Unmarshal([]byte(rest), &same) == nil && same.All != nil {
					return []Call{m.submit(v.ID, same.All)}, ""
				}
			}
		}
		if !strings.Contains(v.Sent, "DATA ") {
			return m.talk(v, data, recv, wait), ""
		}
		if m.Hasty && !v.Consensus {
			return []Call{m.submit(v.ID, m.local(v.Prompt, shard))}, ""
		}
		if v.Protocol == "sfs" {
			return []Call{{Name: "read_file", Args: []Arg{{"path", "answers"}}}, wait}, ""
		}
		return []Call{recv, wait}, ""
	}
	have := map[int]string{0: shard}
	for _, c := range got {
		if mm := dataRE.FindStringSubmatch(c); mm != nil {
			i, _ := strconv.Atoi(mm[1])
			have[i] = strings.TrimPrefix(c, mm[0])
		}
	}
	for i := range v.N {
		if _, ok := have[i]; !ok {
			if v.Protocol == "sfs" {
				var calls []Call
				for j := 1; j < v.N; j++ {
					if _, ok := have[j]; !ok {
						calls = append(calls, Call{Name: "read_file", Args: []Arg{{"path", fmt.Sprintf("data_%d", j)}}})
					}
				}
				return append(calls, wait), ""
			}
			return []Call{recv, wait}, ""
		}
	}
	texts := make([]string, v.N)
	for i := range texts {
		texts[i] = have[i]
	}
	var answers []json.RawMessage
	var err error
	if m.Solve == nil {
		err = fmt.Errorf("no solver")
	} else {
		answers, err = m.Solve(v.Prompt, texts)
		if err == nil && len(answers) != v.N {
			err = fmt.Errorf("%d answers for %d agents", len(answers), v.N)
		}
	}
	note := ""
	if err != nil {
		note = "I could not compute the answer (" + err.Error() + "); submitting null."
		answers = make([]json.RawMessage, v.N)
		for i := range answers {
			answers[i] = json.RawMessage("null")
		}
	}
	if v.Consensus && v.N > 1 {
		return m.lead(v, answers), note
	}
	// One answer for everyone (a global task) is shipped once, so that the
	// message stays small at large N; per-agent answers as a list.
	all, _ := json.Marshal(answers)
	if sameAnswers(answers) {
		all, _ = json.Marshal(map[string]json.RawMessage{"all": answers[0]})
	}
	var calls []Call
	if v.N > 1 {
		calls = m.talk(v, "ANSWERS "+string(all))
	}
	return append(calls, m.submit(0, answers[0])), note
}

// talk ships text to agent 0 (or from agent 0 to everyone) with the
// protocol's tool, then adds the extra calls.
func (m Model) talk(v View, text string, extra ...Call) []Call {
	var calls []Call
	switch v.Protocol {
	case "p2p":
		if v.ID != 0 {
			calls = append(calls, Call{Name: "send_message", Args: []Arg{{"target_id", "0"}, {"content", text}}})
		} else {
			for j := 1; j < v.N; j++ {
				calls = append(calls, Call{Name: "send_message", Args: []Arg{{"target_id", strconv.Itoa(j)}, {"content", text}}})
			}
		}
	case "broadcast":
		calls = append(calls, Call{Name: "broadcast_message", Args: []Arg{{"content", text}}})
	default:
		path := fmt.Sprintf("data_%d", v.ID)
		content := any(text)
		if rest, ok := strings.CutPrefix(text, "ANSWERS "); ok {
			path, content = "answers", json.RawMessage(rest)
		} else if strings.HasPrefix(text, "PLAN") {
			path = fmt.Sprintf("plan_%d", v.ID)
		}
		calls = append(calls, Call{Name: "write_file", Args: []Arg{{"path", path}, {"content", content}}})
	}
	return append(calls, extra...)
}

func (m Model) submit(id int, ans json.RawMessage) Call {
	if m.Wrong != nil {
		ans = m.Wrong(id, ans)
	}
	return Call{Name: "submit_result", Args: []Arg{{"answer", ans}}}
}

// Render writes calls in the request's format: XML in the content, or
// native function calls. No calls give a prose reply without a call.
func Render(v View, calls []Call) stubmodel.Reply { return render(v, calls, "") }

func render(v View, calls []Call, note string) stubmodel.Reply {
	if len(calls) == 0 {
		return stubmodel.Text("I am not sure what to do.")
	}
	if v.Native {
		var tcs []stubmodel.ToolCall
		for k, c := range calls {
			args := map[string]any{}
			for _, a := range c.Args {
				args[a.Name] = nativeValue(a.Value)
			}
			b, _ := json.Marshal(args)
			tcs = append(tcs, stubmodel.ToolCall{ID: fmt.Sprintf("call_%d", k), Name: c.Name, Arguments: string(b)})
		}
		r := stubmodel.Calls(tcs...)
		r.Content = note
		return r
	}
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	b.WriteString("Plan: follow the gather strategy.\n")
	for _, c := range calls {
		b.WriteString("<tool_call>\n<tool>" + c.Name + "</tool>\n<parameters>\n")
		for _, a := range c.Args {
			fmt.Fprintf(&b, "<%s>%s</%s>\n", a.Name, xmlValue(a.Value), a.Name)
		}
		b.WriteString("</parameters>\n</tool_call>\n")
	}
	return stubmodel.Text(b.String())
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

func sameAnswers(as []json.RawMessage) bool {
	for _, a := range as[1:] {
		if string(a) != string(as[0]) {
			return false
		}
	}
	return true
}

// Policy is the stub policy silo-gather: the gather strategy computed
// from the prompts alone (PromptSolver); a request that is not an agent's
// turn gets stubmodel.Generic's answer. Its summary counts the requests.
func Policy() stubmodel.Policy { return policy("silo-gather", Model{Solve: PromptSolver}) }

// HastyPolicy is the stub policy silo-hasty: silo-gather whose agents
// other than 0 are impatient (Model.Hasty).
func HastyPolicy() stubmodel.Policy {
	return policy("silo-hasty", Model{Solve: PromptSolver, Hasty: true})
}

func policy(name string, model Model) stubmodel.Policy {
	return stubmodel.Policy{Name: name, New: func(o stubmodel.Options) (http.Handler, func() string) {
		var n atomic.Int64
		generic := stubmodel.Generic(o.Seed)
		h := stubmodel.Handler(func(req stubmodel.ChatRequest) stubmodel.Reply {
			n.Add(1)
			if _, ok := ReadView(req); !ok { // not an agent's turn
				return generic(req)
			}
			return model.Handle(req)
		})
		return h, func() string { return fmt.Sprintf("%d requests", n.Load()) }
	}}
}
