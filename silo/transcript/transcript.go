// Package transcript renders one SILO-BENCH run directory as a readable,
// plain-text transcript: who said what to whom, round by round.
//
// It reads the artifacts that `coordbench silo run --out DIR` (or a
// suite's runs/<case_id>/) leaves behind: result.json (the header and the
// answers footer), calls.jsonl (the tool-call log) and, for LLM agents,
// turns.jsonl (one llmagent.TurnRecord per agent turn: outcome, tokens,
// reply text, prompts). When turns.jsonl is present the transcript is
// built from it, since it also holds what the model said and the calls the
// harness refused; otherwise from calls.jsonl.
//
// The JSONL logs are streamed line by line (bufio.Scanner with a large
// buffer; a line may be megabytes), so runs of 100 agents over 100 rounds
// print fast and in constant memory. The output depends only on the files:
// the same directory always gives the same text.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
)

// File names read from a run directory.
const (
	FileResult = "result.json"
	FileCalls  = "calls.jsonl"
	FileTurns  = llmagent.FileTurns
)

// DefaultWidth is the default clipping width, in characters, of message
// contents, answers, replies and prompts.
const DefaultWidth = 160

// maxLine bounds one JSONL line (the scanner's buffer grows up to it, so
// it is also the memory one log costs): llmagent.MaxTurnLine, which says
// what the harness puts in a line. The longest lines of calls.jsonl, a
// receive result carrying every message waiting, are within it too.
const maxLine = llmagent.MaxTurnLine

// Options selects and shapes what Write prints.
type Options struct {
	// Round, if > 0, prints only that round.
	Round int
	// Agent, if >= 0, prints only that agent (its calls and its answer).
	// Use -1 (or AllAgents) for every agent.
	Agent int
	// Width clips contents to this many characters (with …); <= 0 means
	// DefaultWidth.
	Width int
	// Full disables clipping.
	Full bool
	// Replies prints each LLM turn's reply text before its calls.
	Replies bool
	// Prompts prints each LLM turn's input messages (system and task
	// prompts on the first turn, then tool results and feedback).
	Prompts bool
}

// AllAgents is the Options.Agent value that selects every agent.
const AllAgents = -1

// Write prints the transcript of the run directory dir to w.
func Write(w io.Writer, dir string, opt Options) error {
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("run directory %s: not a directory", dir)
	}
	res, err := readResult(filepath.Join(dir, FileResult))
	if err != nil {
		return err
	}
	callsPath := filepath.Join(dir, FileCalls)
	if _, err := os.Stat(callsPath); err != nil {
		return missing(callsPath, err)
	}
	turnsPath := filepath.Join(dir, FileTurns)
	llm := false
	if _, err := os.Stat(turnsPath); err == nil {
		llm = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", turnsPath, err)
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	p := &printer{w: bw, opt: opt, round: 0}
	p.header(dir, res)
	if llm {
		err = p.turns(turnsPath)
	} else {
		err = p.calls(callsPath)
	}
	if err != nil {
		bw.Flush()
		return err
	}
	p.footer(res)
	return bw.Flush()
}

