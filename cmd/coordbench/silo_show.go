package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/silo/transcript"
)

func siloShowCmd() *cobra.Command {
	opt := transcript.Options{Agent: transcript.AllAgents}
	var request bool
	c := &cobra.Command{
		Use:   "show DIR",
		Short: "Print a readable transcript of one SILO-BENCH run directory",
		Long: `Print who said what to whom, round by round, in one SILO-BENCH run
directory (written by "silo run --out DIR" or a suite's runs/<case_id>/):
a header from result.json (task, N, protocol, rounds, S, success, P; model
tokens and C for LLM runs), one line per tool call from calls.jsonl (for
LLM runs, one block per agent turn from turns.jsonl: outcome, tokens,
calls refused by the harness), and each agent's answer. Contents are
clipped to --width characters unless --full. With --request --agent I
--round R it prints instead the exact messages agent I sent to the model
in round R, rebuilt from the turn log. See docs/silo-show.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if request {
				if opt.Agent < 0 || opt.Round < 1 {
					return fmt.Errorf("--request needs --agent and --round")
				}
				return transcript.WriteRequest(cmd.OutOrStdout(), args[0], opt.Agent, opt.Round, opt)
			}
			return transcript.Write(cmd.OutOrStdout(), args[0], opt)
		},
	}
	c.Flags().IntVar(&opt.Round, "round", 0, "show only this round (0: all)")
	c.Flags().IntVar(&opt.Agent, "agent", transcript.AllAgents, "show only this agent id (-1: all)")
	c.Flags().IntVar(&opt.Width, "width", transcript.DefaultWidth, "clip contents to this many characters")
	c.Flags().BoolVar(&opt.Full, "full", false, "do not clip contents, replies and prompts")
	c.Flags().BoolVar(&opt.Replies, "replies", false, "LLM runs: show each turn's reply text before its calls")
	c.Flags().BoolVar(&opt.Prompts, "prompts", false, "LLM runs: show each turn's input messages")
	c.Flags().BoolVar(&request, "request", false, "LLM runs: print the exact messages --agent sent to the model in --round")
	return c
}
