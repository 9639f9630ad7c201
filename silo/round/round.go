// Package round is SILO-BENCH's synchronous round scheduler: it runs a team
// of agents over one task instance and one communication protocol
// (package proto), round by round, and scores the submissions (package
// task). It also holds the scripted reference agent (Reference), which
// solves every task under every protocol.
//
// Turn model (as published): in each round every agent that has not yet
// submitted takes exactly one turn, a sequence of tool calls made through
// its Turn; the calls run in order until the first wait or submit_result.
// There is no per-turn cap by default (the published engine has none); an
// opt-in cap (Config.MaxCallsPerTurn > 0) ends long turns, and capped turns
// are counted. The run ends when every agent has submitted or after
// Config.MaxRounds rounds; agents that never submitted score as wrong.
//
// Agents of a round run concurrently, one goroutine each. The outcome does
// not depend on timing: proto.Store makes writes of round t visible only
// from round t+1 and applies order-dependent effects in (agent id, call
// sequence) order, and Run collects per-agent outcomes into slots indexed
// by agent id. An agent that is itself deterministic (a function of what
// its calls return) therefore yields the same Result, byte for byte, and
// the same tool-call log on every run. Failed agents get provenance-based
// failure labels (labels.go); faulty.go holds faulty reference variants.
// See docs/silo-rounds.md.
package round

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// Defaults of Config.
const (
	DefaultMaxRounds = 100 // the published max_rounds default
	// DefaultMaxCallsPerTurn is 0: no per-turn cap, as published.
	DefaultMaxCallsPerTurn = 0
)

// runawayAfter is how many calls after its turn ended an agent may attempt
// when there is no per-turn cap, before it is stopped as a runaway (with a
// cap of m it is m+1).
const runawayAfter = 21

// Agent plays one agent of a run: each round it takes one turn, a sequence
// of tool calls made through the Turn, until it calls wait or
// submit_result (or hits the per-turn cap). Returning without ending the
// turn ends it silently (an implicit wait, not logged). Returning an error
// or panicking ends the agent for the rest of the run without a
// submission (recorded in Result.AgentErrors).
//
// Each agent gets its own Turn per round; Turn methods must be called from
// the goroutine running Turn only.
type Agent interface {
	Turn(ctx context.Context, t *Turn) error
}

// Errors returned by Turn.Call.
var (
	// ErrTurnOver: the turn already ended (wait, submit_result, or the cap);
	// the call was not executed.
	ErrTurnOver = errors.New("round: turn is over")
	// ErrCapped: this call would exceed the per-turn cap; it was not
	// executed and the turn is over.
	ErrCapped = errors.New("round: per-turn call cap reached")
)

// errRunaway is panicked by Call when an agent keeps calling long after its
// turn ended; Run recovers it and records the agent as failed.
type errRunaway struct{}

// Turn is one agent's turn in one round.
type Turn struct {
	Round    int             // 1-based round number
	ID       int             // agent id, 0..N-1
	N        int             // team size
	Protocol proto.Protocol  // the run's protocol
	Shard    json.RawMessage // the agent's input shard (compact JSON)
	Task     *task.Task      // the task (id, level, output type, ...)
	// Params holds the task parameters stated only in the description
	// (III-25's initial centroids), as in task.Instance.Params.
	Params json.RawMessage
	// Scale is the team size the data were drawn for (task.Instance.Scale:
	// N, or k for the merged baseline of an N = k instance).
	Scale int
	// MaxCalls is the per-turn cap on calls, 0 for none (the default);
	// MaxContentBytes the largest message, file content or answer the
	// store accepts.
	MaxCalls        int
	MaxContentBytes int

	// ctx is the run's, stored although contexts are usually passed: a
	// Turn lives only as long as the Agent.Turn call it is given to (as an
	// http.Request lives for its handler), and Call must refuse to execute
	// once the run is cancelled, whatever context the agent holds. Passing
	// it to every Call instead would thread it through each agent's whole
	// strategy for a check that is the run's, not the agent's.
	ctx    context.Context
	store  *proto.Store
	calls  int // executed calls
	over   bool
	capped bool
	after  int // calls attempted after the turn was over
}

