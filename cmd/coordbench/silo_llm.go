package main

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/suite"
)

// siloLLMFlags are the flags of LLM agents (--agent llm) on silo run and
// silo suite: the model layer's flags plus the agent's own.
type siloLLMFlags struct {
	modelFlags
	toolFormat, scaffold string
	contextBudget        int64
	replyReserve         int64
	maxModelFailures     int
	stats                *llm.Stats // the endpoint's counters once built
}

func (f *siloLLMFlags) register(fs *pflag.FlagSet) {
	f.modelFlags.register(fs, "model name (with --agent llm)", 0, "maximum output tokens per model call (0: the server's default)")
	fs.StringVar(&f.toolFormat, "tool-format", "xml", "how agents call tools: xml (the published <tool_call> format) or native (function calling)")
	fs.StringVar(&f.scaffold, "scaffold", "none", "prompt scaffolds (comma list): planning, reminders, scratchpad, no-topology-hint")
	fs.Int64Var(&f.contextBudget, "context-budget", 0, "tokens per agent prompt; older turns are dropped to fit (0: full history, as published)")
	fs.Int64Var(&f.replyReserve, "reply-reserve", llmagent.DefaultReplyReserve, "tokens kept free for the reply under --context-budget")
	fs.IntVar(&f.maxModelFailures, "max-model-failures", llmagent.DefaultMaxModelFailures, "silo run: consecutive failed model calls after which an agent gives up (in a suite the first one fails the case, which reruns next time)")
}

// agent builds the LLM agent configuration if agents (a comma list of
// agent kinds) names llm; nil otherwise. The closer releases the cache.
func (f *siloLLMFlags) agent(agents string) (*suite.LLMAgent, func(), error) {
	if !slices.Contains(splitList(agents), suite.AgentLLM) {
		if err := f.onlyWith(false, "--agent does not include llm"); err != nil {
			return nil, nil, err
		}
		return nil, func() {}, nil
	}
	if f.model == "" || f.baseURL == "" {
		return nil, nil, fmt.Errorf("--agent llm needs --llm-model and --llm-base-url")
	}
	if f.toolFormat != "xml" && f.toolFormat != "native" {
		return nil, nil, fmt.Errorf("--tool-format: want xml or native (got %q)", f.toolFormat)
	}
	sc, err := llmagent.ParseScaffold(f.scaffold)
	if err != nil {
		return nil, nil, fmt.Errorf("--scaffold: %w", err)
	}
	if f.contextBudget < 0 || f.replyReserve < 0 || f.maxModelFailures < 1 {
		return nil, nil, fmt.Errorf("--context-budget and --reply-reserve must not be negative, --max-model-failures at least 1")
	}
	cache, closer, err := f.openCache()
	if err != nil {
		return nil, nil, err
	}
	cl, err := f.client(f.model, cache)
	if err != nil {
		closer()
		return nil, nil, err
	}
	f.stats = cl.Stats()
	cfg := cl.Config()
	return &suite.LLMAgent{
		Config: llmagent.Config{Model: cl, Native: f.toolFormat == "native", Scaffold: sc,
			ContextBudget: f.contextBudget, ReplyReserve: f.replyReserve, MaxModelFailures: f.maxModelFailures},
		Model: cfg.Model, BaseURL: cfg.BaseURL, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens, Seed: cfg.Seed,
	}, closer, nil
}
