package inspect

import "encoding/json"

// Benchmark names, as in Run.Benchmark.
const (
	BenchDES  = "des"
	BenchSilo = "silo"
)

// Run is one finished run of either benchmark, as the export sees it.
type Run struct {
	Benchmark string // BenchDES or BenchSilo
	Source    string // the directory given on the command line that holds the run
	CaseID    string // the suite's case id, or the run directory's name
	// Sample is the Inspect sample id: the case without its seed (and, for
	// des, without controller and model, which name the eval log), so that
	// the seeds of one case are the epochs of one sample.
	Sample string
	Seed   uint64
	// Fields are the run's identifying columns by name (instance,
	// paradigm, controller, model, framework for des; task, level,
	// n, protocol, agent, mode for silo): strings or integers.
	Fields map[string]any
	// Controller names who played (des controller, silo agent); Model the
	// model as the run recorded it, or a coordbench/… label when no model
	// was recorded (ModelRecorded false; docs/export.md).
	Controller string
	// Variant is what else tells runs of one controller and model apart
	// in one log (des: the LLM controller's framework).
	Variant       string
	Model         string
	ModelRecorded bool
	Status        string
	Metrics       []Metric
	Usage         Usage
	// ByModel is the usage per model of a mixed team (silo); empty otherwise.
	ByModel  map[string]Usage
	Messages []Message
	// Summary is the run's outcome in a sentence (the sample's output).
	Summary string
	// Error is set for a run that ended on an error rather than with a
	// result (a des episode aborted or interrupted): the sample's error.
	Error string
	// Meta is what else the run records that a reader of the log wants
	// (violations, secondary accounting, failure labels, answers).
	Meta map[string]any
}

// Metric is one named number of a run; Int marks a count.
type Metric struct {
	Name  string
	Value float64
	Int   bool
}

// Usage is a run's model usage: calls and tokens as the run recorded them.
type Usage struct {
	Calls        int64
	InputTokens  int64
	OutputTokens int64
	// CachedInputTokens is the part of InputTokens a provider's prompt
	// cache served, when the run recorded it.
	CachedInputTokens int64
}

func (u *Usage) add(o Usage) {
	u.Calls += o.Calls
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
}

// Message is one message of a run's transcript.
type Message struct {
	Role       string // system, user, assistant or tool
	Content    string
	ToolCallID string     // tool messages: the call answered
	Function   string     // tool messages: the tool's name, when known
	ToolCalls  []ToolCall // assistant messages: the calls made
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID       string
	Function string
	// Arguments is a JSON object; ParseError says why the recorded
	// arguments were not one (they are then kept as {"raw": text}).
	Arguments  json.RawMessage
	ParseError string
}
