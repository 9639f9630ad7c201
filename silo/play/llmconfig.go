package play

import (
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
)

// Tool formats of LLM agents (LLMConfig.ToolFormat).
const (
	ToolFormatXML    = "xml"    // the published <tool_call> blocks
	ToolFormatNative = "native" // native function calling
)

// LLMConfig says how to build the LLM agents of a run or a suite. Validate
// checks it; NewLLMAgent checks it and builds the model client. Errors
// are *opterr.Error naming the field ("ToolFormat") or, for the model, the
// llm.Spec field ("BaseURL"); a front end names them its own way.
type LLMConfig struct {
	// Model is the model. Its Name, if set, labels the agents (Label)
	// instead of its Model.
	Model llm.Spec
	// Options are the client's settings besides the model's (timeouts,
	// the response cache, the process's shared endpoint state).
	Options llm.Options
	// ToolFormat is how agents call tools: ToolFormatXML ("" too) or
	// ToolFormatNative.
	ToolFormat string
	// Scaffold is a comma list of prompt scaffolds (llmagent.ParseScaffold;
	// "" or "none": none).
	Scaffold string
	// ContextBudget and ReplyReserve are llmagent.Config's (not negative;
	// ReplyReserve 0 is llmagent.DefaultReplyReserve).
	ContextBudget, ReplyReserve int64
	// MaxModelFailures is llmagent.Config's, at least 1.
	MaxModelFailures int
	// ToolResults is how tool results are written for the model:
	// "published" ("" too; srsly/ujson, as published) or "compact"
	// (llmagent.ResultEncoding).
	ToolResults string
}

// Validate checks c without building anything: the first bad field.
func (c LLMConfig) Validate() error {
	_, err := c.check()
	return err
}

// check validates c and returns its scaffold.
func (c LLMConfig) check() (llmagent.Scaffold, error) {
	if c.Model.Model == "" || c.Model.BaseURL == "" {
		return llmagent.Scaffold{}, opterr.New("LLM", "LLM agents need a model and a base URL (try a stub: coordbench llm stub --policy silo-gather)")
	}
	if c.ToolFormat != "" && c.ToolFormat != ToolFormatXML && c.ToolFormat != ToolFormatNative {
		return llmagent.Scaffold{}, opterr.New("ToolFormat", "want %s or %s (got %q)", ToolFormatXML, ToolFormatNative, c.ToolFormat)
	}
	sc, err := llmagent.ParseScaffold(c.Scaffold)
	if err != nil {
		return llmagent.Scaffold{}, opterr.Wrap("Scaffold", err)
	}
	if c.ContextBudget < 0 {
		return llmagent.Scaffold{}, opterr.New("ContextBudget", "must not be negative (got %d)", c.ContextBudget)
	}
	if c.ReplyReserve < 0 {
		return llmagent.Scaffold{}, opterr.New("ReplyReserve", "must not be negative (got %d)", c.ReplyReserve)
	}
	if _, err := llmagent.ParseResultEncoding(c.ToolResults); err != nil {
		return llmagent.Scaffold{}, opterr.Wrap("ToolResults", err)
	}
	if c.MaxModelFailures < 1 {
		return llmagent.Scaffold{}, opterr.New("MaxModelFailures", "must be at least 1 (got %d)", c.MaxModelFailures)
	}
	if err := c.Model.Validate(); err != nil {
		return llmagent.Scaffold{}, err
	}
	return sc, c.Model.Config("", c.Options).Validate()
}

// NewLLMAgent validates c and builds the agents' configuration with its
// model client.
func NewLLMAgent(c LLMConfig) (*LLMAgent, error) {
	sc, err := c.check()
	if err != nil {
		return nil, err
	}
	cl, err := llm.New(c.Model.Config("", c.Options))
	if err != nil {
		return nil, err
	}
	cfg := cl.Config()
	if c.ReplyReserve == 0 {
		c.ReplyReserve = llmagent.DefaultReplyReserve
	}
	enc, _ := llmagent.ParseResultEncoding(c.ToolResults) // checked
	name := c.Model.Name
	if name == cfg.Model {
		name = "" // the label is the model's own: the manifest names no other
	}
	return &LLMAgent{
		Config: llmagent.Config{Model: cl, Native: c.ToolFormat == ToolFormatNative, Scaffold: sc,
			ContextBudget: c.ContextBudget, ReplyReserve: c.ReplyReserve, MaxModelFailures: c.MaxModelFailures,
			ResultEncoding: enc},
		Name:  name,
		Model: cfg.Model, BaseURL: cfg.BaseURL, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens, Seed: cfg.Seed,
		stats: cl.Stats(),
	}, nil
}

// Status is the model endpoint's live state for progress lines ("" for
// agents not built by NewLLMAgent).
func (l *LLMAgent) Status() string {
	if l.stats == nil {
		return ""
	}
	return l.stats.String()
}
