package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/time/rate"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
)

// modelFlags are the model-layer flags shared by every command that calls
// a model (docs/llm.md): they fill an llm.Spec and llm.Options, which the
// libraries check (llmctl.MakerConfig, play.LLMConfig).
type modelFlags struct {
	spec      llm.Spec
	cachePath string
	cacheMode string
	cacheURL  bool
	timeout   time.Duration
	attempts  int
	seed      int64
	fs        *pflag.FlagSet // to tell whether --llm-seed was given
	// retries, if set, receives a line when a model call is about to be
	// retried (retryNotice).
	retries io.Writer
	// endpoints owns the per-endpoint limits and connection pools that
	// every client of this command shares (created by register).
	endpoints *llm.Endpoints
}

// register adds the flags; modelHelp and maxTokens are the command's help
// for --llm-model and its default output-token cap.
func (f *modelFlags) register(fs *pflag.FlagSet, modelHelp string, maxTokens int, maxTokensHelp string) {
	f.endpoints = llm.NewEndpoints()
	s := &f.spec
	fs.StringVar(&s.Model, "llm-model", "", modelHelp)
	fs.StringVar(&s.BaseURL, "llm-base-url", "", "OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1, or stub:POLICY (e.g. stub:generic?seed=3) for a stub model played in-process (coordbench llm stub)")
	fs.StringVar(&s.APIKeyEnv, "llm-api-key-env", "", "name of the environment variable holding the API key (the key is never written anywhere)")
	fs.IntVar(&s.Limits.Concurrency, "llm-concurrency", llm.DefaultConcurrency, "simultaneous requests to the endpoint")
	fs.Float64Var(&s.Limits.RPM, "llm-rpm", 0, "requests per minute to the endpoint (0: unlimited)")
	fs.StringVar(&f.cachePath, "llm-cache", "", "response cache (SQLite file)")
	fs.StringVar(&f.cacheMode, "llm-cache-mode", "", "off, read-write (default with --llm-cache) or replay (cache only, offline)")
	fs.BoolVar(&f.cacheURL, "llm-cache-key-url", false, "keep the base URL in the response cache's key (default: the model and the request, so that a replay survives a new port or host)")
	fs.DurationVar(&f.timeout, "llm-timeout", llm.DefaultTimeout, "timeout of one attempt")
	fs.IntVar(&f.attempts, "llm-max-attempts", llm.DefaultMaxAttempts, "attempts per call, retries included")
	temp := &temperatureFlag{spec: s}
	fs.Var(temp, "llm-temperature", "sampling temperature sent with every request, in [0, 2] (unset: none is sent and the server's default applies, as in the published SILO-BENCH call)")
	fs.Var(temp, "temperature", "the same as --llm-temperature")
	fs.IntVar(&s.MaxTokens, "llm-max-tokens", maxTokens, maxTokensHelp)
	fs.Int64Var(&f.seed, "llm-seed", 0, "sampling seed sent to the server (unset: none; servers without seed support ignore it)")
	f.fs = fs
}

// temperatureFlag is --llm-temperature (and its short form
// --temperature): unset leaves Spec.Temperature nil, so that no
// temperature is sent.
type temperatureFlag struct{ spec *llm.Spec }

func (t *temperatureFlag) String() string {
	if t == nil || t.spec == nil || t.spec.Temperature == nil {
		return ""
	}
	return strconv.FormatFloat(*t.spec.Temperature, 'g', -1, 64)
}

func (t *temperatureFlag) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	t.spec.Temperature = &f
	return nil
}

func (t *temperatureFlag) Type() string { return "float" }

