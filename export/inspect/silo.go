package inspect

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/suite"
)

// siloLabels are the failure labels, in summary.csv's order: each is a
// metric (agents carrying it) of every silo run.
var siloLabels = []string{round.LabelPremature, round.LabelConsensus, round.LabelComputation, round.LabelNoSubmission}

// readSiloRun reads the silo run directory dir (silo run --out, or a silo
// suite's runs/<id>/, which adds manifest.json).
func readSiloRun(source, dir string) (*Run, error) {
	var res round.Result
	if err := readJSON(filepath.Join(dir, "result.json"), &res); err != nil {
		return nil, err
	}
	if res.Task == "" || res.N <= 0 || res.Protocol == "" || len(res.Agents) != res.N {
		return nil, fmt.Errorf("%s: result.json lacks task, n, protocol or its n agents: not a silo run's result", dir)
	}
	var man *suite.Manifest
	if ok, err := exists(filepath.Join(dir, "manifest.json")); err != nil {
		return nil, err
	} else if ok {
		man = &suite.Manifest{}
		if err := readJSON(filepath.Join(dir, "manifest.json"), man); err != nil {
			return nil, err
		}
	}
	turnsPath := filepath.Join(dir, "turns.jsonl")
	llmRun, err := exists(turnsPath)
	if err != nil {
		return nil, err
	}
	r := &Run{
		Benchmark: BenchSilo,
		Source:    source,
		CaseID:    filepath.Base(dir),
		Seed:      res.Seed,
		Status:    "done",
	}
	r.Sample = res.Task + "__n" + strconv.Itoa(res.N) + "__" + string(res.Protocol)
	if res.MergedFrom > 0 {
		r.Sample += "__merged-n" + strconv.Itoa(res.MergedFrom)
	}
	if len(res.AgentErrors) > 0 {
		r.Status = "agent_errors"
	}
	r.Controller, r.Model, r.ModelRecorded = siloPlayer(man, &res, llmRun)
	r.Fields = map[string]any{
		"task": res.Task, "n": res.N, "protocol": string(res.Protocol), "agent": r.Controller, "mode": res.Mode,
	}
	if r.ModelRecorded {
		r.Fields["model"] = r.Model
	}
	r.Metrics = siloMetrics(&res)
	if u := res.Usage; u != nil {
		r.Usage = Usage{Calls: int64(u.ModelCalls), InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
	for _, bm := range res.ByModel {
		if bm.Usage == nil {
			continue
		}
		if r.ByModel == nil {
			r.ByModel = map[string]Usage{}
		}
		u := r.ByModel[bm.Model]
		u.add(Usage{Calls: int64(bm.Usage.ModelCalls), InputTokens: bm.Usage.InputTokens, OutputTokens: bm.Usage.OutputTokens})
		r.ByModel[bm.Model] = u
	}
	r.Meta = map[string]any{
		"benchmark": BenchSilo, "case_id": r.CaseID, "seed": res.Seed, "task": res.Task, "n": res.N,
		"protocol": res.Protocol, "mode": res.Mode, "agent": r.Controller, "max_rounds": res.MaxRounds,
		"max_calls_per_turn": res.MaxCallsPerTurn, "message_format": res.MessageFormat,
		"agents": res.Agents, "failures": res.Failures, "failures_flow": res.FailuresFlow,
		"calls_by_tool": res.CallsByTool, "agent_errors": res.AgentErrors,
	}
	if res.MergedFrom > 0 {
		r.Meta["merged_from"] = res.MergedFrom
	}
	if res.Usage != nil {
		r.Meta["usage"] = res.Usage
	}
	if len(res.ByModel) > 0 {
		r.Meta["by_model"] = res.ByModel
	}
	if man != nil {
		r.Meta["coordbench_version"] = man.Version
	}
	if llmRun {
		r.Messages, err = siloTurns(turnsPath)
	} else {
		r.Messages, err = siloCalls(filepath.Join(dir, "calls.jsonl"), r.Controller)
	}
	if err != nil {
		return nil, err
	}
	correct := 0
	for _, a := range res.Agents {
		if a.Correct {
			correct++
		}
	}
	r.Summary = fmt.Sprintf("%d of %d agents correct (S %s, P %s) after %d rounds; %d tool calls, %d messages",
		correct, res.N, fmtNum(res.S), fmtNum(res.P), res.Rounds, res.ToolCalls, res.Messages)
	return r, nil
}

// siloPlayer names who played a silo run: the agent kind, and the model
// as the manifest records it (a suite's run), as a mixed team's result
// names its models, or a coordbench/… label when nothing records one.
func siloPlayer(man *suite.Manifest, res *round.Result, llmRun bool) (agent, model string, recorded bool) {
	agent = "scripted"
	if llmRun {
		agent = "llm"
	}
	if man != nil && man.Agent != "" {
		agent = man.Agent
	}
	switch {
	case man != nil && man.LLM != nil && man.LLM.Model != "":
		return agent, man.LLM.Model, true
	case man != nil && man.Team != nil && len(man.Team.Members) > 0:
		var ms []string
		for _, mem := range man.Team.Members {
			ms = append(ms, mem.Model)
		}
		return agent, strings.Join(ms, "+"), true
	case len(res.ByModel) > 0:
		var ms []string
		for _, bm := range res.ByModel {
			ms = append(ms, bm.Model)
		}
		return agent, strings.Join(ms, "+"), true
	case llmRun:
		return agent, "coordbench/unrecorded-model", false
	}
	if man == nil || man.Agent == "" {
		return agent, "coordbench/scripted", false
	}
	return agent, "coordbench/scripted-" + agent, false
}

// siloMetrics are a run's figures as summary.csv has them: the scores,
// the communication, the failure labels and, for model-backed agents, the
// cost.
func siloMetrics(res *round.Result) []Metric {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	ms := []Metric{
		{Name: "S", Value: res.S}, {Name: "success", Value: b(res.Success), Int: true},
		{Name: "P", Value: res.P}, {Name: "P_paper", Value: res.PPaper},
		{Name: "P_paper_crashes", Value: float64(res.PPaperCrashes), Int: true}, {Name: "P_fine", Value: res.PFine},
		{Name: "rounds", Value: float64(res.Rounds), Int: true}, {Name: "tool_calls", Value: float64(res.ToolCalls), Int: true},
		{Name: "call_errors", Value: float64(res.CallErrors), Int: true}, {Name: "messages", Value: float64(res.Messages), Int: true},
		{Name: "bytes", Value: float64(res.Bytes), Int: true}, {Name: "D", Value: res.D},
	}
	if res.DReads != nil {
		ms = append(ms, Metric{Name: "D_reads", Value: *res.DReads})
	}
	if u := res.Usage; u != nil {
		ms = append(ms, Metric{Name: "model_calls", Value: float64(u.ModelCalls), Int: true},
			Metric{Name: "input_tokens", Value: float64(u.InputTokens), Int: true},
			Metric{Name: "output_tokens", Value: float64(u.OutputTokens), Int: true})
		if res.C != nil {
			ms = append(ms, Metric{Name: "C", Value: *res.C})
		}
		if res.CCode != nil {
			ms = append(ms, Metric{Name: "C_code", Value: *res.CCode})
		}
		ms = append(ms, Metric{Name: "wasted_calls", Value: float64(u.WastedCalls), Int: true},
			Metric{Name: "model_errors", Value: float64(u.ModelErrors), Int: true},
			Metric{Name: "max_context_tokens", Value: float64(u.MaxContextTokens), Int: true})
	}
	ms = append(ms, Metric{Name: "capped_turns", Value: float64(res.CappedTurns), Int: true},
		Metric{Name: "agent_errors", Value: float64(len(res.AgentErrors)), Int: true})
	for _, l := range siloLabels {
		ms = append(ms, Metric{Name: l, Value: float64(res.Failures[l]), Int: true})
	}
	return ms
}

// turnTag heads every message of one agent's turn: the transcript of a
// team is one list, and Inspect's messages carry no sender.
func turnTag(round, agent int, outcome string) string {
	t := fmt.Sprintf("[round %d · agent %d", round, agent)
	if outcome != "" && outcome != llmagent.OutcomeOK {
		t += " · " + outcome
	}
	return t + "] "
}

// siloTurns is the transcript of an LLM run from turns.jsonl: every
// message added to each agent's context and every reply, in the log's
// order (round, then agent), each headed by its round and agent.
func siloTurns(path string) ([]Message, error) {
	var msgs []Message
	err := scanJSONL(path, func(line []byte, _ int) error {
		var t llmagent.TurnRecord
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		tag := turnTag(t.Round, t.Agent, "")
		for _, in := range t.Input {
			msgs = append(msgs, chatMessage(in, tag))
		}
		// A long reply is exported as the turn log keeps it (cut, as des's
		// raw replies are), with a note that says where the whole is.
		reply := llm.Message{Role: "assistant", Content: t.Reply + t.RawText.Note(len(t.Reply))}
		for _, c := range t.ReplyToolCalls {
			c.Arguments += c.Note(len(c.Arguments))
			reply.ToolCalls = append(reply.ToolCalls, c.ToolCall)
		}
		if t.Outcome == llmagent.OutcomeModelError && reply.Content == "" {
			reply.Content = "[coordbench: model error: " + t.Error + "]"
		}
		msgs = append(msgs, chatMessage(reply, turnTag(t.Round, t.Agent, t.Outcome)))
		return nil
	})
	return msgs, err
}

// chatMessage converts a message of the model client, headed by tag.
func chatMessage(m llm.Message, tag string) Message {
	out := Message{Role: m.Role, Content: tag + m.Content, ToolCallID: m.ToolCallID}
	switch m.Role {
	case "system", "user", "assistant", "tool":
	default:
		out.Role, out.Content = "user", tag+"("+m.Role+") "+m.Content
	}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCall(tc.ID, tc.Name, []byte(tc.Arguments)))
	}
	return out
}