// Calls returns the number of calls executed in this turn.
func (t *Turn) Calls() int { return t.calls }

// Remaining returns how many more calls this turn may execute
// (math.MaxInt when there is no cap).
func (t *Turn) Remaining() int {
	if t.over {
		return 0
	}
	if t.MaxCalls <= 0 {
		return math.MaxInt
	}
	return t.MaxCalls - t.calls
}

// runawayLimit is the number of calls after the turn ended that make the
// agent a runaway.
func (t *Turn) runawayLimit() int {
	if t.MaxCalls <= 0 {
		return runawayAfter
	}
	return t.MaxCalls + 1
}

// Over reports whether the turn has ended.
func (t *Turn) Over() bool { return t.over }

// Call executes one tool call and returns its result (compact JSON) and
// whether the turn is over. args is marshalled to a JSON object (a
// json.RawMessage or []byte is passed as is; nil means no arguments).
// Protocol-level problems (unknown tool, bad arguments) are not Go errors:
// they come back as an {"error": ...} result, as the published engine
// does. A Go error means the call was not executed: ErrTurnOver, ErrCapped,
// the context's error, or an args marshalling error.
func (t *Turn) Call(tool string, args any) (json.RawMessage, bool, error) {
	if t.over {
		t.after++
		if t.after > t.runawayLimit() {
			panic(errRunaway{})
		}
		return nil, true, ErrTurnOver
	}
	if err := t.ctx.Err(); err != nil {
		// Without a cap, a scripted agent that ignores errors would
		// otherwise spin forever once the run is cancelled.
		t.after++
		if t.after > t.runawayLimit() {
			panic(errRunaway{})
		}
		return nil, false, err
	}
	if t.MaxCalls > 0 && t.calls >= t.MaxCalls {
		t.over, t.capped = true, true
		return nil, true, ErrCapped
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, false, fmt.Errorf("round: %s arguments: %w", tool, err)
		}
		raw = b
	}
	t.calls++
	res, done := t.store.Call(t.ID, tool, raw)
	if done {
		t.over = true
	}
	return res, done, nil
}

// ConsensusNews returns what changed in the consensus helper since the
// agent was last told (proto.Store.ConsensusNews): nil without the helper
// (proto.Options.Consensus) or without news. Agents that use the helper
// call it at the start of their turn.
func (t *Turn) ConsensusNews() json.RawMessage { return t.store.ConsensusNews(t.ID) }

// Config describes one run.
type Config struct {
	Instance *task.Instance
	Protocol proto.Protocol
	// MaxRounds is the round cap (default DefaultMaxRounds).
	MaxRounds int
	// MaxCallsPerTurn, if positive, bounds the calls of one turn: a turn
	// that tries one more is ended and counted in Result.CappedTurns. 0
	// (the default) means no cap, as in the published engine; negative is
	// an error.
	MaxCallsPerTurn int
	// DB is the SQLite path of the run database (must not hold a run);
	// empty means ":memory:".
	DB string
	// Options bounds tool-call contents (proto defaults if zero).
	Options proto.Options
	// OnEnd, if set, is called with the run's store after the last round,
	// before it is closed (to export the tool-call log, say).
	OnEnd func(*proto.Store) error
	// Models, if set, names the model of each agent of a mixed team (one
	// label per agent): Result.Agents then carry their model and
	// Result.ByModel the figures per model (models.go). Nil for a team of
	// one model or a scripted team, whose results stay as they were.
	Models []string
}

