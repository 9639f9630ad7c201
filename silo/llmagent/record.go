package llmagent

import (
	"encoding/json"
	"fmt"

	"github.com/coordbench/coordbench/llm"
)

// TurnRecord is one agent's turn in one round: what was added to its
// context, what the model replied, the calls parsed from the reply and
// their results, and the tokens. It holds nothing that depends on wall
// time, so a run and its replay from the response cache log the same
// records, byte for byte; Timing holds the wall-clock side.
type TurnRecord struct {
	Round int `json:"round"`
	Agent int `json:"agent"`
	// Model is the agent's model in a mixed team (Config.Label); omitted
	// for a team of one model.
	Model string `json:"model,omitempty"`
	// Input are the messages added to the agent's context since its
	// previous call: the system and task prompts on its first turn, then
	// the previous turn's tool results, feedback and scaffold notes.
	Input   []llm.Message `json:"input"`
	Context ContextInfo   `json:"context"`
	// Reply is the reply text: whole in memory, and in the turn log up to
	// MaxInlineReply bytes; a longer one is cut there, RawText says so,
	// and the whole is in the run's reply store (replies.go, LoadReplies).
	Reply string `json:"reply"`
	RawText
	// ReplyToolCalls are the function calls of a native-mode reply (a
	// call the server sent without an id gets call_<turn>_<index>, as in
	// the conversation); long arguments are cut in the log as Reply is.
	ReplyToolCalls []ReplyCall  `json:"reply_tool_calls,omitempty"`
	FinishReason   string       `json:"finish_reason,omitempty"`
	Calls          []CallRecord `json:"calls"`
	// Dropped counts calls of the reply that were not executed because the
	// turn had ended (after wait or submit_result, or at the per-turn cap).
	Dropped int       `json:"dropped"`
	Outcome string    `json:"outcome"` // Outcome*
	Error   string    `json:"error,omitempty"`
	Usage   llm.Usage `json:"usage"`
}

// CallRecord is one parsed tool call and its result. Executed is false
// for a call the harness answered itself (bad arguments, submit_result in
// a planning round); executed calls are also in the run's tool-call log.
type CallRecord struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Result   json.RawMessage `json:"result"`
	Executed bool            `json:"executed"`
}

// Timing is the wall-clock side of a TurnRecord: latency of the model call
// (retries and waits for a slot included), HTTP attempts, and whether the
// reply came from the response cache. It is for monitoring only.
type Timing struct {
	Round     int     `json:"round"`
	Agent     int     `json:"agent"`
	LatencyMS float64 `json:"latency_ms"`
	Attempts  int     `json:"attempts"`
	Cached    bool    `json:"cached"`
}

// Conversation rebuilds, from a run's turn log (its replies whole: read
// back from a log, through LoadReplies), the exact messages agent
// sent to the model in its call of round r: every earlier input and reply
// of the agent in order, minus the turns the context budget had dropped by
// then (Context.DroppedTurns, oldest first), with the omission note on the
// task prompt. It is how the log holds every prompt without repeating the
// history in each record.
func Conversation(recs []TurnRecord, agent, r int) ([]llm.Message, error) {
	h := &history{}
	for _, rec := range recs {
		if rec.Agent != agent || rec.Round > r {
			continue
		}
		h.add(rec.Input...)
		if rec.Round == r {
			if len(h.msgs) < 2 {
				return nil, fmt.Errorf("llmagent: agent %d's log does not start with the system and task prompts", agent)
			}
			for h.dropped < rec.Context.DroppedTurns {
				if !h.dropOldest() {
					return nil, fmt.Errorf("llmagent: agent %d round %d: log drops %d turns, only %d can be", agent, r, rec.Context.DroppedTurns, h.dropped)
				}
			}
			out, _ := h.request()
			return out, nil
		}
		if rec.Outcome != OutcomeModelError {
			if err := rec.whole(); err != nil {
				return nil, err
			}
			h.add(llm.Message{Role: llm.RoleAssistant, Content: rec.Reply, ToolCalls: ToolCalls(rec.ReplyToolCalls)})
		}
	}
	return nil, fmt.Errorf("llmagent: no turn of agent %d in round %d", agent, r)
}

// whole reports an error if the record's reply is cut (read from a turn
// log without LoadReplies).
func (r *TurnRecord) whole() error {
	cut := r.RawText.Truncated
	for _, c := range r.ReplyToolCalls {
		cut = cut || c.Truncated
	}
	if cut {
		return fmt.Errorf("llmagent: agent %d round %d: the reply is cut in the turn log; its whole text is in the reply store (LoadReplies)", r.Agent, r.Round)
	}
	return nil
}
