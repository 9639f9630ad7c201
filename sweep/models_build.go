package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/suite"
)

// ModelOptions are what a process changes in the models it builds from an
// experiment (BuildModels): the zero value is sweep run's.
type ModelOptions struct {
	// OverrideCache: Cache and CacheMode replace the experiment's
	// llm.cache and llm.cache_mode (a distributed worker's per-case cache;
	// a coordinator's empty replay cache, so that it needs no key). Cache
	// is a path, used as it is.
	OverrideCache    bool
	Cache, CacheMode string
	// Limiter, if set, gives the global limiter of a model entry, by its
	// label (a distributed sweep's coordinator's permits): every attempt
	// asks it, besides the entry's own limits.
	Limiter func(entry string) llm.Limiter
	// Stubs are the stub models the entries' "stub:" base URLs may name
	// (llm.Options.Stubs).
	Stubs llm.Stubs
}

// ModelSet is an experiment's model-backed controllers (des) or agents
// (silo), one per model entry (and, for des, per framework), with what a
// runner needs to schedule and show them.
type ModelSet struct {
	Models
	// Concurrency is the sum of the entries' request limits (for silo
	// at least suite.LLMWorkers each): how many cases at once keep the
	// endpoints busy.
	Concurrency int
	// Status is the endpoints' live state for progress lines (nil without
	// models).
	Status func() string
}

// BuildModels builds the model-backed controllers or agents of e with
// the libraries' own configurations (llmctl.MakerConfig,
// play.LLMConfig): one per entry of its models list (or its llm
// section) and, for des, per framework. The models share one response
// cache; the closer releases it. Errors name the experiment's field.
func BuildModels(e *Experiment, o ModelOptions) (*ModelSet, func(), error) {
	set := &ModelSet{}
	models := e.ModelList()
	if !e.WithLLM() {
		if len(models) > 0 {
			return nil, nil, fmt.Errorf("the experiment names models but has no model-backed controller or agents (des controllers: llm; silo agent_kinds: llm)")
		}
		return set, func() {}, nil
	}
	if len(models) == 0 {
		return nil, nil, errors.New("the experiment runs llm controllers or agents: give its models (a models list, or model and base_url in the llm section; docs/experiments.md)")
	}
	shared := LLM{}
	if e.LLM != nil {
		shared = *e.LLM
	}
	if o.OverrideCache {
		shared.Cache, shared.CacheMode = o.Cache, o.CacheMode
	}
	opt := llm.Options{MaxAttempts: shared.MaxAttempts, CacheMode: shared.CacheMode, CacheKeyURL: shared.CacheKeyURL, Stubs: o.Stubs}
	if shared.Timeout != "" {
		d, err := time.ParseDuration(string(shared.Timeout))
		if err != nil {
			return nil, nil, e.modelError("llm", opterr.New("Timeout", "want a duration such as 90s or 2m (got %q)", shared.Timeout))
		}
		opt.Timeout = d
	}
	closer := func() {}
	if shared.Cache != "" {
		c, err := llm.OpenCache(e.Path(shared.Cache)) // relative to the experiment file, as its other paths
		if err != nil {
			return nil, nil, err
		}
		opt.Cache, closer = c, func() { c.Close() }
	}
	fail := func(err error) (*ModelSet, func(), error) {
		closer()
		return nil, nil, err
	}
	var statuses []func() string
	for i, m := range models {
		at := "llm"
		if len(e.Models) > 0 {
			at = "models[" + strconv.Itoa(i) + "]"
		}
		o2 := opt
		o2.Endpoints = llm.NewEndpoints() // each entry its own limits, as on the command line
		if o.Limiter != nil {
			o2.Limiter = o.Limiter(m.Label())
		}
		if m.Limits.Concurrency == 0 {
			m.Limits.Concurrency = llm.DefaultConcurrency
		}
		if e.Benchmark == BenchmarkDes {
			if m.MaxTokens == 0 {
				m.MaxTokens = llmctl.DefaultMaxTokens // no cap, as des run's --llm-max-tokens
			}
			var last *llmctl.Maker
			for _, fw := range e.Frameworks() {
				mk, err := llmctl.NewMaker(llmctl.MakerConfig{Model: m, Options: o2, Framework: fw,
					ReplyParsing: shared.ReplyParsing, MaxModelFailures: llmctl.DefaultMaxModelFailures,
					AbortOnModelError: true}) // a model failure fails the case, which reruns next time
				if err != nil {
					return fail(e.modelError(at, err))
				}
				set.DesMakers = append(set.DesMakers, mk)
				last = mk
			}
			statuses = append(statuses, last.Status)
			set.Concurrency += m.Limits.Concurrency
			continue
		}
		agent, err := play.NewLLMAgent(play.LLMConfig{Model: m, Options: o2, ToolFormat: shared.ToolFormat,
			ToolResults: shared.ToolResults, Scaffold: strings.Join(shared.Scaffold, ","), ContextBudget: shared.ContextBudget,
			ReplyReserve: shared.ReplyReserve, MaxModelFailures: llmagent.DefaultMaxModelFailures})
		if err != nil {
			return fail(e.modelError(at, err))
		}
		set.SiloLLMs = append(set.SiloLLMs, agent)
		statuses = append(statuses, agent.Status)
		set.Concurrency += max(m.Limits.Concurrency, suite.LLMWorkers)
	}
	set.Status = func() string {
		var parts []string
		for i, st := range statuses {
			parts = append(parts, models[i].Label()+": "+st())
		}
		return strings.Join(parts, "; ")
	}
	if len(statuses) == 1 {
		set.Status = statuses[0]
	}
	return set, closer, nil
}