// values are the model and client options the flags give, with
// --llm-cache opened (the closer releases it).
func (f *modelFlags) values() (llm.Spec, llm.Options, func(), error) {
	spec := f.spec
	if f.fs != nil && f.fs.Changed("llm-seed") {
		seed := f.seed
		spec.Seed = &seed
	}
	o := llm.Options{Timeout: f.timeout, MaxAttempts: f.attempts, CacheMode: f.cacheMode, CacheKeyURL: f.cacheURL, Endpoints: f.endpoints,
		Stubs: stubPolicies()}
	if f.retries != nil {
		o.OnRetry = retryNotice(f.retries, retryNoticeEvery)
	}
	if f.cachePath == "" {
		return spec, o, func() {}, nil
	}
	c, err := llm.OpenCache(f.cachePath)
	if err != nil {
		return llm.Spec{}, llm.Options{}, nil, err
	}
	o.Cache = c
	return spec, o, func() { c.Close() }, nil
}

// buildWith checks a library configuration with validate (before the
// response cache is opened), then builds it with the flags' model and
// client options; the closer releases the cache.
func buildWith[R any](f *modelFlags, validate func() error, build func(llm.Spec, llm.Options) (R, error)) (R, func(), error) {
	var zero R
	if err := validate(); err != nil {
		return zero, nil, err
	}
	spec, o, closer, err := f.values()
	if err != nil {
		return zero, nil, err
	}
	r, err := build(spec, o)
	if err != nil {
		closer()
		return zero, nil, err
	}
	return r, closer, nil
}

// onlyWith refuses the flags that choose a model (--llm-model,
// --llm-base-url) when the command runs no model: ok is whether it does,
// why says why not ("--controller is not llm").
func (f *modelFlags) onlyWith(ok bool, why string) error {
	if ok || (f.spec.Model == "" && f.spec.BaseURL == "") {
		return nil
	}
	return fmt.Errorf("--llm-model/--llm-base-url given, but %s: drop them, or run a model", why)
}

// retryNoticeEvery is how often, at most, retryNotice prints.
const retryNoticeEvery = 10 * time.Second

// retryNotice returns an llm.Options.OnRetry that tells w that a model
// call is stalled: which model, the attempt that failed, the failure's
// class and reason, and the wait. It prints the first retry at once and
// then at most one line per every, however many calls are retrying.
func retryNotice(w io.Writer, every time.Duration) func(llm.Retry) {
	s := &rate.Sometimes{First: 1, Interval: every} // Do serializes the prints
	return func(r llm.Retry) {
		s.Do(func() {
			e := r.Err
			reason := e.Reason
			if e.Status != 0 {
				reason = fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), reason)
			}
			fmt.Fprintf(w, "llm: model %q at %s: attempt %d of %d failed (%s: %s); retrying in %s\n",
				e.Model, e.Endpoint, r.Attempt, r.MaxAttempts, e.Class, reason, r.Wait.Round(100*time.Millisecond))
		})
	}
}

// llmFlags are the model flags of the commands that run an LLM controller
// of the scheduling benchmark: they fill an llmctl.MakerConfig.
type llmFlags struct {
	modelFlags
	framework, replyParsing string
	maxModelFailures        int
	// abortOnModelError: the first failed model call fails the run (suites
	// and their cases), whatever --max-model-failures says.
	abortOnModelError bool
}

func (f *llmFlags) register(fs *pflag.FlagSet) {
	f.modelFlags.register(fs, "model name, or per role: plant=M1,area=M2,cell=M3 (with --controller llm)",
		llmctl.DefaultMaxTokens, "maximum output tokens per model call (0: no cap, max_completion_tokens is not sent; the reply needs a handful, a reasoning model's thinking many more)")
	fs.StringVar(&f.spec.Name, "llm-label", "", "the model's name in case ids and summaries, if not --llm-model (an experiment file's models[].name; des case reruns such a case with it)")
	fs.StringVar(&f.framework, "framework", llmctl.DefaultFramework, "orchestration style of the LLM controller: graph or relay")
	fs.IntVar(&f.maxModelFailures, "max-model-failures", llmctl.DefaultMaxModelFailures, "des run: failed model calls in a row of one role (after the --llm-max-attempts retries) after which the run fails with status aborted (in a suite, and in des case, the first one fails the case, which reruns next time)")
	fs.StringVar(&f.replyParsing, "reply-parsing", llmctl.ParsingPublished, `how model replies are read: published (any reply a legal integer action can be read from, as the paper counts: JSON, a bare integer, a code fence, a sentence; docs/llm-controller.md) or strict (exactly {"action": n})`)
}

