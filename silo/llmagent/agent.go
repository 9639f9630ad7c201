package llmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// Model is the chat endpoint an agent calls; *llm.Client implements it.
type Model interface {
	Complete(ctx context.Context, msgs []llm.Message) (*llm.Response, error)
	CompleteWithTools(ctx context.Context, msgs []llm.Message, tools []llm.Tool) (*llm.Response, error)
}

// Defaults of Config.
const (
	DefaultReplyReserve     = 1024
	DefaultMaxModelFailures = 3
)

// Config configures the LLM agents of a run. Only Model is required.
type Config struct {
	Model Model
	// Native offers the protocol's tools through native function calling
	// instead of the published XML-like format.
	Native   bool
	Scaffold Scaffold
	// ContextBudget bounds an agent's prompt in tokens (0: full history, as
	// published); see history for the truncation policy. ReplyReserve is
	// kept free for the reply (default DefaultReplyReserve).
	ContextBudget int64
	ReplyReserve  int64
	// MaxModelFailures: after this many consecutive model calls that fail
	// (after the model layer's retries) the agent gives up for the rest of
	// the run (default DefaultMaxModelFailures).
	MaxModelFailures int
	// ResultEncoding is how tool results are written for the model (""
	// is ResultsPublished, the published srsly/ujson form).
	ResultEncoding ResultEncoding
	// Label names the agent's model in a mixed team: its turn records
	// carry it (TurnRecord.Model). Empty for a team of one model.
	Label string
	// AbortOnModelError makes a model call that fails after the retries end
	// the whole run with that error (round.ErrAbort) instead of spending
	// the turn. Suites set it: a run scored after an infrastructure failure
	// would mix the endpoint's health into the agents' results, and it
	// could not be replayed from the response cache (failures are not
	// cached); the failed case reruns instead, replaying its good calls.
	AbortOnModelError bool
}

// Outcomes of a turn (TurnRecord.Outcome).
const (
	OutcomeOK         = "ok"           // the reply held tool calls and they ran
	OutcomeNoToolCall = "no_tool_call" // no valid call: feedback sent, the call is wasted
	OutcomeCapped     = "capped"       // the per-turn call cap ended the turn
	OutcomeModelError = "model_error"  // the model call failed after retries
)

// Agent is one LLM agent: it implements round.Agent (one model call per
// turn) and round.UsageReporter. Its turn log is read through its Team
// (Team.Records, Team.WriteLogs) once the run is over.
type Agent struct {
	cfg    Config
	id, n  int
	proto  proto.Protocol
	system string
	prompt string
	tools  []llm.Tool // native mode

	hist     *history
	pending  []llm.Message // tool results and notes of the last turn, sent with the next call
	turns    int
	failures int // consecutive model errors
	usage    round.Usage
	records  []TurnRecord
	timings  []Timing
	journal  *journal // the team's, or nil: each ended turn is written there too
}

// New returns agent id of instance in over protocol p.
func New(in *task.Instance, p proto.Protocol, id int, cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("llmagent: Config.Model is nil")
	}
	if id < 0 || id >= in.N {
		return nil, fmt.Errorf("llmagent: agent id %d out of range for N=%d", id, in.N)
	}
	if len(proto.Tools(p)) == 0 {
		return nil, fmt.Errorf("llmagent: unknown protocol %q", p)
	}
	if cfg.ContextBudget < 0 || cfg.ReplyReserve < 0 || cfg.MaxModelFailures < 0 {
		return nil, errors.New("llmagent: context budget, reply reserve and model failures must not be negative")
	}
	if cfg.ReplyReserve == 0 {
		cfg.ReplyReserve = DefaultReplyReserve
	}
	if cfg.MaxModelFailures == 0 {
		cfg.MaxModelFailures = DefaultMaxModelFailures
	}
	enc, err := ParseResultEncoding(string(cfg.ResultEncoding))
	if err != nil {
		return nil, fmt.Errorf("llmagent: %w", err)
	}
	cfg.ResultEncoding = enc
	prompt := in.Prompt(id, !cfg.Scaffold.NoTopologyHint)
	if cfg.Scaffold.Planning {
		prompt += "\n\n" + planningNote(in.N)
	}
	a := &Agent{cfg: cfg, id: id, n: in.N, proto: p, prompt: prompt,
		system: SystemPrompt(p, id, in.N, cfg.Native, cfg.Scaffold)}
	if cfg.Native {
		a.tools = functionTools(p, in.N, cfg.Scaffold.Consensus)
	}
	return a, nil
}

// Usage implements round.UsageReporter.
func (a *Agent) Usage() round.Usage { return a.usage }

// SeesResultsNextTurn implements round.Replier: a turn is one model reply,
// whose calls are all decided before any returns; their results reach the
// model with its next request. The failure labels count what the agent
// read as seen from its next turn on (an agent that reads and submits in
// one reply submitted without what it read).
func (a *Agent) SeesResultsNextTurn() bool { return true }

// Turn implements round.Agent: one model call, then the reply's tool calls.
func (a *Agent) Turn(ctx context.Context, t *round.Turn) error {
	ctx, sp := a.startTurn(ctx, t)
	err := a.turn(ctx, t)
	a.endTurn(sp, err)
	return err
}