func missing(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: missing (not a SILO-BENCH run directory?)", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// maxResult bounds result.json (a run of 100 agents writes well under a
// megabyte).
const maxResult = 256 << 20

func readResult(path string) (*round.Result, error) {
	b, err := inputfile.Read(path, "run result", maxResult)
	if err != nil {
		return nil, missing(path, err)
	}
	var res round.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}

// scanJSONL calls fn with each non-blank line of path and its 1-based line
// number; an error from fn is reported as path:line.
func scanJSONL(path string, fn func(line []byte) (stop bool, err error)) error {
	return scanJSONLMax(path, maxLine, fn)
}

// scanJSONLMax is scanJSONL with lines of at most max bytes (the tests
// pass a small one).
func scanJSONLMax(path string, max int, fn func(line []byte) (stop bool, err error)) error {
	f, err := inputfile.Open(path, "run log")
	if err != nil {
		return missing(path, err)
	}
	defer f.Close()
	return inputfile.ScanLines(f, path, "run log", max, fn)
}

type printer struct {
	w     *bufio.Writer
	opt   Options
	round int // round whose header was printed last
}

// printf is the one way a printer writes: everything it prints passes
// untrusted.Printable, because replies, messages, tool names, answers and
// errors come from models and agents, and their control characters (an
// ESC sequence that retitles or clears the terminal, a carriage return that
// hides a line) must reach the user's terminal as visible text.
func (p *printer) printf(format string, args ...any) {
	p.w.WriteString(untrusted.Printable(fmt.Sprintf(format, args...)))
}

// clip shortens s to the width (unless Full) and shows newlines as ⏎.
func (p *printer) clip(s string) string {
	if p.opt.Full {
		return untrusted.OneLine(s, 0)
	}
	return untrusted.OneLine(s, p.opt.Width)
}

func (p *printer) header(dir string, r *round.Result) {
	p.printf("SILO-BENCH run %s\n", dir)
	p.printf("task %s  N=%d  protocol %s  rounds %d", r.Task, r.N, r.Protocol, r.Rounds)
	if r.MaxRounds > 0 {
		p.printf(" (max %d)", r.MaxRounds)
	}
	p.printf("  (rounds numbered from 1)")
	if r.MessageOrder != "" {
		p.printf("  message order %s", r.MessageOrder)
	}
	p.printf("\n")
	for _, q := range r.Requests {
		p.printf("requests%s: %s\n", modelPart(q.Model), requestLine(q))
	}
	p.printf("S %.3f  success %v  P %.3f  tool calls %d  messages %d\n", r.S, r.Success, r.P, r.ToolCalls, r.Messages)
	if r.Usage != nil {
		p.printf("model tokens in %d / out %d", r.Usage.InputTokens, r.Usage.OutputTokens)
		if r.C != nil {
			p.printf("  C %.2f", *r.C)
		}
		if r.CCode != nil {
			p.printf("  C_code %.2f", *r.CCode)
		}
		if r.Usage.WastedCalls > 0 || r.Usage.ModelErrors > 0 {
			p.printf("  wasted %d  model errors %d", r.Usage.WastedCalls, r.Usage.ModelErrors)
		}
		p.printf("\n")
	}
	for _, m := range r.ByModel { // a mixed team
		p.printf("model %s: agents %s, %d of %d correct", p.clip(m.Model), round.AgentRange(m.Agents), m.Correct, len(m.Agents))
		if m.Usage != nil {
			p.printf(", tokens in %d / out %d", m.Usage.InputTokens, m.Usage.OutputTokens)
		}
		p.printf("\n")
	}
}

// modelPart names a mixed team's model in a header line.
func modelPart(m string) string {
	if m == "" {
		return ""
	}
	return " of model " + untrusted.OneLine(m, 0)
}

// requestLine says what a model's requests sent besides the messages.
func requestLine(q round.RequestSettings) string {
	t := "no temperature (server default)"
	if q.Temperature != nil {
		t = "temperature " + strconv.FormatFloat(*q.Temperature, 'g', -1, 64)
	}
	s := t
	if q.MaxTokens > 0 {
		s += fmt.Sprintf(", max_completion_tokens %d", q.MaxTokens)
	}
	if q.Seed != nil {
		s += fmt.Sprintf(", seed %d", *q.Seed)
	}
	return s + fmt.Sprintf("; tool format %s, tool results %s", q.ToolFormat, q.ToolResults)
}

// keep reports whether a record of (round, agent) passes the filters, and
// whether the stream can stop (rounds are ascending).
func (p *printer) keep(rnd, agent int) (keep, stop bool) {
	if p.opt.Round > 0 {
		if rnd > p.opt.Round {
			return false, true
		}
		if rnd != p.opt.Round {
			return false, false
		}
	}
	if p.opt.Agent >= 0 && agent != p.opt.Agent {
		return false, false
	}
	return true, false
}

func (p *printer) roundHeader(rnd int) {
	if rnd != p.round {
		p.round = rnd
		p.printf("\n== Round %d ==\n", rnd)
	}
}

func (p *printer) calls(path string) error {
	return scanJSONL(path, func(line []byte) (bool, error) {
		var e proto.LogEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return false, err
		}
		keep, stop := p.keep(e.Round, e.Agent)
		if !keep {
			return stop, nil
		}
		p.roundHeader(e.Round)
		p.printf("  %s\n", p.describe(e.Agent, e.Tool, e.Args, e.Result, e.Error))
		return false, nil
	})
}

func (p *printer) turns(path string) error {
	return scanJSONL(path, func(line []byte) (bool, error) {
		var t llmagent.TurnRecord
		if err := json.Unmarshal(line, &t); err != nil {
			return false, err
		}
		keep, stop := p.keep(t.Round, t.Agent)
		if !keep {
			return stop, nil
		}
		p.roundHeader(t.Round)
		if p.opt.Full && p.opt.Replies && t.RawText.Truncated {
			// The whole reply from the run's reply store; the kept head and a
			// note saying where it is if the store does not have it.
			one := []llmagent.TurnRecord{t}
			if llmagent.LoadReplies(filepath.Dir(path), one) == nil {
				t.Reply, t.RawText = one[0].Reply, one[0].RawText
			}
		}
		p.turn(&t)
		return false, nil
	})
}

