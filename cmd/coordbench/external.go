package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
)

// External controllers (docs/external.md): des run --controller-command,
// and des check-controller.

// registerExternal adds the external runner flags to des run. A runner
// that failed during the episode makes the command fail after every
// artifact is written (PostRunE).
func registerExternal(c *cobra.Command) {
	f := c.Flags()
	f.String("controller-command", "", "run an external controller: a shell command started once per episode that speaks the runner protocol on stdin/stdout (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer (ready, and every decision)")
	f.String("llm-proxy-upstream", "", "with --controller-command: serve an OpenAI-compatible model-call proxy on loopback that forwards to this API root (uses --llm-api-key-env, --llm-cache, --llm-cache-mode, --llm-concurrency, --llm-rpm, --llm-timeout, --llm-max-attempts); the runner gets its address in COORDBENCH_LLM_BASE_URL and OPENAI_BASE_URL, and its calls are audited (docs/external.md)")
	c.PostRunE = func(cmd *cobra.Command, _ []string) error {
		if err, ok := externalFailures.LoadAndDelete(cmd); ok {
			return err.(error)
		}
		return nil
	}
}

// externalFailures holds, per des run command, the runner failure to
// report once the artifacts are written.
var externalFailures sync.Map

// externalController builds the controller of des run: the external
// runner when --controller-command is set, otherwise the built-in or LLM
// controller named by --controller. For a runner it fixes the output
// directory (*out), starts the runner with its stderr in
// DIR/controller_stderr.txt, and returns a closer that sends episode_end
// with metrics.json, stops the runner and writes DIR/controller.json.
func externalController(cmd *cobra.Command, lf *llmFlags, name string, p *factory.Plant, mode coord.AuthorityMode, seed uint64, out *string) (coord.Controller, func(), error) {
	f := cmd.Flags()
	command, _ := f.GetString("controller-command")
	upstream, _ := f.GetString("llm-proxy-upstream")
	if upstream != "" && command == "" {
		return nil, nil, fmt.Errorf("--llm-proxy-upstream needs --controller-command")
	}
	if command == "" {
		if name == extctl.Name {
			return nil, nil, fmt.Errorf("--controller external needs --controller-command")
		}
		return lf.controller(name, seed)
	}
	if f.Changed("controller") && name != extctl.Name {
		return nil, nil, fmt.Errorf("--controller-command runs an external controller: drop --controller %s", name)
	}
	timeout, _ := f.GetDuration("controller-timeout")
	if timeout <= 0 {
		return nil, nil, fmt.Errorf("--controller-timeout must be positive")
	}
	if *out == "" {
		*out = filepath.Join("runs", fmt.Sprintf("%s_%s_%s_s%d", safeName(p.Inst.Name), mode.ID, extctl.Name, seed))
	}
	dir := *out
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	var proxy *extctl.Proxy
	var err error
	releaseProxy := func() {}
	if upstream != "" {
		var cache *llm.Cache
		if lf.cachePath != "" {
			if cache, err = llm.OpenCache(lf.cachePath); err != nil {
				return nil, nil, err
			}
		}
		releaseProxy = func() {
			if proxy != nil {
				proxy.Close()
			}
			if cache != nil {
				cache.Close()
			}
		}
		proxy, err = extctl.NewProxy(extctl.ProxyConfig{Upstream: upstream, APIKeyEnv: lf.keyEnv, Cache: cache,
			CacheMode: lf.cacheMode, Concurrency: lf.concurrency, RPM: lf.rpm, Timeout: lf.timeout, MaxAttempts: lf.maxAttempts})
		if err == nil {
			_, err = proxy.Start()
		}
		if err != nil {
			releaseProxy()
			return nil, nil, err
		}
	}
	logf, err := os.Create(filepath.Join(dir, extctl.StderrFile))
	if err != nil {
		releaseProxy()
		return nil, nil, err
	}
	// The runner has a process group of its own, out of reach of the
	// terminal's Ctrl-C: on an interrupt, stop it; the episode then ends
	// at once on fallbacks, and its artifacts are written.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	c, err := extctl.Start(ctx, extctl.Config{Command: command, Timeout: timeout, Stderr: logf,
		Episode: extctl.EpisodeOf(p, mode, seed), Proxy: proxy})
	if err != nil {
		stop()
		releaseProxy()
		logf.Close()
		return nil, nil, err
	}
	closer := func() {
		defer stop()
		var metrics any
		if b, err := os.ReadFile(filepath.Join(dir, harness.FileMetrics)); err == nil && json.Valid(b) {
			metrics = json.RawMessage(b)
		}
		failed := c.End(metrics)
		releaseProxy()
		logf.Close()
		s := c.Summary()
		if err := extctl.WriteSummary(filepath.Join(dir, extctl.SummaryFile), s); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "coordbench:", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "external runner: answered %d of %d decision steps, latency p50 %.3f ms, p99 %.3f ms; %d protocol errors, %d warnings (%s, %s)\n",
			s.Answered, s.Steps, s.Latency.P50, s.Latency.P99, s.Errors, s.Warnings, extctl.SummaryFile, extctl.StderrFile)
		if s.Proxy != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "llm proxy: %d calls (%d cache hits, %d failures, %d outside a decision), %d prompt + %d completion tokens\n",
				s.Proxy.Calls, s.Proxy.CacheHits, s.Proxy.Failures, s.Proxy.Unattributed, s.Proxy.PromptTokens, s.Proxy.CompletionTokens)
		}
		if failed != nil {
			externalFailures.Store(cmd, fmt.Errorf("%w (the episode went on with audited fallbacks; see %s)", failed, filepath.Join(dir, extctl.StderrFile)))
		}
	}
	return c, closer, nil
}

func desCheckControllerCmd() *cobra.Command {
	var command, out string
	var timeout, slow time.Duration
	var asJSON bool
	c := &cobra.Command{
		Use:   "check-controller",
		Short: "Check that an external controller speaks the runner protocol",
		Long: `Run an external controller (--controller-command) through a fixed set of
short episodes: A3C9-1 under each built-in paradigm on its first test seed,
and one contract-net episode cut to a tenth of the horizon. Report every
protocol violation (no ready message, malformed lines, missing or unknown
agents, illegal or masked indices, stale or unsolicited lines, timeouts,
crashes, a bad exit after episode_end), the stdout lines that are not
protocol messages and the answers slower than --slow (warnings), and the
reply latency percentiles. The exit code is 0 only if the controller made
no protocol error. docs/external.md describes the protocol.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := extctl.CheckOptions{Timeout: timeout, Slow: slow, Dir: out}
			if !asJSON {
				opts.Progress = cmd.ErrOrStderr()
			}
			if slow == 0 {
				opts.Slow = -1
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := extctl.Check(ctx, command, opts)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(cmd.OutOrStdout())
			}
			if !rep.Clean() {
				return fmt.Errorf("the controller broke the runner protocol: %d errors", rep.Errors)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&command, "controller-command", "", "the external controller's shell command (required)")
	f.DurationVar(&timeout, "controller-timeout", extctl.DefaultTimeout, "time the runner has for each answer")
	f.DurationVar(&slow, "slow", time.Second, "report answers slower than this as a warning (0: never)")
	f.StringVar(&out, "out", "", "keep each episode's artifacts, controller_stderr.txt and controller.json under this directory")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.MarkFlagRequired("controller-command")
	return c
}
