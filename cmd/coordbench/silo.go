package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

func siloCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "silo",
		Short: "The information-silo benchmark (SILO-BENCH)",
	}
	c.AddCommand(siloTasksCmd(), siloInstanceCmd(), siloRunCmd(), siloSuiteCmd(), siloShowCmd(), siloImportCmd(), siloAnalyzeCmd(), siloRescoreCmd())
	return c
}

func siloTasksCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tasks",
		Short: "List the 30 tasks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TASK\tNAME\tLEVEL\tOUTPUT\tSEGMENTED\tDEPENDENCIES")
			for _, t := range task.All() {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%s\n", t.ID, t.Name, t.Level, t.Output, t.Segmented, t.DepKind)
			}
			return tw.Flush()
		},
	}
}

// siloInstance resolves --task/--agents/--mode/--seed or --task-file.
func siloInstance(taskID string, n int, mode string, seed uint64, file string) (*task.Instance, error) {
	if file != "" {
		return task.LoadFile(file)
	}
	switch canon(mode, task.ModeSeeded, task.ModeOfficial) {
	case "official":
		return task.Official(taskID, n)
	case "seeded":
		return task.Seeded(taskID, n, seed)
	}
	return nil, fmt.Errorf("--mode: want official or seeded (got %q)", mode)
}

type siloFlags struct {
	taskID, mode, file string
	n                  int
	seed               uint64
}

// register adds the instance flags; fileHelp, if not empty, also adds
// --task-file (read a published task file) with that help.
func (f *siloFlags) register(c *cobra.Command, fileHelp string) {
	fs := c.Flags()
	fs.StringVar(&f.taskID, "task", "I-01", "task id (coordbench silo tasks)")
	fs.IntVar(&f.n, "agents", 2, "number of agents N (official mode: 2, 5, 10, 20, 50 or 100)")
	fs.StringVar(&f.mode, "mode", "seeded", "official (the paper's instances) or seeded")
	f.seed = 1
	fs.Var((*seedValue)(&f.seed), "seed", "seed (seeded mode)")
	if fileHelp != "" {
		fs.StringVar(&f.file, "task-file", "", fileHelp)
	}
}