// AgentResult is one agent's outcome.
type AgentResult struct {
	ID          int             `json:"agent_id"`
	Submitted   bool            `json:"submitted"`
	Answer      json.RawMessage `json:"answer"` // null when not submitted
	Round       int             `json:"round"`  // round of submission, 0 if none
	Correct     bool            `json:"correct"`
	Partial     float64         `json:"partial"`
	PartialFine float64         `json:"partial_fine"`
	Calls       int             `json:"calls"`        // tool calls executed
	CappedTurns int             `json:"capped_turns"` // turns ended by the cap
	Error       string          `json:"error,omitempty"`
	// Seen is the agent's provenance set (sorted shard indices) when it
	// submitted, for a non-submitter at the end of the run, counting only
	// what had reached its decisions (views.go: a Replier sees a turn's
	// results in its next turn).
	Seen []int `json:"seen"`
	// Informed is the set of shards whose data the contents the agent had
	// seen (up to its submission) carry, its own included (informed.go); a
	// subset of Seen.
	Informed []int `json:"informed"`
	// Labels are the failure labels of an agent that is not correct
	// (sorted; see Label*), from Informed; empty for a correct agent.
	// LabelsFlow are the same labels from Seen (message flow), an upper
	// bound: flow says computation_error where content may say premature.
	Labels     []string `json:"labels"`
	LabelsFlow []string `json:"labels_flow"`
	// Usage is the agent's model usage (model-backed agents only).
	Usage *Usage `json:"usage,omitempty"`
	// Model is the agent's model in a mixed team (Config.Models).
	Model string `json:"model,omitempty"`

	// PartialPaper is the published P rule (task.PartialPublished), for
	// comparison with the paper; 0 where that rule crashes (the published
	// evaluate() raises TypeError), and then PartialPaperCrash is set.
	PartialPaper      float64 `json:"partial_paper"`
	PartialPaperCrash bool    `json:"partial_paper_crash,omitempty"`
}

// AgentError records an agent that returned an error or panicked.
type AgentError struct {
	Round int    `json:"round"`
	Agent int    `json:"agent_id"`
	Error string `json:"error"`
	Panic bool   `json:"panic"`
}

// RequestSettings are what every request of one model sent besides the
// messages (and the tools, under ToolFormat native), and how tool results
// were written into the messages: with the turn log, the exact requests.
type RequestSettings struct {
	// Model is the model's label (a mixed team's agents carry it; empty
	// for a team of one model).
	Model string `json:"model,omitempty"`
	// Temperature is the "temperature" sent; null when none was sent
	// (the default: the server's own applied, as in the published call).
	Temperature *float64 `json:"temperature"`
	// MaxTokens is "max_completion_tokens" (0: not sent).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Seed is "seed" (null: not sent).
	Seed *int64 `json:"seed,omitempty"`
	// ToolFormat is xml or native; ToolResults is published or compact
	// (how tool results were written for the model).
	ToolFormat  string `json:"tool_format"`
	ToolResults string `json:"tool_results"`
}