func (a *Agent) turn(ctx context.Context, t *round.Turn) error {
	rec := TurnRecord{Round: t.Round, Agent: a.id, Model: a.cfg.Label, Calls: []CallRecord{}}
	a.turns++
	if a.hist == nil {
		a.hist = newHistory(a.system, a.prompt, a.cfg.ContextBudget, a.cfg.ReplyReserve)
		rec.Input = append(rec.Input, a.hist.msgs...)
	} else {
		var notes []string
		if a.cfg.Scaffold.Consensus { // the helper's news, after the tool results
			if news := t.ConsensusNews(); news != nil {
				notes = append(notes, FormatToolResult(proto.ToolConsensusNews, news, a.cfg.ResultEncoding))
			}
		}
		if a.cfg.Scaffold.Planning && t.Round == 2 {
			notes = append(notes, planningOver)
		}
		if a.cfg.Scaffold.Reminders {
			notes = append(notes, reminder(a.proto, a.id, a.n, a.cfg.Scaffold.Consensus))
		}
		if len(notes) > 0 {
			note := strings.Join(notes, "\n\n")
			if k := len(a.pending) - 1; k >= 0 && a.pending[k].Role == llm.RoleUser {
				a.pending[k].Content += "\n\n" + note
			} else {
				a.pending = append(a.pending, llm.Message{Role: llm.RoleUser, Content: note})
			}
		}
		a.hist.add(a.pending...)
		rec.Input = a.pending
		a.pending = nil
	}
	msgs, info := a.hist.request()
	rec.Context = info

	var resp *llm.Response
	var err error
	if a.cfg.Native {
		resp, err = a.cfg.Model.CompleteWithTools(ctx, msgs, a.tools)
	} else {
		resp, err = a.cfg.Model.Complete(ctx, msgs)
	}
	a.usage.ModelCalls++
	if err != nil {
		return a.modelError(ctx, &rec, err)
	}
	a.failures = 0
	rec.Usage = resp.Usage
	rec.Reply, rec.ReplyToolCalls, rec.FinishReason = resp.Content, replyCalls(resp.ToolCalls), resp.FinishReason
	a.usage.InputTokens += resp.Usage.PromptTokens
	a.usage.OutputTokens += resp.Usage.CompletionTokens
	a.usage.MaxContextTokens = max(a.usage.MaxContextTokens, resp.Usage.PromptTokens)
	a.usage.TruncatedTurns = a.hist.dropped
	a.hist.calibrate(info.Chars, resp.Usage.PromptTokens)
	a.timings = append(a.timings, Timing{Round: t.Round, Agent: a.id, LatencyMS: ms(resp), Attempts: resp.Attempts, Cached: resp.Cached})

	if a.cfg.Native {
		err = a.runNative(ctx, t, resp, &rec)
	} else {
		err = a.runXML(ctx, t, resp, &rec)
	}
	a.records = append(a.records, rec)
	a.logTurn()
	return err
}

// logTurn writes the turn just recorded into the team's journal.
func (a *Agent) logTurn() {
	if a.journal != nil {
		a.journal.add(&a.records[len(a.records)-1], &a.timings[len(a.timings)-1])
	}
}

func ms(r *llm.Response) float64 { return float64(r.Latency.Microseconds()) / 1000 }

// modelError records a failed model call. A response-cache miss in replay
// mode or an ended context aborts the run; other failures spend the turn,
// and MaxModelFailures in a row abort the run (status aborted, as a des
// episode whose model cannot answer).
func (a *Agent) modelError(ctx context.Context, rec *TurnRecord, err error) error {
	if errors.Is(err, llm.ErrContextOverflow) { // bound the prompt
		err = fmt.Errorf("%w%s", err, opterr.SeeText([]string{"ContextBudget"}))
	}
	rec.Outcome, rec.Error = OutcomeModelError, err.Error()
	if le := (*llm.Error)(nil); errors.As(err, &le) { // tokens of an unusable reply are spent all the same
		rec.Usage = le.Usage
		a.usage.InputTokens += le.Usage.PromptTokens
		a.usage.OutputTokens += le.Usage.CompletionTokens
	}
	a.records = append(a.records, *rec)
	a.timings = append(a.timings, Timing{Round: rec.Round, Agent: a.id})
	a.logTurn()
	var miss *llm.CacheMissError
	if errors.As(err, &miss) || ctx.Err() != nil || a.cfg.AbortOnModelError {
		return fmt.Errorf("%w: %v", round.ErrAbort, err)
	}
	a.usage.ModelErrors++
	a.failures++
	if a.failures >= a.cfg.MaxModelFailures { // a dead model ends the run, as in des: not a result
		return fmt.Errorf("%w: model failed %d times in a row, last: %v", round.ErrAbort, a.failures, err)
	}
	return nil
}

// planning reports whether this turn is in the planning round.
func (a *Agent) planning(t *round.Turn) bool { return a.cfg.Scaffold.Planning && t.Round == 1 }