func siloInstanceCmd() *cobra.Command {
	var f siloFlags
	var asJSON bool
	var out string
	c := &cobra.Command{
		Use:   "instance",
		Short: "Show an instance: every agent's shard and expected answer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := siloInstance(f.taskID, f.n, f.mode, f.seed, "")
			if err != nil {
				return err
			}
			if out != "" {
				if err := in.WriteFile(out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (published task-file format)\n", out)
				return nil
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"task": in.Task.ID, "name": in.Task.Name, "agents": in.N, "mode": in.Mode,
					"seed": in.Seed, "shards": in.Shards, "expected": in.Expected, "dependencies": in.Deps})
			}
			fmt.Fprintf(w, "%s, N=%d, %s mode\n", in.Task, in.N, in.Mode)
			for i := range in.N {
				fmt.Fprintf(w, "agent %d: shard %s\n         expected %s\n", i, clipText(in.ShardText(i), 100), clipText(string(in.Expected[i]), 100))
			}
			return nil
		},
	}
	f.register(c, "")
	c.Flags().StringVar(&out, "task-file", "", "write the instance to this file in the published JSON task-file format")
	c.Flags().BoolVar(&asJSON, "json", false, "print the instance as JSON")
	return c
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func siloRunCmd() *cobra.Command {
	var f siloFlags
	var lf siloLLMFlags
	var protocol, agent, out string
	var lim play.Limits
	var msgFormat, msgOrder string
	var force bool
	c := &cobra.Command{
		Use:   "run",
		Short: "Run one SILO-BENCH run and write result.json, the run database and the tool-call log",
		Long: `Run one task with N agents over one protocol (p2p, broadcast or sfs) in
synchronous rounds and write into --out: result.json (S, P, rounds, calls,
messages, D and every agent's answer), run.db (the SQLite run database:
messages, files, submissions, the tool-call log) and calls.jsonl (the
tool-call log). Agents: scripted teams correct by construction: reference
(gather at agent 0, compute, distribute), tree (binary-tree reduction) or
chain (relay along the agents); or llm, one model-backed agent per shard
over any OpenAI-compatible endpoint (--llm-model, --llm-base-url; see
docs/silo-llm.md), which also writes turns.jsonl (every prompt, reply,
parsed call, result and token count) and timing.jsonl.

The run is written into a temporary directory next to --out and renamed
to --out when it ends. An --out that exists and is not empty is refused;
--force replaces it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := siloInstance(f.taskID, f.n, f.mode, f.seed, f.file)
			if err != nil {
				return err
			}
			if err := atLeastOne("--max-rounds", lim.MaxRounds); err != nil {
				return err
			}
			protocol, msgFormat = canon(protocol, "p2p", "broadcast", "sfs"), canon(msgFormat, "str", "json")
			agent = canon(agent, slices.Concat(round.TeamNames(), []string{play.AgentLLM, play.AgentTeam})...)
			p := proto.Protocol(protocol)
			if len(proto.Tools(p)) == 0 {
				return fmt.Errorf("--protocol: want p2p, broadcast or sfs (got %q)", protocol)
			}
			if lim.MessageFormat, err = proto.ParseMessageFormat(msgFormat); err != nil {
				return fmt.Errorf("--message-format: %w", err)
			}
			if lim.MessageOrder, err = proto.ParseMessageOrder(canon(msgOrder, "random", "fixed")); err != nil {
				return fmt.Errorf("--message-order: %w", err)
			}
			models, closer, err := lf.models(agent)
			if err != nil {
				return err
			}
			defer closer()
			players := play.Players{Kind: agent, Team: models.team}
			switch agent {
			case play.AgentLLM:
				if len(models.llms) > 1 {
					return fmt.Errorf("--agent %s: %d models given; a run plays one (or mix them: --agent %s)", play.AgentLLM, len(models.llms), play.AgentTeam)
				}
				players.LLM = models.llms[0]
			case play.AgentTeam:
				if size := models.team.Size(); size > 0 && f.file == "" && !cmd.Flags().Changed("agents") {
					// A team of counts has its own size.
					if in, err = siloInstance(f.taskID, size, f.mode, f.seed, f.file); err != nil {
						return err
					}
				}
				if _, err := models.team.Counts(in.N); err != nil {
					return lf.teamError(err)
				}
			default:
				if _, err := round.NewTeamByName(agent, in.N); err != nil {
					return fmt.Errorf("--agent: %w (or %s, %s)", err, play.AgentLLM, play.AgentTeam)
				}
			}
			if out == "" {
				out = filepath.Join("runs", siloRunName(in, protocol, players, lim))
			}
			ro, err := newRunOut(out, force)
			if err != nil {
				return err
			}
			res, _, runErr := play.Run(cmd.Context(), in, p, players, lim, ro.tmp)
			if runErr != nil && (res == nil || res.Status != round.StatusAborted) {
				ro.discard()
				return runErr
			}
			// An aborted run (its model could not answer) is written and
			// printed like any other, then fails the command: status
			// aborted in result.json, exit 1, as des run does.
			if err := ro.commit(); err != nil {
				return errors.Join(runErr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s, N=%d, %s, %s agents: S %.3f (success %v), P %.3f, %d rounds, %d tool calls, D %.4f\n",
				in.Task, in.N, protocol, players.Label(), res.S, res.Success, res.P, res.Rounds, res.ToolCalls, res.D)
			if u := res.Usage; u != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "model: %d calls, %d input + %d output tokens, C %.2f (paper) / %.2f (code), %d wasted, %d failed\n",
					u.ModelCalls, u.InputTokens, u.OutputTokens, *res.C, *res.CCode, u.WastedCalls, u.ModelErrors)
			}
			for _, m := range res.ByModel {
				u := m.Usage
				if u == nil {
					u = &round.Usage{}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "model %s (agents %s): %d of %d correct (S %.3f, P %.3f), %d messages, %d calls, %d input + %d output tokens\n",
					m.Model, round.AgentRange(m.Agents), m.Correct, len(m.Agents), m.S, m.P, m.Messages, u.ModelCalls, u.InputTokens, u.OutputTokens)
			}
			for _, e := range res.AgentErrors {
				fmt.Fprintf(cmd.OutOrStdout(), "agent %d stopped in round %d (rounds numbered from 1): %s\n", e.Agent, e.Round, seeInFlagTerms(cmd, e.Error))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "artifacts: %s (transcript: coordbench silo show %s)\n", out, out)
			if runErr != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "status %s: the run is not a result (its scores describe the state it had reached)\n", res.Status)
				return fmt.Errorf("%s: %w", out, runErr)
			}
			return nil
		},
	}
	f.register(c, "run a published task file instead of --task/--agents/--mode")
	c.Flags().StringVar(&protocol, "protocol", "p2p", "p2p, broadcast or sfs")
	c.Flags().StringVar(&agent, "agent", "reference", "agents: reference (star), tree, chain (scripted), llm, or team (a mixed team of LLM agents: --team)")
	c.Flags().IntVar(&lim.MaxRounds, "max-rounds", round.DefaultMaxRounds, "round cap")
	c.Flags().IntVar(&lim.MaxCallsPerTurn, "max-calls-per-turn", round.DefaultMaxCallsPerTurn, "tool calls one turn may execute, 0 = no cap (as published); with a cap, more end the turn (capped_turns)")
	c.Flags().StringVar(&msgFormat, "message-format", string(proto.FormatStr), messageFormatUsage)
	c.Flags().StringVar(&msgOrder, "message-order", string(proto.OrderRandom), messageOrderUsage)
	c.Flags().StringVar(&out, "out", "", "output directory (default runs/silo_<task>_n<N>_<protocol>_<agent>_<mode>_s<seed>, plus the non-default limits); refused if it exists and is not empty, unless --force")
	c.Flags().BoolVar(&force, "force", false, "replace an existing --out")
	lf.register(c.Flags())
	return withTracing(c)
}

// siloRunName is the default directory name of a silo run: everything that
// tells two runs apart: task, N, protocol, agents (with the model and its
// settings: play.Players.Label), mode, seed, and the limits that differ
// from their defaults.
func siloRunName(in *task.Instance, protocol string, players play.Players, lim play.Limits) string {
	name := fmt.Sprintf("silo_%s_n%d_%s_%s_%s_s%d", in.Task.ID, in.N, protocol, players.Label(), in.Mode, in.Seed)
	if lim.MaxRounds != round.DefaultMaxRounds {
		name += fmt.Sprintf("_r%d", lim.MaxRounds)
	}
	if lim.MaxCallsPerTurn != round.DefaultMaxCallsPerTurn {
		name += fmt.Sprintf("_c%d", lim.MaxCallsPerTurn)
	}
	if lim.MessageFormat != "" && lim.MessageFormat != proto.FormatStr {
		name += "_" + string(lim.MessageFormat)
	}
	if lim.Order() != proto.OrderRandom {
		name += "_" + string(lim.Order())
	}
	return name
}

// atLeastOne refuses a count flag below 1 (the library reads 0 as its
// default, which the flag's help does not promise).
func atLeastOne(flag string, v int) error {
	if v < 1 {
		return fmt.Errorf("%s must be at least 1 (got %d)", flag, v)
	}
	return nil
}

// messageOrderUsage is the help of --message-order (silo run, silo suite).
const messageOrderUsage = "order of one round's messages at a receiver: random (as published, where they are sorted by random file names; seeded from the run's task, N, mode and seed, so runs stay reproducible) or fixed (sender id, then send order)"

// messageFormatUsage is the help of --message-format (silo run, silo suite).
const messageFormatUsage = "how non-string message contents and sfs paths reach other agents: str (Python str() of the value, as published: {\"a\": 1} arrives as {'a': 1}) or json (compact JSON as sent)"