// Result is a run's outcome, ready to be written as result.json.
type Result struct {
	Task            string         `json:"task"`
	Mode            string         `json:"mode"`
	Seed            uint64         `json:"seed,omitempty"`
	N               int            `json:"n"`
	Protocol        proto.Protocol `json:"protocol"`
	MaxRounds       int            `json:"max_rounds"`
	MaxCallsPerTurn int            `json:"max_calls_per_turn"`
	// MessageFormat is how contents reached other agents
	// (proto.Options.MessageFormat): "str" (published) or "json".
	MessageFormat proto.MessageFormat `json:"message_format"`
	// MessageOrder is the order of one round's messages
	// (proto.Options.MessageOrder): "random" (published, seeded) or
	// "fixed"; absent in results from before it was recorded (fixed).
	MessageOrder proto.MessageOrder `json:"message_order,omitempty"`
	// Requests are, for LLM agents, what their model requests sent besides
	// the messages: one entry per model (RequestSettings). The caller that
	// knows the models fills them (play.Run); absent for scripted agents.
	Requests []RequestSettings `json:"requests,omitempty"`

	Agents []AgentResult `json:"agents"`

	// Status is StatusAborted for a run an agent's error wrapping
	// ErrAbort ended (its model could not answer, a replay missed the
	// cache), with that error in Error: the figures describe the state it
	// had reached, and the run is not a result. Empty for a run played to
	// its end.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`

	S            float64 `json:"S"`       // fraction of agents correct
	Success      bool    `json:"success"` // S == 1
	P            float64 `json:"P"`       // mean Partial over all N (0 for non-submitters)
	PFine        float64 `json:"P_fine"`  // mean PartialFine over all N
	AllSubmitted bool    `json:"all_submitted"`
	Rounds       int     `json:"rounds"` // rounds run

	ToolCalls   int            `json:"tool_calls"`
	CallsByTool map[string]int `json:"calls_by_tool"`
	CallErrors  int            `json:"call_errors"` // calls rejected by the store
	Messages    int            `json:"messages"`    // successful sends / broadcasts
	Bytes       int64          `json:"bytes"`       // content bytes sent or written
	D           float64        `json:"D"`           // the published code's density
	DReads      *float64       `json:"D_reads,omitempty"`
	CappedTurns int            `json:"capped_turns"`
	AgentErrors []AgentError   `json:"agent_errors"`
	// Failures counts the agents carrying each failure label (an agent
	// with two labels counts under both); FailuresFlow the same for the
	// flow-based labels (AgentResult.LabelsFlow).
	Failures     map[string]int `json:"failures"`
	FailuresFlow map[string]int `json:"failures_flow"`

	// Usage sums the agents' model usage, and C and CCode are the token
	// cost in the paper's and the published code's form (usage.go). All
	// three are absent when no agent calls a model.
	Usage *Usage   `json:"usage,omitempty"`
	C     *float64 `json:"C,omitempty"`
	CCode *float64 `json:"C_code,omitempty"`

	// PPaper is the mean PartialPaper over all N (the paper's P, beside
	// ours in P); PPaperCrashes counts the agents whose answer crashes the
	// published rule (any one makes the published evaluate() fail for the
	// whole run).
	PPaper        float64 `json:"P_paper"`
	PPaperCrashes int     `json:"P_paper_crashes"`

	// MergedFrom is set for a merged baseline (task.Merged): the team
	// size k of the instance whose data the single agent held.
	MergedFrom int `json:"merged_from,omitempty"`

	// ByModel are the figures of each model of a mixed team
	// (Config.Models), in the order the models first appear among the
	// agents; absent otherwise.
	ByModel []ModelResult `json:"by_model,omitempty"`
}

// StatusAborted is Result.Status of a run that an agent aborted.
const StatusAborted = "aborted"