// exec runs one parsed call and records it. It returns the result and
// whether to stop executing this reply's calls (the turn is over).
func (a *Agent) exec(ctx context.Context, t *round.Turn, rec *TurnRecord, name, callID string, args json.RawMessage) (json.RawMessage, bool, error) {
	cr := CallRecord{Tool: name, Args: args}
	start := toolClock(ctx)
	if a.planning(t) && name == proto.ToolSubmit {
		cr.Result = json.RawMessage(planningRefusal)
		record(ctx, rec, cr, callID, start)
		return cr.Result, false, nil
	}
	res, over, err := t.Call(name, args)
	switch {
	case errors.Is(err, round.ErrCapped):
		rec.Outcome = OutcomeCapped
		return nil, true, nil
	case errors.Is(err, round.ErrTurnOver):
		return nil, true, nil
	case err != nil:
		return nil, true, err
	}
	cr.Result, cr.Executed = res, true
	record(ctx, rec, cr, callID, start)
	return res, over, nil
}

func errorResult(msg string) json.RawMessage {
	b, _ := proto.CompactJSON(map[string]string{"error": msg})
	return b
}

func capNote(max int) string {
	return fmt.Sprintf("Your turn was ended: at most %d tool calls run per turn; the rest of your calls were not executed.", max)
}

// runXML executes the XML-like tool calls of a reply (the published turn).
func (a *Agent) runXML(ctx context.Context, t *round.Turn, resp *llm.Response, rec *TurnRecord) error {
	a.hist.add(llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
	calls, perr := ParseToolCalls(resp.Content)
	if perr != nil {
		rec.Outcome = OutcomeNoToolCall
		a.usage.WastedCalls++
		a.pending = []llm.Message{{Role: llm.RoleUser, Content: NoCallFeedback()}}
		return nil
	}
	rec.Outcome = OutcomeOK
	var blocks []string
	for k, c := range calls {
		args, err := c.ArgsJSON()
		if err != nil { // not reachable for parsed values; kept as an audited error
			res := errorResult("arguments: " + err.Error())
			record(ctx, rec, CallRecord{Tool: c.Name, Result: res}, "", time.Time{})
			blocks = append(blocks, FormatToolResult(c.Name, res, a.cfg.ResultEncoding))
			continue
		}
		res, stop, err := a.exec(ctx, t, rec, c.Name, "", args)
		if err != nil {
			return err
		}
		if res != nil {
			blocks = append(blocks, FormatToolResult(c.Name, res, a.cfg.ResultEncoding))
		}
		if stop {
			rec.Dropped = len(calls) - k - 1
			if res == nil {
				rec.Dropped++
			}
			if rec.Outcome == OutcomeCapped {
				blocks = append(blocks, capNote(t.MaxCalls))
			}
			break
		}
	}
	a.pending = []llm.Message{{Role: llm.RoleUser, Content: JoinToolResults(blocks)}}
	return nil
}

// nativeNoCallFeedback is the feedback when a native-mode reply calls no
// function.
const nativeNoCallFeedback = "Your reply called no tool, so no action was taken this turn. Act only through the tools (function calls); wait and submit_result end your turn."

// runNative executes the function calls of a reply. Every call gets a
// tool message, as the API requires: calls after the turn ended get a
// "not executed" error.
func (a *Agent) runNative(ctx context.Context, t *round.Turn, resp *llm.Response, rec *TurnRecord) error {
	calls := make([]llm.ToolCall, len(resp.ToolCalls))
	copy(calls, resp.ToolCalls)
	for k := range calls {
		if calls[k].ID == "" {
			calls[k].ID = fmt.Sprintf("call_%d_%d", a.turns, k)
		}
	}
	a.hist.add(llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: calls})
	rec.ReplyToolCalls = replyCalls(calls)
	if len(calls) == 0 {
		rec.Outcome = OutcomeNoToolCall
		a.usage.WastedCalls++
		a.pending = []llm.Message{{Role: llm.RoleUser, Content: nativeNoCallFeedback}}
		return nil
	}
	rec.Outcome = OutcomeOK
	var out []llm.Message
	stopped := false
	for _, c := range calls {
		var res json.RawMessage
		switch {
		case stopped:
			rec.Dropped++
			res = errorResult("not executed: your turn had already ended")
		case !isObject(c.Arguments):
			res = errorResult("arguments must be a JSON object")
			record(ctx, rec, CallRecord{Tool: c.Name, Args: rawOrString(c.Arguments), Result: res}, c.ID, time.Time{})
		default:
			r, stop, err := a.exec(ctx, t, rec, c.Name, c.ID, json.RawMessage(c.Arguments))
			if err != nil {
				return err
			}
			res = r
			if stop {
				stopped = true
				if r == nil {
					rec.Dropped++
					res = errorResult("not executed: " + capNote(t.MaxCalls))
				}
			}
		}
		out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: a.cfg.ResultEncoding.Encode(res)})
	}
	a.pending = out
	return nil
}

func isObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// rawOrString keeps arguments as JSON when they are JSON, else as a JSON
// string, so that the turn log stays valid JSON.
func rawOrString(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := proto.CompactJSON(s)
	return b
}
