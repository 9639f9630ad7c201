package llmagent

import (
	"strconv"

	"github.com/coordbench/coordbench/llm"
)

// history is one agent's conversation and its context-budget policy.
//
// By default it is the full history, as published: system prompt, task
// prompt, then every reply and every tool-result message. With a budget
// (tokens, > 0) it truncates before a call whose estimated prompt would
// not leave the reply reserve free: it drops whole earlier turns (an
// assistant reply with the tool results and notes that follow it), oldest
// first, never the system prompt, the task prompt or the latest turn, and
// notes the omission in the task prompt's copy sent to the model. Dropped
// turns stay dropped. If the prompt is still over budget with nothing left
// to drop, it is sent anyway and the call is marked over budget.
//
// Token estimates: the model's tokenizer is unknown here, so the estimate
// is characters × the tokens-per-character ratio of the last call the
// server counted (prompt_tokens ÷ characters sent), 1/4 before the first.
type history struct {
	msgs    []llm.Message // [0] system, [1] task prompt, then turns
	budget  int64         // 0: full history
	reserve int64         // tokens kept free for the reply
	ratio   float64       // tokens per character
	dropped int           // turns dropped so far
}

// ContextInfo describes the context of one model call (turn log, and the
// appendix-D context analysis).
type ContextInfo struct {
	Messages int `json:"messages"` // messages sent
	Chars    int `json:"chars"`    // characters of content and tool-call text sent
	// EstTokens is the estimate the budget was checked against (0 without
	// a budget); PromptTokens in the turn's usage is the server's count.
	EstTokens     int64 `json:"est_tokens,omitempty"`
	DroppedTurns  int   `json:"dropped_turns"` // earlier turns dropped so far (cumulative)
	OverBudget    bool  `json:"over_budget,omitempty"`
	BudgetTokens  int64 `json:"budget_tokens,omitempty"`
	ReserveTokens int64 `json:"reserve_tokens,omitempty"`
}

func newHistory(system, prompt string, budget, reserve int64) *history {
	return &history{
		msgs:    []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: prompt}},
		budget:  budget,
		reserve: reserve,
		ratio:   0.25,
	}
}

func (h *history) add(m ...llm.Message) { h.msgs = append(h.msgs, m...) }

func msgChars(m llm.Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}

func charsOf(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += msgChars(m)
	}
	return n
}

// turnStarts returns the indices of the assistant messages after the task
// prompt: each starts one turn.
func (h *history) turnStarts() []int {
	var out []int
	for i := 2; i < len(h.msgs); i++ {
		if h.msgs[i].Role == llm.RoleAssistant {
			out = append(out, i)
		}
	}
	return out
}

// dropOldest drops the oldest turn (messages from its assistant reply up
// to the next reply), unless only the latest turn is left.
func (h *history) dropOldest() bool {
	starts := h.turnStarts()
	if len(starts) < 2 {
		return false
	}
	h.msgs = append(h.msgs[:starts[0]], h.msgs[starts[1]:]...)
	h.dropped++
	return true
}

// omittedNote is appended to the task prompt's copy once turns are dropped.
func omittedNote(k int) string {
	return "\n\n[Context note: your " + strconv.Itoa(k) + " earliest turn(s) were removed from this conversation to fit the context budget. " +
		"What they held is gone unless you restated it in a later reply: received messages are not delivered again (shared files can be read again).]"
}

// request applies the budget and returns the messages to send (a fresh
// slice the caller may keep) with their description.
func (h *history) request() ([]llm.Message, ContextInfo) {
	info := ContextInfo{BudgetTokens: h.budget}
	if h.budget > 0 {
		info.ReserveTokens = h.reserve
		for {
			est := int64(float64(charsOf(h.msgs)+len(omittedNote(h.dropped+1))) * h.ratio)
			info.EstTokens = est
			if est+h.reserve <= h.budget {
				break
			}
			if !h.dropOldest() { // only the latest turn is left
				info.OverBudget = true
				break
			}
		}
	}
	out := make([]llm.Message, len(h.msgs))
	copy(out, h.msgs)
	if h.dropped > 0 {
		out[1].Content += omittedNote(h.dropped)
	}
	info.Messages = len(out)
	info.Chars = charsOf(out)
	info.DroppedTurns = h.dropped
	return out, info
}

// calibrate updates the tokens-per-character ratio from a call the server
// counted.
func (h *history) calibrate(chars int, promptTokens int64) {
	if chars > 0 && promptTokens > 0 {
		h.ratio = float64(promptTokens) / float64(chars)
	}
}
