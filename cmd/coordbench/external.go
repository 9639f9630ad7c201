package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/llm"
)

// External controllers (docs/external.md): des run, des suite and des
// case with --controller-command, and des check-controller. The runner's
// lifecycle is extctl.Session's; here are its flags and its summary line.

// registerExternal adds the external runner flags to des run.
func registerExternal(c *cobra.Command) {
	f := c.Flags()
	f.String("controller-command", "", "run an external controller: a shell command started once per episode that speaks the runner protocol on stdin/stdout (docs/external.md)")
	f.Duration("controller-timeout", extctl.DefaultTimeout, "time the external runner has for each answer (ready, and every decision)")
	f.String("llm-proxy-upstream", "", "with --controller-command: serve an OpenAI-compatible model-call proxy on loopback that forwards to this API root, or to stub:POLICY played in-process (uses --llm-api-key-env, --llm-cache, --llm-cache-mode, --llm-concurrency, --llm-rpm, --llm-timeout, --llm-max-attempts, --max-model-failures); the runner gets its address in COORDBENCH_LLM_BASE_URL and OPENAI_BASE_URL, and its calls are audited (docs/external.md)")
}

// sessionConfig reads --controller-timeout for the runner command.
func sessionConfig(cmd *cobra.Command, command string) (extctl.SessionConfig, error) {
	timeout, _ := cmd.Flags().GetDuration("controller-timeout")
	if timeout <= 0 {
		return extctl.SessionConfig{}, fmt.Errorf("--controller-timeout must be positive")
	}
	return extctl.SessionConfig{Command: command, Timeout: timeout}, nil
}

// externalSession opens the runner session of des suite and des case.
// Each case reports its runner's failure (the session's EndCase).
func externalSession(cmd *cobra.Command, command string) (*extctl.Session, error) {
	cfg, err := sessionConfig(cmd, command)
	if err != nil {
		return nil, err
	}
	return extctl.OpenSession(cfg)
}

// externalController builds the controller of des run: the external
// runner when --controller-command is set, otherwise the built-in or LLM
// controller named by --controller. A runner starts in dir, the run's
// (temporary) output directory. The closer runs once the artifacts are
// written: for a runner, it ends it (extctl.Session.End), prints its
// summary and returns its failure, which fails the command.
func externalController(cmd *cobra.Command, lf *llmFlags, name string, p *factory.Plant, mode coord.AuthorityMode, seed uint64, dir string) (coord.Controller, func() error, error) {
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
		c, release, err := lf.controller(name, seed)
		return c, func() error { release(); return nil }, err
	}
	if f.Changed("controller") && name != extctl.Name {
		return nil, nil, fmt.Errorf("--controller-command runs an external controller: drop --controller %s", name)
	}
	cfg, err := sessionConfig(cmd, command)
	if err != nil {
		return nil, nil, err
	}
	cfg.StopOnInterrupt = true
	if upstream != "" {
		if lf.maxModelFailures < 1 {
			return nil, nil, fmt.Errorf("--max-model-failures must be at least 1 (got %d)", lf.maxModelFailures)
		}
		up := lf.spec
		up.BaseURL = upstream
		cfg.Proxy = &extctl.ProxyConfig{Upstream: up, Options: llm.Options{CacheMode: lf.cacheMode,
			Timeout: lf.timeout, MaxAttempts: lf.attempts, Endpoints: lf.endpoints, Stubs: stubPolicies()},
			MaxFailures: lf.maxModelFailures}
		cfg.CachePath = lf.cachePath
	}
	sess, err := extctl.OpenSession(cfg)
	if err != nil {
		return nil, nil, err
	}
	c, err := sess.Start(cmd.Context(), extctl.EpisodeOf(p, mode, seed), dir)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	closer := func() error {
		s, err := sess.End(c, dir)
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "coordbench:", err)
		}
		printRunnerSummary(cmd.OutOrStdout(), s)
		return sess.Close()
	}
	return c, closer, nil
}

// printRunnerSummary prints a runner's episode in a line (and the proxy's
// calls in another).
func printRunnerSummary(w io.Writer, s extctl.Summary) {
	fmt.Fprintf(w, "external runner: answered %d of %d decision steps, latency p50 %.3f ms, p99 %.3f ms; %d protocol errors, %d warnings (%s, %s)\n",
		s.Answered, s.Steps, s.Latency.P50, s.Latency.P99, s.Errors, s.Warnings, extctl.SummaryFile, extctl.StderrFile)
	if s.Proxy != nil {
		fmt.Fprintf(w, "llm proxy: %d calls (%d cache hits, %d failures, %d outside a decision), %d prompt + %d completion tokens\n",
			s.Proxy.Calls, s.Proxy.CacheHits, s.Proxy.Failures, s.Proxy.Unattributed, s.Proxy.PromptTokens, s.Proxy.CompletionTokens)
	}
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