// Run plays agents (one per shard of cfg.Instance) until all have submitted
// or the round cap, and scores the submissions. It returns an error only
// for a bad configuration, a store failure, a cancelled context or an
// agent error wrapping ErrAbort; other agent errors and panics are
// recorded in the Result. An abort ends the run after its round, and
// Run returns the Result of the state reached (Status aborted, OnEnd
// called) with the error.
func Run(ctx context.Context, cfg Config, agents []Agent) (*Result, error) {
	in := cfg.Instance
	if in == nil || in.Task == nil {
		return nil, errors.New("round: Config.Instance is nil")
	}
	n := in.N
	if n < 1 || len(in.Shards) != n || len(in.Expected) != n {
		return nil, fmt.Errorf("round: instance has N=%d, %d shards, %d answers", n, len(in.Shards), len(in.Expected))
	}
	if len(agents) != n {
		return nil, fmt.Errorf("round: %d agents for N=%d", len(agents), n)
	}
	for i, a := range agents {
		if a == nil {
			return nil, fmt.Errorf("round: agent %d is nil", i)
		}
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = DefaultMaxRounds
	}
	if cfg.MaxCallsPerTurn < 0 {
		return nil, fmt.Errorf("round: MaxCallsPerTurn is %d; want 0 (no cap) or a positive cap", cfg.MaxCallsPerTurn)
	}
	if err := checkModels(cfg.Models, n); err != nil {
		return nil, err
	}
	db := cfg.DB
	if db == "" {
		db = ":memory:"
	}
	st, err := proto.Open(db, cfg.Protocol, n, cfg.Options)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	maxContent := cfg.Options.MaxContentBytes
	if maxContent <= 0 {
		maxContent = 64 << 10 // proto's default
	}

	res := &Result{
		Task: in.Task.ID, Mode: in.Mode, N: n, Protocol: cfg.Protocol,
		MaxRounds: cfg.MaxRounds, MaxCallsPerTurn: cfg.MaxCallsPerTurn, MessageFormat: st.MessageFormat(), MessageOrder: st.MessageOrder(),
		Agents: make([]AgentResult, n), AgentErrors: []AgentError{},
	}
	if in.Mode == task.ModeSeeded {
		res.Seed = in.Seed
	}
	res.MergedFrom = in.MergedFrom
	ended := make([]bool, n) // failed agents: no more turns
	type outcome struct {
		calls   int
		capped  bool
		err     error
		panic   bool
		stopped bool
	}
	outs := make([]outcome, n)

	rounds := 0
	for r := 1; r <= cfg.MaxRounds; r++ {
		var active []int
		for i := range n {
			if _, ok := st.Submitted(i); !ok && !ended[i] {
				active = append(active, i)
			}
		}
		if len(active) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := st.BeginRound(r); err != nil {
			return nil, err
		}
		rounds = r
		var wg sync.WaitGroup
		for _, i := range active {
			t := &Turn{
				Round: r, ID: i, N: n, Protocol: cfg.Protocol, Shard: in.Shards[i],
				Task: in.Task, Params: in.Params, Scale: in.Scale(), MaxCalls: cfg.MaxCallsPerTurn,
				MaxContentBytes: maxContent, ctx: ctx, store: st,
			}
			wg.Add(1)
			go func(i int, t *Turn) {
				defer wg.Done()
				o := outcome{}
				defer func() {
					if p := recover(); p != nil {
						o.panic, o.stopped = true, true
						if _, ok := p.(errRunaway); ok {
							o.err = fmt.Errorf("runaway: more than %d calls after the turn ended", t.runawayLimit())
						} else {
							o.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
						}
					}
					o.calls, o.capped = t.calls, t.capped
					outs[i] = o // each goroutine writes only its own slot
				}()
				if err := agents[i].Turn(ctx, t); err != nil {
					o.err, o.stopped = err, true
				}
			}(i, t)
		}
		wg.Wait()
		if err := st.EndRound(); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var abort error
		for _, i := range active { // agent id order
			if o := outs[i]; o.stopped && !o.panic && errors.Is(o.err, ErrAbort) {
				abort = fmt.Errorf("round %d, agent %d: %w", r, i, o.err)
				break
			}
		}
		if abort != nil {
			res.Rounds, res.Status, res.Error = rounds, StatusAborted, abort.Error()
			return res, errors.Join(abort, finish(res, cfg, agents, st))
		}
		for _, i := range active { // agent id order
			o := outs[i]
			ar := &res.Agents[i]
			ar.Calls += o.calls
			if o.capped {
				ar.CappedTurns++
				res.CappedTurns++
			}
			if o.stopped {
				ended[i] = true
				msg := o.err.Error()
				if o.panic {
					msg = firstLine(msg)
				}
				ar.Error = msg
				res.AgentErrors = append(res.AgentErrors, AgentError{Round: r, Agent: i, Error: msg, Panic: o.panic})
			}
			outs[i] = outcome{}
		}
	}
	res.Rounds = rounds
	return res, finish(res, cfg, agents, st)
}