func (p *printer) turn(t *llmagent.TurnRecord) {
	tok := fmt.Sprintf("[in %d / out %d tok]", t.Usage.PromptTokens, t.Usage.CompletionTokens)
	if t.Model != "" { // a mixed team: which model played the turn
		tok = "(" + t.Model + ") " + tok
	}
	switch t.Outcome {
	case llmagent.OutcomeOK, "":
		p.printf("agent %d: %s\n", t.Agent, tok)
	case llmagent.OutcomeNoToolCall:
		p.printf("agent %d: reply had no valid tool call (wasted) %s\n", t.Agent, tok)
	case llmagent.OutcomeModelError:
		p.printf("agent %d: model error: %s %s\n", t.Agent, p.clip(t.Error), tok)
	case llmagent.OutcomeCapped:
		p.printf("agent %d: turn capped %s\n", t.Agent, tok)
	default:
		p.printf("agent %d: outcome %s %s\n", t.Agent, t.Outcome, tok)
	}
	if p.opt.Prompts {
		for _, m := range t.Input {
			label := m.Role
			if m.ToolCallID != "" {
				label += " " + m.ToolCallID
			}
			text := m.Content
			for _, c := range m.ToolCalls {
				if text != "" {
					text += "\n"
				}
				text += "tool call " + c.Name + "(" + c.Arguments + ")"
			}
			p.block("    > "+label+": ", text)
		}
	}
	if p.opt.Replies {
		switch {
		case t.Reply != "":
			p.block("    reply: ", t.Reply+t.RawText.Note(len(t.Reply)))
		case len(t.ReplyToolCalls) > 0:
			p.printf("    reply: (%s)\n", plural(len(t.ReplyToolCalls), "native tool call"))
		default:
			p.printf("    reply: (empty)\n")
		}
	}
	for _, c := range t.Calls {
		line := p.describe(t.Agent, c.Tool, c.Args, c.Result, "")
		if !c.Executed {
			line = p.describe(t.Agent, c.Tool, c.Args, nil, "") + " (refused by harness"
			if msg := errorOf(c.Result); msg != "" {
				line += ": " + p.clip(msg)
			}
			line += ")"
		}
		p.printf("  %s\n", line)
	}
	switch {
	case t.Dropped == 1:
		p.printf("  (1 call after the turn ended was not executed)\n")
	case t.Dropped > 1:
		p.printf("  (%d calls after the turn ended were not executed)\n", t.Dropped)
	}
}

// block prints text after prefix: one clipped line, or with Full the whole
// text, continuation lines indented.
func (p *printer) block(prefix, text string) {
	if !p.opt.Full {
		p.printf("%s%s\n", prefix, p.clip(text))
		return
	}
	pad := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if i == 0 {
			p.printf("%s%s\n", prefix, l)
		} else {
			p.printf("%s%s\n", pad, l)
		}
	}
}

// errorOf returns the message of an error result ({"error": ...} without
// a "success" field), or "".
func errorOf(res json.RawMessage) string {
	if len(res) == 0 || res[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return ""
	}
	if _, ok := m["success"]; ok {
		return ""
	}
	raw, ok := m["error"]
	if !ok {
		return ""
	}
	return text(raw)
}

