package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/internal/httplimit"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
)

func llmCmd() *cobra.Command {
	c := &cobra.Command{Use: "llm", Short: "Model tools: a stub OpenAI-compatible server for dry runs"}
	c.AddCommand(llmStubCmd())
	return c
}

// stubPolicies are the models coordbench llm stub can play, and that
// "stub:POLICY" base URLs play in-process (llm.Options.Stubs).
func stubPolicies() stubmodel.Policies {
	return append(stubmodel.Policies(despolicy.Policies()), silogather.Policy(), silogather.HastyPolicy(), stubmodel.GenericPolicy())
}

func llmStubCmd() *cobra.Command {
	var addr, pol, script, tokenEnv string
	var seed int64
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
answers back, or with the consensus scaffold proposes them for a vote) in
XML or native tool calls, for any generated task, any team size and any
protocol; silo-hasty, the same whose agents other than 0 submit the
answer over their own shard when none has come by their second turn
(unless the consensus helper is on). For anything else: generic, which
answers any request legally from what it carries: a call of one of its
tools with arguments that satisfy the tool's JSON Schema, a JSON object
that satisfies its response_format, one label of an option list in the
prompt, else a short text; its choices are drawn from --seed and a hash
of the request. Every policy gives generic's answer to a request it does
not understand. --script FILE answers first from a file of scripted
replies (YAML, or JSON Lines with .jsonl), matched on the last user
message or the request's index (docs/llm.md). Token usage is counted
from the text. Point any run at it (--llm-base-url http://ADDR/v1) for
an offline dry run of the whole LLM pipeline before spending money; or
give --llm-base-url stub:POLICY (stub:generic?seed=3) to play the same
stub in the run's own process, with nothing to start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := stubmodel.Options{Seed: seed}
			if script != "" {
				s, err := stubmodel.LoadScript(script)
				if err != nil {
					return fmt.Errorf("--script: %w", err)
				}
				o.Script = s
			}
			handler, served, err := stubPolicies().New(pol, o)
			if err != nil {
				return fmt.Errorf("--policy: %w", err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stub model (%s) on http://%s/v1 — Ctrl-C to stop\n", pol, ln.Addr())
			// Within the limits of every listener (internal/httplimit): slow
			// bodies and unread answers cut, connections bounded, and the
			// token, if any, checked on the headers.
			lim := httplimit.Config{MaxBody: stubmodel.MaxRequestBody, Realm: "coordbench llm stub"}
			if tokenEnv != "" {
				tok := os.Getenv(tokenEnv)
				if tok == "" {
					return fmt.Errorf("--token-env %s: the variable is unset or empty", tokenEnv)
				}
				lim.Authorized = httplimit.Bearer(tok)
			}
			srv := httplimit.Server(handler, lim)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				srv.Close()
			}()
			if err := srv.Serve(httplimit.Listener(ln, lim)); err != http.ErrServerClosed {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "served: %s\n", served())
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen address (loopback unless you say otherwise; port 0: a free port, printed with the URL)")
	c.Flags().StringVar(&pol, "policy", "builtin", "builtin, random or faults (coordbench payloads), silo-gather or silo-hasty (SILO-BENCH agents), or generic (any request: tools, response_format, option lists)")
	c.Flags().Int64Var(&seed, "seed", 0, "seed of the generic answers (generic, and every policy's answer to a request it does not understand)")
	c.Flags().StringVar(&tokenEnv, "token-env", "", "require \"Authorization: Bearer TOKEN\" with the token this environment variable holds (what a client sends as its API key); a request without it is refused on its headers")
	c.Flags().StringVar(&script, "script", "", "scripted replies answered first: a YAML list or JSON Lines (.jsonl) of {contains|regexp|call, reply|tool_calls} (docs/llm.md)")
	return c
}