// finish scores the state st reached into res and calls cfg.OnEnd.
func finish(res *Result, cfg Config, agents []Agent, st *proto.Store) error {
	score(res, cfg.Instance, st, resultsNextTurn(agents))
	cost(res, agents)
	byModel(res, cfg.Models, st.Counts())
	if cfg.OnEnd != nil {
		return cfg.OnEnd(st)
	}
	return nil
}

// Rescore recomputes the scores of a finished run from what its
// result.json records of each agent (whether and what it submitted, the
// shards it saw and was informed of, its model usage) and the instance:
// the agents' correctness, partial scores and failure labels, S, P,
// P_fine, P_paper, the failure counts, the token cost C and C_code, and
// the per-model scores of a mixed team, with the code a live run scores
// with. The counts of the run's calls and messages (D among them) are
// not scores: they stay as recorded.
func Rescore(res *Result, in *task.Instance) error {
	if len(res.Agents) != in.N || res.N != in.N {
		return fmt.Errorf("round: the result has %d agents (N=%d), the instance N=%d", len(res.Agents), res.N, in.N)
	}
	scoreAgents(res, in)
	if res.Usage != nil {
		costOf(res, *res.Usage)
	}
	modelScores(res)
	return nil
}

// scoreAgents scores each agent's recorded answer against the instance
// (its correctness and partial scores), the run's S, P, P_fine, P_paper
// and their crashes, and labels the failures.
func scoreAgents(res *Result, in *task.Instance) {
	n := in.N
	correct := 0
	var p, pf, pp float64
	res.AllSubmitted, res.PPaperCrashes = true, 0
	for i := range n {
		ar := &res.Agents[i]
		ar.Correct, ar.Partial, ar.PartialFine, ar.PartialPaper, ar.PartialPaperCrash = false, 0, 0, 0, false
		if !ar.Submitted {
			res.AllSubmitted = false
			continue
		}
		ar.Correct = task.Correct(in.Task, in.Expected[i], ar.Answer)
		ar.Partial = task.Partial(in.Task, in.Expected[i], ar.Answer)
		ar.PartialFine = task.PartialFine(in.Task, in.Expected[i], ar.Answer)
		if q, err := task.PartialPublished(in.Task, in.Expected[i], ar.Answer); err != nil {
			ar.PartialPaperCrash = true
			res.PPaperCrashes++
		} else {
			ar.PartialPaper = q
		}
		if ar.Correct {
			correct++
		}
		p += ar.Partial
		pf += ar.PartialFine
		pp += ar.PartialPaper
	}
	res.S = float64(correct) / float64(n)
	res.Success = correct == n
	res.P = p / float64(n)
	res.PFine = pf / float64(n)
	res.PPaper = pp / float64(n)
	label(res, in)
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// score fills the per-agent answers, what they had seen (next: which
// agents see their calls' results only in their next turn; views.go) and
// the run metrics from the store, and scores the answers (scoreAgents).
func score(res *Result, in *task.Instance, st *proto.Store, next []bool) {
	seen, informed := agentViews(in, st, next)
	for i := range in.N {
		ar := &res.Agents[i]
		ar.ID = i
		ar.Answer = json.RawMessage("null")
		ar.Seen, ar.Informed = seen[i], informed[i]
		if sub, ok := st.Submission(i); ok {
			ar.Submitted, ar.Answer, ar.Round = true, sub.Answer, sub.Round
		}
	}
	scoreAgents(res, in)

	c := st.Counts()
	res.CallsByTool = map[string]int{}
	for k, v := range c.Total.Calls {
		res.CallsByTool[k] = v
		res.ToolCalls += v
	}
	res.CallErrors = c.Total.Errors
	res.Messages = c.Total.MessagesSent
	res.Bytes = c.Total.BytesSent
	res.D = c.D()
	if c.Protocol == proto.SFS {
		d := c.DReads()
		res.DReads = &d
	}
}