// text returns a JSON string's value, or the compact JSON of another value.
func text(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// quoted shows a JSON value: a string quoted, another value as JSON.
func (p *printer) quoted(raw json.RawMessage) string {
	if len(raw) == 0 {
		return `""`
	}
	if raw[0] == '"' {
		return `"` + p.clip(text(raw)) + `"`
	}
	return p.clip(text(raw))
}

// describe phrases one tool call for humans. errMsg is the log's error
// (a call rejected by the store); an {"error": ...} result counts too. A
// nil result describes the call's intent only.
func (p *printer) describe(agent int, tool string, args, result json.RawMessage, errMsg string) string {
	who := "agent " + strconv.Itoa(agent)
	if errMsg == "" && result != nil {
		errMsg = errorOf(result)
	}
	if errMsg != "" {
		return fmt.Sprintf("%s ✗ %s: %s", who, tool, p.clip(errMsg))
	}
	var a map[string]json.RawMessage
	if len(args) > 0 && args[0] == '{' {
		_ = json.Unmarshal(args, &a)
	}
	switch tool {
	case proto.ToolSend:
		to := "agent ?"
		if v, ok := a["target_id"]; ok {
			to = "agent " + text(v)
		}
		return fmt.Sprintf("%s → %s  %s: %s", who, to, tool, p.quoted(a["content"]))
	case proto.ToolBroadcast:
		return fmt.Sprintf("%s ⇒ all  %s: %s", who, tool, p.quoted(a["content"]))
	case proto.ToolPropose:
		id := ""
		var r struct {
			ID string `json:"proposal_id"`
		}
		if result != nil && json.Unmarshal(result, &r) == nil && r.ID != "" {
			id = " " + r.ID
		}
		return fmt.Sprintf("%s ⇒ all  %s%s: %s", who, tool, id, p.quoted(a["value"]))
	case proto.ToolVote:
		verb := "agrees with"
		if v, ok := a["agree"]; ok && string(v) == "false" {
			verb = "disagrees with"
		}
		return fmt.Sprintf("%s ⇒ all  %s: %s %s", who, tool, verb, text(a["proposal_id"]))
	case proto.ToolReceive:
		if result == nil {
			return fmt.Sprintf("%s ← %s", who, tool)
		}
		var r struct {
			Messages []struct {
				From int `json:"from"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(result, &r)
		switch len(r.Messages) {
		case 0:
			return fmt.Sprintf("%s ← %s: no messages", who, tool)
		case 1:
			return fmt.Sprintf("%s ← %s: 1 message (from %d)", who, tool, r.Messages[0].From)
		}
		from := make([]int, 0, len(r.Messages))
		seen := map[int]bool{}
		for _, m := range r.Messages {
			if !seen[m.From] {
				seen[m.From] = true
				from = append(from, m.From)
			}
		}
		sort.Ints(from)
		ids := make([]string, len(from))
		for i, f := range from {
			ids[i] = strconv.Itoa(f)
		}
		return fmt.Sprintf("%s ← %s: %d messages (from %s)", who, tool, len(r.Messages), strings.Join(ids, ", "))
	case proto.ToolWriteFile:
		return fmt.Sprintf("%s writes %s: %s", who, p.path(a), p.quoted(a["content"]))
	case proto.ToolReadFile:
		s := fmt.Sprintf("%s reads %s", who, p.path(a))
		if result == nil {
			return s
		}
		var r struct {
			Success  bool `json:"success"`
			Metadata struct {
				ModifiedBy      *int `json:"modified_by"`
				ModifiedAtRound int  `json:"modified_at_round"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(result, &r)
		if !r.Success {
			return s + ": not found"
		}
		if r.Metadata.ModifiedBy != nil {
			s += fmt.Sprintf(" (by agent %d, round %d)", *r.Metadata.ModifiedBy, r.Metadata.ModifiedAtRound)
		}
		return s
	case proto.ToolDelete:
		s := fmt.Sprintf("%s deletes %s", who, p.path(a))
		var r struct {
			Success bool `json:"success"`
		}
		if result != nil && json.Unmarshal(result, &r) == nil && !r.Success {
			s += ": not found"
		}
		return s
	case proto.ToolListFiles:
		s := who + " lists files"
		if v, ok := a["prefix"]; ok && text(v) != "" {
			s += " " + p.quoted(v)
		}
		if result == nil {
			return s
		}
		var r struct {
			Files []json.RawMessage `json:"files"`
		}
		_ = json.Unmarshal(result, &r)
		return fmt.Sprintf("%s: %d", s, len(r.Files))
	case proto.ToolList:
		if result == nil {
			return who + " lists agents"
		}
		var r struct {
			Total int `json:"total"`
		}
		_ = json.Unmarshal(result, &r)
		return fmt.Sprintf("%s lists agents: %d", who, r.Total)
	case proto.ToolWait:
		return who + " waits"
	case proto.ToolSubmit:
		ans, ok := a["answer"]
		if !ok {
			ans = json.RawMessage("null")
		}
		return fmt.Sprintf("%s SUBMITS %s", who, p.clip(text(ans)))
	}
	return fmt.Sprintf("%s calls %s(%s)", who, tool, p.clip(text(args)))
}

func (p *printer) path(a map[string]json.RawMessage) string {
	v, ok := a["path"]
	if !ok {
		return `""`
	}
	return p.clip(text(v))
}

func (p *printer) footer(r *round.Result) {
	p.printf("\n== Answers ==\n")
	for _, ag := range r.Agents {
		if p.opt.Agent >= 0 && ag.ID != p.opt.Agent {
			continue
		}
		mark := "✗"
		if ag.Correct {
			mark = "✓"
		}
		if ag.Submitted {
			p.printf("agent %d: %s (round %d) %s", ag.ID, p.clip(text(ag.Answer)), ag.Round, mark)
		} else {
			p.printf("agent %d: no answer %s", ag.ID, mark)
		}
		if len(ag.Labels) > 0 {
			p.printf("  %s", strings.Join(ag.Labels, ", "))
		}
		if ag.Error != "" {
			p.printf("  error: %s", p.clip(ag.Error))
		}
		p.printf("\n")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