// modelFields are the experiment fields of the model configurations'
// options: an entry's own (under models[i], or llm for the one model) or
// the settings the models share (under llm).
var (
	entryFields = map[string]string{"Name": "name", "Model": "model", "BaseURL": "base_url", "APIKeyEnv": "api_key_env",
		"Temperature": "temperature", "MaxTokens": "max_tokens", "Seed": "seed", "Price": "price", "LLM": "model"}
	sharedFields = map[string]string{"Timeout": "timeout", "MaxAttempts": "max_attempts", "Cache": "cache",
		"CacheMode": "cache_mode", "CacheKeyURL": "cache_key_url", "Framework": "framework", "ReplyParsing": "reply_parsing",
		"ToolFormat": "tool_format", "ToolResults": "tool_results", "Scaffold": "scaffold", "ContextBudget": "context_budget",
		"ReplyReserve": "reply_reserve"}
)

// OptionField names, for a user, the experiment field that sets a model
// configuration's option ("llm.cache_mode", "base_url of the model"), or
// "" if no field does. Errors that name options (opterr) reach the user of
// an experiment file in these terms.
func OptionField(option string) string {
	if f, ok := entryFields[option]; ok {
		return f + " of the model (llm, or its models entry)"
	}
	if f, ok := sharedFields[option]; ok {
		return "llm." + f
	}
	return ""
}

// modelError puts an error of a model configuration in the experiment's
// terms: the field of the entry at (models[i] or llm) or of the llm
// section that sets the option it names.
func (e *Experiment) modelError(at string, err error) error {
	var oe *opterr.Error
	if !errors.As(err, &oe) {
		return fmt.Errorf("experiment %s: %w", at, err)
	}
	field := ""
	if f, ok := entryFields[oe.Option]; ok {
		field = at + "." + f
	} else if f, ok := sharedFields[oe.Option]; ok {
		field = "llm." + f
		if oe.Option == "Framework" && e.Des != nil && len(e.Des.Frameworks) > 0 {
			field = "des.frameworks"
		}
	} else {
		return fmt.Errorf("experiment %s: %w", at, err)
	}
	return &Error{File: e.file, Line: e.lineOf(field), Field: field, Msg: oe.Err.Error()}
}