// controller builds the named controller: a built-in one, or "llm" from
// the model flags. The returned closer releases the cache.
func (f *llmFlags) controller(name string, seed uint64) (coord.Controller, func(), error) {
	if name != "llm" {
		c, err := policy.New(name, seed)
		return c, func() {}, err
	}
	mk, closer, err := f.maker()
	if err != nil {
		return nil, nil, err
	}
	c, err := mk.New(seed)
	if err != nil {
		closer()
		return nil, nil, err
	}
	return c, closer, nil
}

// maker builds the LLM controller maker of the flags; the closer releases
// the response cache.
func (f *llmFlags) maker() (*llmctl.Maker, func(), error) {
	cfg := llmctl.MakerConfig{Model: f.spec, Framework: f.framework, ReplyParsing: f.replyParsing,
		MaxModelFailures: f.maxModelFailures, AbortOnModelError: f.abortOnModelError}
	return buildWith(&f.modelFlags, cfg.Validate, func(spec llm.Spec, o llm.Options) (*llmctl.Maker, error) {
		cfg.Model, cfg.Options = spec, o
		return llmctl.NewMaker(cfg)
	})
}

// siloLLMFlags are the flags of LLM agents (--agent llm, --agent team) on
// silo run and silo suite: the model layer's flags plus the agent's own,
// filling a play.LLMConfig per model (silo_models.go), and the named
// models and mixed team.
type siloLLMFlags struct {
	modelFlags
	toolFormat, scaffold string
	toolResults          string
	contextBudget        int64
	replyReserve         int64
	maxModelFailures     int
	endpoints            []string // --llm-endpoint, repeated
	team, teamShares     string
}

func (f *siloLLMFlags) register(fs *pflag.FlagSet) {
	f.modelFlags.register(fs, "model name (with --agent llm)", 0, "maximum output tokens per model call (0: the server's default)")
	fs.StringVar(&f.toolFormat, "tool-format", play.ToolFormatXML, "how agents call tools: xml (the published <tool_call> format) or native (function calling)")
	fs.StringVar(&f.toolResults, "tool-results", string(llmagent.ResultsPublished), "how tool results are written for the model: published (as the published code's srsly.json_dumps: compact, non-ASCII as \\u escapes, floats in ujson's form) or compact (compact UTF-8 JSON)")
	fs.StringVar(&f.scaffold, "scaffold", "none", "prompt scaffolds (comma list): planning, reminders, scratchpad, no-topology-hint, consensus (the consensus helper's tools propose_answer and vote)")
	fs.Int64Var(&f.contextBudget, "context-budget", 0, "tokens per agent prompt; older turns are dropped to fit (0: full history, as published)")
	fs.Int64Var(&f.replyReserve, "reply-reserve", llmagent.DefaultReplyReserve, "tokens kept free for the reply under --context-budget")
	fs.IntVar(&f.maxModelFailures, "max-model-failures", llmagent.DefaultMaxModelFailures, "silo run: consecutive failed model calls after which an agent gives up (in a suite the first one fails the case, which reruns next time)")
	fs.StringArrayVar(&f.endpoints, "llm-endpoint", nil, "a named model, repeatable: name=NAME,model=MODEL,base_url=URL[,api_key_env=VAR,temperature=T,max_tokens=K,seed=S,concurrency=C,rpm=R] (an experiment's models keys; unset ones take the --llm-* flags); each with its own limits; --agent llm runs each model, --agent team mixes them")
	fs.StringVar(&f.team, "team", "", "a mixed team (--agent team): model=count,… exact counts (N is their sum), agents in that order (a=3,b=2: agents 0-2 model a, 3-4 model b)")
	fs.StringVar(&f.teamShares, "team-shares", "", "a mixed team (--agent team) of shares: model=share,… apportioned at each N by the largest remainder (a=1,b=1: half each, the extra agent to a)")
}
