package coord

import (
	"encoding/json"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// Source says who produced a committed action (decisions.jsonl "source").
type Source string

// Decision sources, as audited in G_fb and G_llm.
const (
	SourceBuiltin  Source = "builtin"
	SourceLLM      Source = "llm"
	SourceExternal Source = "external"
	SourceFallback Source = "fallback"
)

// Audit is one committed decision of one agent, as logged in decisions.jsonl.
type Audit struct {
	Step      int     `json:"step"`
	Time      float64 `json:"time"`
	AgentID   string  `json:"agent_id"`
	Role      string  `json:"role"`
	Kind      string  `json:"kind"`
	Action    int     `json:"action"`
	Source    Source  `json:"source"`
	Requested *int    `json:"requested,omitempty"` // what the controller asked for, when it was replaced
	Reason    string  `json:"reason,omitempty"`    // why a fallback was used
	Messages  int     `json:"messages"`            // protocol messages this decision caused
	// What the controller reported about this answer (model controllers):
	// the raw reply, tokens, latency; absent for built-in controllers.
	*AgentNote
	Payload *View `json:"payload"`
}

// AgentNote is what a controller reports about one agent's answer, for the
// audit: the raw reply it parsed, why it was unusable if it was, and the
// cost of getting it.
type AgentNote struct {
	// Raw is the reply, or its first untrusted.MaxReply bytes (SetRaw):
	// then RawTruncated is set and RawLen and RawSHA256 describe the whole
	// reply (the response cache, not the audit, keeps it whole).
	Raw          string `json:"raw_reply,omitempty"`
	RawLen       int    `json:"raw_len,omitempty"`
	RawSHA256    string `json:"raw_sha256,omitempty"`
	RawTruncated bool   `json:"raw_truncated,omitempty"`
	Error        string `json:"reply_error,omitempty"`
	// Parse is how an accepted reply was read (model controllers; see
	// llmctl's Parse* constants: "exact", "json", "bare_integer",
	// "fenced_json", "fenced_integer", "in_text"); empty when refused.
	Parse            string `json:"parse,omitempty"`
	Model            string `json:"model,omitempty"`
	PromptTokens     int64  `json:"prompt_tokens,omitempty"`
	CompletionTokens int64  `json:"completion_tokens,omitempty"`
	// PromptCachedTokens are the part of PromptTokens the provider served
	// from its prompt cache (llm.Usage.PromptCachedTokens), billed at its
	// cached-input price; not to be confused with Cached (the response
	// cache).
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
	Calls              int   `json:"calls,omitempty"`
	// PromptSHA256 is the hex SHA-256 of the messages the model was sent
	// (llmctl.PromptSHA256), and FrameworkState the controller-side
	// memory that went into the user message beside the view (Payload):
	// with them the request is rebuilt and checked from the audit alone
	// (coordbench des show --request). Model controllers only; a pointer
	// keeps notes comparable.
	PromptSHA256   string           `json:"prompt_sha256,omitempty"`
	FrameworkState *json.RawMessage `json:"framework_state,omitempty"`
	// LatencyMS (wall time of getting the answer) and Cached (every call
	// behind it came from the response cache) depend on how the run was
	// executed, not on what it decided: they are not in the audit (so a
	// replay's decisions.jsonl equals the live run's) but in the run's
	// timing log (harness.FileTiming).
	// Retries (attempts beyond the first of the answer's calls) depend on
	// the endpoint's behaviour at the time: timing.jsonl too.
	LatencyMS float64 `json:"-"`
	Cached    bool    `json:"-"`
	Retries   int     `json:"-"`
	// DecidedBy, when set, is the source of this agent's answer where it
	// differs from the step's: a controller that answers some agents of a
	// step itself and hands the others to another (des serve's played and
	// built-in agents) says so per agent. A fallback still wins.
	DecidedBy Source `json:"-"`
}

// SetRaw records reply as the note's raw reply, cut to untrusted.MaxReply
// bytes: a model or a runner may answer with megabytes on every call, and
// the audit has a line per agent and decision.
func (n *AgentNote) SetRaw(reply string) {
	c := untrusted.Clip(reply, untrusted.MaxReply)
	n.Raw, n.RawTruncated, n.RawLen, n.RawSHA256 = c.Text, c.Truncated, c.Len, c.SHA256
}

// Annotator is implemented by controllers that report per-agent notes.
// The runner calls Notes right after Act, for the same decision.
type Annotator interface {
	Notes() map[string]AgentNote
}

// Message types (G_cm counts them all).
const (
	MsgAnnounce = "announce" // decider → cell: a work item is open for bids
	MsgBid      = "bid"      // cell → decider
	MsgDecline  = "decline"  // cell → decider
	MsgAward    = "award"    // decider → cell
	MsgAllocate = "allocate" // plant → area
	MsgAssign   = "assign"   // plant or area → cell
	MsgAccept   = "accept"   // cell → assigner
	MsgReject   = "reject"   // cell → assigner
	MsgReroute  = "reroute"  // area → sibling cell
	MsgEscalate = "escalate" // area → plant
	MsgReport   = "report"   // area → plant: the item is placed
)

// Message is one protocol-level coordination message (messages.jsonl).
type Message struct {
	Step     int     `json:"step"`
	Time     float64 `json:"time"`
	Type     string  `json:"type"`
	Sender   string  `json:"sender"`
	Receiver string  `json:"receiver"`
	Job      int     `json:"job"`
	Op       int     `json:"op"`
	// Forced marks the plant's contract-safe assignment after every
	// protocol option failed (no decision step).
	Forced bool `json:"forced,omitempty"`
}
