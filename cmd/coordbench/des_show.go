package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/transcript"
)

func desShowCmd() *cobra.Command {
	opt := transcript.Options{Step: transcript.AllSteps}
	var request bool
	c := &cobra.Command{
		Use:   "show DIR",
		Short: "Print the decisions of one DESBench run directory, or the exact request of one LLM decision",
		Long: `Print the decisions of one DESBench run directory (written by "des run
--out DIR" or a suite's cases/<case_id>/): a header from metrics.json
(instance, paradigm, controller, model, framework, seed, status), then one
line per decision from decisions.jsonl: step, time, agent, role and kind,
the committed action, its source (and why the fallback decided), and for
model-backed controllers how the reply was read and the reply, clipped to
--width characters unless --full. --step and --agent select decisions.

With --request --step N --agent ID it prints instead the exact messages
the LLM controller sent to the model for that decision (system prompt and
user message, whole), rebuilt from the audit (the agent's view and the
framework memory it records), and checks them against the audit's
prompt_sha256: it says when they match, and fails when they do not.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if request {
				if opt.Step < 0 || opt.Agent == "" {
					return fmt.Errorf("--request needs --step and --agent")
				}
				return transcript.WriteRequest(cmd.OutOrStdout(), args[0], opt.Step, opt.Agent)
			}
			return transcript.Write(cmd.OutOrStdout(), args[0], opt)
		},
	}
	c.Flags().IntVar(&opt.Step, "step", transcript.AllSteps, "show only this decision step (-1: all)")
	c.Flags().StringVar(&opt.Agent, "agent", "", "show only this agent id (plant, area:A1, cell:C01, ...)")
	c.Flags().IntVar(&opt.Width, "width", transcript.DefaultWidth, "clip replies and reasons to this many characters")
	c.Flags().BoolVar(&opt.Full, "full", false, "do not clip replies and reasons")
	c.Flags().BoolVar(&request, "request", false, "LLM runs: print the exact messages --agent sent to the model at --step, checked against the audit's prompt_sha256")
	return c
}
