package main

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/time/rate"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent/gather"
	"github.com/coordbench/coordbench/sweep"
)

// modelFlags are the model-layer flags shared by every command that calls
// a model (docs/llm.md): endpoint, key variable, limits, cache, sampling.
type modelFlags struct {
	model, baseURL, keyEnv, cachePath, cacheMode string
	concurrency, maxTokens, maxAttempts          int
	rpm, temperature                             float64
	timeout                                      time.Duration
	seed                                         int64
	fs                                           *pflag.FlagSet // to tell whether --llm-seed was given
	// retries, if set, receives a line when a model call is about to be
	// retried (retryNotice).
	retries io.Writer
	// endpoints owns the per-endpoint limits and connection pools that
	// every client of this command shares (created by register).
	endpoints *llm.Endpoints
	// limiter, if set, hands out permits shared with other processes (a
	// distributed sweep's worker: its coordinator's limits).
	limiter llm.Limiter
	// sharedCache, if set, is the response cache to use instead of opening
	// --llm-cache (an experiment's models share one).
	sharedCache *llm.Cache
}

// register adds the flags; modelHelp and maxTokens are the command's help
// for --llm-model and its default output-token cap.
func (f *modelFlags) register(fs *pflag.FlagSet, modelHelp string, maxTokens int, maxTokensHelp string) {
	f.endpoints = llm.NewEndpoints()
	fs.StringVar(&f.model, "llm-model", "", modelHelp)
	fs.StringVar(&f.baseURL, "llm-base-url", "", "OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
	fs.StringVar(&f.keyEnv, "llm-api-key-env", "", "name of the environment variable holding the API key (the key is never written anywhere)")
	fs.IntVar(&f.concurrency, "llm-concurrency", 8, "simultaneous requests to the endpoint")
	fs.Float64Var(&f.rpm, "llm-rpm", 0, "requests per minute to the endpoint (0: unlimited)")
	fs.StringVar(&f.cachePath, "llm-cache", "", "response cache (SQLite file)")
	fs.StringVar(&f.cacheMode, "llm-cache-mode", "", "off, read-write (default with --llm-cache) or replay (cache only, offline)")
	fs.DurationVar(&f.timeout, "llm-timeout", 2*time.Minute, "timeout of one attempt")
	fs.IntVar(&f.maxAttempts, "llm-max-attempts", 5, "attempts per call, retries included")
	fs.Float64Var(&f.temperature, "llm-temperature", 0, "sampling temperature")
	fs.IntVar(&f.maxTokens, "llm-max-tokens", maxTokens, maxTokensHelp)
	fs.Int64Var(&f.seed, "llm-seed", 0, "sampling seed sent to the server (unset: none; servers without seed support ignore it)")
	f.fs = fs
}

// openCache opens --llm-cache (if set); the closer releases it.
func (f *modelFlags) openCache() (*llm.Cache, func(), error) {
	if f.sharedCache != nil {
		return f.sharedCache, func() {}, nil
	}
	if f.cachePath == "" {
		return nil, func() {}, nil
	}
	c, err := llm.OpenCache(f.cachePath)
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}

// client builds a client for model name from the flags.
func (f *modelFlags) client(name string, cache *llm.Cache) (*llm.Client, error) {
	cfg := llm.Config{
		BaseURL: f.baseURL, Model: name, APIKeyEnv: f.keyEnv, Temperature: f.temperature, MaxTokens: f.maxTokens,
		Timeout: f.timeout, MaxAttempts: f.maxAttempts, Concurrency: f.concurrency, RPM: f.rpm,
		Cache: cache, CacheMode: f.cacheMode, Endpoints: f.endpoints, Limiter: f.limiter,
	}
	if f.retries != nil {
		cfg.OnRetry = retryNotice(f.retries, retryNoticeEvery)
	}
	if f.fs != nil && f.fs.Changed("llm-seed") {
		seed := f.seed
		cfg.Seed = &seed
	}
	return llm.New(cfg)
}

// retryNoticeEvery is how often, at most, retryNotice prints.
const retryNoticeEvery = 10 * time.Second

// retryNotice returns a Config.OnRetry that tells w that a model call is
// stalled: which model, the attempt that failed, the failure's class and
// reason, and the wait. It prints the first retry at once and then at most
// one line per every, however many calls are retrying.
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
// of the scheduling benchmark.
type llmFlags struct {
	modelFlags
	label                   string // --llm-label: an experiment's model entry named apart from its model
	framework, replyParsing string
	maxModelFailures        int
	// abortOnModelError: the first failed model call fails the run (suites
	// and their cases), whatever --max-model-failures says.
	abortOnModelError bool
}

func (f *llmFlags) register(fs *pflag.FlagSet) {
	f.modelFlags.register(fs, "model name, or per role: plant=M1,area=M2,cell=M3 (with --controller llm)",
		16, "maximum output tokens (the contract needs a handful)")
	fs.StringVar(&f.label, "llm-label", "", "the model's name in case ids and summaries, if not --llm-model (an experiment file's models[].name; des case reruns such a case with it)")
	fs.StringVar(&f.framework, "framework", "graph", "orchestration style of the LLM controller: graph or relay")
	fs.IntVar(&f.maxModelFailures, "max-model-failures", llmctl.DefaultMaxModelFailures, "des run: failed model calls in a row (after the --llm-max-attempts retries) after which the run fails with status aborted (in a suite, and in des case, the first one fails the case, which reruns next time)")
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

// llmMaker makes the LLM controllers of a suite: one set of clients (and
// one cache) shared by every case, a fresh controller (fresh framework
// memory) per case.
type llmMaker struct {
	model             string
	label             string // the models' name in case ids and summaries, if not model (experiment files)
	framework         string
	parsing           string
	models            map[string]llmctl.Model
	stats             *llm.Stats
	maxModelFailures  int
	abortOnModelError bool
}

func (m *llmMaker) Name() string                { return "llm" }
func (m *llmMaker) Model() string               { return cmp.Or(m.label, m.model) }
func (m *llmMaker) Framework() string           { return m.framework }
func (m *llmMaker) ReplyParsing() string        { return m.parsing }
func (m *llmMaker) DefaultReplyParsing() string { return llmctl.ParsingPublished }
func (m *llmMaker) New(uint64) (coord.Controller, error) {
	c, err := llmctl.New(m.framework, m.models)
	if err == nil {
		err = c.SetReplyParsing(m.parsing)
	}
	if err != nil {
		return nil, err
	}
	c.MaxModelFailures, c.AbortOnModelError = m.maxModelFailures, m.abortOnModelError
	if m.label != m.model {
		c.Label = m.label
	}
	return c, nil
}

// Status is the endpoint's live state for progress lines.
func (m *llmMaker) Status() string { return m.stats.String() }

// maker opens the cache and builds the clients of the model flags.
func (f *llmFlags) maker() (*llmMaker, func(), error) {
	if f.model == "" || f.baseURL == "" {
		return nil, nil, fmt.Errorf("--controller llm needs --llm-model and --llm-base-url (try a stub: coordbench llm stub)")
	}
	if !slices.Contains(llmctl.Frameworks, f.framework) {
		return nil, nil, fmt.Errorf("--framework: unknown framework %q (want graph or relay)", f.framework)
	}
	if f.maxModelFailures < 1 {
		return nil, nil, fmt.Errorf("--max-model-failures must be at least 1 (got %d)", f.maxModelFailures)
	}
	if !slices.Contains(llmctl.ReplyParsings, f.replyParsing) {
		return nil, nil, fmt.Errorf("--reply-parsing: unknown rule %q (want published or strict)", f.replyParsing)
	}
	if f.label != "" && !sweep.ValidLabel(f.label) {
		return nil, nil, fmt.Errorf("--llm-label: want at most 64 letters, digits, '.', '-' and single '_' inside (got %q)", f.label)
	}
	cache, closer, err := f.openCache()
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*llmMaker, func(), error) {
		closer()
		return nil, nil, err
	}
	mk := &llmMaker{model: f.model, label: f.label, framework: f.framework, parsing: f.replyParsing, models: map[string]llmctl.Model{},
		maxModelFailures: f.maxModelFailures, abortOnModelError: f.abortOnModelError}
	for _, part := range strings.Split(f.model, ",") {
		role, name, found := strings.Cut(part, "=")
		if !found {
			role, name = "", part
		}
		switch role {
		case "", coord.RolePlant, coord.RoleArea, coord.RoleCell:
		default:
			return fail(fmt.Errorf("--llm-model: unknown role %q (want plant, area or cell)", role))
		}
		cl, err := f.client(name, cache)
		if err != nil {
			return fail(err)
		}
		mk.models[role] = llmctl.Model{Name: name, Client: cl}
		mk.stats = cl.Stats()
	}
	if _, ok := mk.models[""]; !ok && len(mk.models) < 3 {
		return fail(fmt.Errorf("--llm-model: give a default model or one for each of plant, area and cell"))
	}
	return mk, closer, nil
}

func llmCmd() *cobra.Command {
	c := &cobra.Command{Use: "llm", Short: "Model tools: a stub OpenAI-compatible server for dry runs"}
	c.AddCommand(llmStubCmd())
	return c
}

func llmStubCmd() *cobra.Command {
	var addr, pol string
	c := &cobra.Command{
		Use:   "stub",
		Short: "Serve a stub model that answers coordbench payloads or plays SILO-BENCH (OpenAI chat completions)",
		Long: `Serve the OpenAI chat-completions protocol on --addr (by default a free
loopback port, so that two stubs never share one; the first line printed
is the URL to give --llm-base-url) and answer from the prompt. For coordbench decision payloads: builtin (the
rule controller's choice), random (a legal index from a hash of the prompt)
or faults (a scripted mix of valid answers, prose, code fences, illegal
indices, empty replies and transient 429/500 errors). For SILO-BENCH LLM
agents (silo run/suite --agent llm): silo-gather, a model that plays the
gather strategy (every agent sends its shard to agent 0, which computes
every answer from the task prompt and the shard texts alone and sends the
answers back) in XML or native tool calls, for any generated task, any
team size and any protocol. Token usage is counted from the text. Point any
run at it (--llm-base-url http://ADDR/v1) for an offline dry run of the
whole LLM pipeline before spending money.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var handler http.Handler
			var served func() string
			if pol == "silo-gather" {
				var n atomic.Int64
				model := gather.Model{Solve: gather.PromptSolver}
				handler = stubmodel.Handler(func(req stubmodel.ChatRequest) stubmodel.Reply {
					n.Add(1)
					return model.Handle(req)
				})
				served = func() string { return fmt.Sprintf("%d requests", n.Load()) }
			} else {
				s, err := llmctl.NewStub(pol)
				if err != nil {
					return fmt.Errorf("--policy: unknown stub policy %q (want builtin, random, faults or silo-gather)", pol)
				}
				handler, served = s, func() string { return fmt.Sprint(s.Log()) }
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stub model (%s) on http://%s/v1 — Ctrl-C to stop\n", pol, ln.Addr())
			srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				srv.Close()
			}()
			if err := srv.Serve(ln); err != http.ErrServerClosed {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "served: %s\n", served())
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen address (loopback unless you say otherwise; port 0: a free port, printed with the URL)")
	c.Flags().StringVar(&pol, "policy", "builtin", "builtin, random or faults (coordbench payloads), or silo-gather (SILO-BENCH agents)")
	return c
}