// toolCall is a call whose arguments are kept as recorded if they are a
// JSON object, else wrapped as {"raw": text} with the parse error set.
func toolCall(id, function string, args []byte) ToolCall {
	tc := ToolCall{ID: id, Function: function}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err == nil && obj != nil {
		tc.Arguments = json.RawMessage(args)
		return tc
	}
	raw, _ := json.Marshal(map[string]string{"raw": string(args)})
	tc.Arguments, tc.ParseError = raw, "the arguments are not a JSON object"
	return tc
}

// siloCalls is the transcript of a scripted run from calls.jsonl: each
// tool call as an assistant message making it and a tool message with its
// result, after a note that the agents are programs.
func siloCalls(path, agent string) ([]Message, error) {
	msgs := []Message{{Role: "system", Content: fmt.Sprintf(
		"The agents of this run are coordbench's scripted team %q, programs, not models: "+
			"the transcript is their tool calls and results from calls.jsonl.", agent)}}
	err := scanJSONL(path, func(line []byte, _ int) error {
		var e proto.LogEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		id := fmt.Sprintf("r%d-a%d-%d", e.Round, e.Agent, e.Seq)
		tag := turnTag(e.Round, e.Agent, "")
		msgs = append(msgs, Message{Role: "assistant", Content: tag + e.Tool, ToolCalls: []ToolCall{toolCall(id, e.Tool, e.Args)}})
		result := string(e.Result)
		if e.Error != "" {
			result = "error: " + e.Error
		}
		msgs = append(msgs, Message{Role: "tool", Content: tag + result, ToolCallID: id, Function: e.Tool})
		return nil
	})
	return msgs, err
}
