package inspect

// The EvalLog of Inspect's log format version 2, as the log-schema.json of
// inspect_ai at commit f425264 (December 2024, after v0.3.49) defines it
// (testdata/README.md). That schema lists every property of its objects
// as required and allows no others, so every field is written, null where
// coordbench has nothing to say.

// LogVersion is the Inspect log format version written.
const LogVersion = 2

// EvalLog is one Inspect evaluation log (one .json file).
type EvalLog struct {
	Version    int          `json:"version"`
	Status     string       `json:"status"`
	Eval       EvalSpec     `json:"eval"`
	Plan       EvalPlan     `json:"plan"`
	Results    EvalResults  `json:"results"`
	Stats      EvalStats    `json:"stats"`
	Error      *EvalError   `json:"error"`
	Samples    []EvalSample `json:"samples"`
	Reductions []any        `json:"reductions"`
	name       string       // the file name (Name)
}

// Name is the log's file name, as Inspect names its JSON logs
// (<created>_<task>_<task_id>.json, ':' as '-'): its log listing and
// viewer take .json files only by such a name.
func (l *EvalLog) Name() string { return l.name }

// EvalSpec is the log's eval: the task, the model and the dataset.
type EvalSpec struct {
	RunID        string            `json:"run_id"`
	Created      string            `json:"created"`
	Task         string            `json:"task"`
	TaskID       string            `json:"task_id"`
	TaskVersion  int               `json:"task_version"`
	TaskFile     *string           `json:"task_file"`
	TaskAttribs  map[string]any    `json:"task_attribs"`
	TaskArgs     map[string]any    `json:"task_args"`
	Solver       *string           `json:"solver"`
	SolverArgs   map[string]any    `json:"solver_args"`
	Tags         []string          `json:"tags"`
	Dataset      EvalDataset       `json:"dataset"`
	Sandbox      []any             `json:"sandbox"`
	Model        string            `json:"model"`
	ModelBaseURL *string           `json:"model_base_url"`
	ModelArgs    map[string]any    `json:"model_args"`
	Config       map[string]any    `json:"config"`
	Revision     any               `json:"revision"`
	Packages     map[string]string `json:"packages"`
	Metadata     map[string]any    `json:"metadata"`
}

// EvalDataset describes the samples.
type EvalDataset struct {
	Name      *string  `json:"name"`
	Location  *string  `json:"location"`
	Samples   int      `json:"samples"`
	SampleIDs []string `json:"sample_ids"`
	Shuffled  bool     `json:"shuffled"`
}

// EvalPlan is the plan: one step, the controller or agent that played.
type EvalPlan struct {
	Name   string         `json:"name"`
	Steps  []EvalPlanStep `json:"steps"`
	Finish *EvalPlanStep  `json:"finish"`
	Config map[string]any `json:"config"`
}

// EvalPlanStep is one solver of the plan.
type EvalPlanStep struct {
	Solver string         `json:"solver"`
	Params map[string]any `json:"params"`
}

// EvalResults are the scores over all samples.
type EvalResults struct {
	TotalSamples     int            `json:"total_samples"`
	CompletedSamples int            `json:"completed_samples"`
	Scores           []EvalScore    `json:"scores"`
	Metadata         map[string]any `json:"metadata"`
}

// EvalScore is one metric's aggregate over the samples.
type EvalScore struct {
	Name     string                `json:"name"`
	Scorer   string                `json:"scorer"`
	Reducer  *string               `json:"reducer"`
	Params   map[string]any        `json:"params"`
	Metrics  map[string]EvalMetric `json:"metrics"`
	Metadata map[string]any        `json:"metadata"`
}

// EvalMetric is one aggregate value (mean, std).
type EvalMetric struct {
	Name     string         `json:"name"`
	Value    float64        `json:"value"`
	Options  map[string]any `json:"options"`
	Metadata map[string]any `json:"metadata"`
}

// EvalStats holds the times (not recorded by coordbench: empty) and the
// model usage.
type EvalStats struct {
	StartedAt   string                `json:"started_at"`
	CompletedAt string                `json:"completed_at"`
	ModelUsage  map[string]ModelUsage `json:"model_usage"`
}

// EvalError is an error of the eval or a sample.
type EvalError struct {
	Message       string `json:"message"`
	Traceback     string `json:"traceback"`
	TracebackANSI string `json:"traceback_ansi"`
}

// ModelUsage is the tokens of one model.
type ModelUsage struct {
	InputTokens           int64  `json:"input_tokens"`
	OutputTokens          int64  `json:"output_tokens"`
	TotalTokens           int64  `json:"total_tokens"`
	InputTokensCacheWrite *int64 `json:"input_tokens_cache_write"`
	InputTokensCacheRead  *int64 `json:"input_tokens_cache_read"`
}

// EvalSample is one run.
type EvalSample struct {
	ID          string                `json:"id"`
	Epoch       int                   `json:"epoch"`
	Input       string                `json:"input"`
	Choices     []string              `json:"choices"`
	Target      string                `json:"target"`
	Sandbox     []any                 `json:"sandbox"`
	Files       []string              `json:"files"`
	Setup       *string               `json:"setup"`
	Messages    []ChatMessage         `json:"messages"`
	Output      ModelOutput           `json:"output"`
	Scores      map[string]Score      `json:"scores"`
	Metadata    map[string]any        `json:"metadata"`
	Store       map[string]any        `json:"store"`
	Events      []any                 `json:"events"`
	ModelUsage  map[string]ModelUsage `json:"model_usage"`
	Error       *EvalError            `json:"error"`
	Attachments map[string]string     `json:"attachments"`
	Limit       any                   `json:"limit"`
}

// Score is one metric of one run.
type Score struct {
	Value       float64        `json:"value"`
	Answer      *string        `json:"answer"`
	Explanation *string        `json:"explanation"`
	Metadata    map[string]any `json:"metadata"`
}

// ModelOutput is a sample's output: the run's outcome as one message.
type ModelOutput struct {
	Model    string         `json:"model"`
	Choices  []Choice       `json:"choices"`
	Usage    *ModelUsage    `json:"usage"`
	Time     *float64       `json:"time"`
	Metadata map[string]any `json:"metadata"`
	Error    *string        `json:"error"`
}

// Choice is one completion choice.
type Choice struct {
	Message    ChatMessage `json:"message"`
	StopReason string      `json:"stop_reason"`
	Logprobs   any         `json:"logprobs"`
}

// ChatMessage is a system, user, assistant or tool message; the fields
// written are the role's (MarshalJSON).
type ChatMessage struct {
	Role       string
	Content    string
	ToolCalls  []ChatToolCall
	ToolCallID string
	Function   string
}

// ChatToolCall is a tool call of an assistant message.
type ChatToolCall struct {
	ID         string  `json:"id"`
	Function   string  `json:"function"`
	Arguments  any     `json:"arguments"`
	Type       string  `json:"type"`
	ParseError *string `json:"parse_error"`
	View       any     `json:"view"`
}
