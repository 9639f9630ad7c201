// Package transcript prints a scheduling-benchmark run for a reader
// (coordbench des show): its header from metrics.json and one line per
// audited decision of decisions.jsonl, or, for one decision of an LLM
// controller, the exact messages it sent to the model, rebuilt from the
// audit (the view and the framework memory) and checked against the
// audit's prompt_sha256 (llmctl.Request).
//
// Everything printed passes untrusted.Printable: replies, reasons and
// payload strings come from models, runners and instance files.
package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// AllSteps, as Options.Step, keeps every step.
const AllSteps = -1

// DefaultWidth is Options.Width when unset.
const DefaultWidth = 100

// Bounds of what is read: a decisions.jsonl line carries its payload;
// metrics.json is small.
const (
	maxLine    = 64 << 20
	maxMetrics = 16 << 20
)

// Options select and shape what Write prints.
type Options struct {
	Step  int    // only this step (AllSteps: every step)
	Agent string // only this agent id ("": every agent)
	Width int    // replies and reasons are clipped to this many characters
	Full  bool   // do not clip
}

// Write prints the run in dir (des run --out, or a suite's
// cases/<case_id>/): a header, then one line per decision Options keep.
func Write(w io.Writer, dir string, opt Options) error {
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	m, err := readMetrics(dir)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	p := printer{w: bw}
	p.printf("DESBench run %s\n", dir)
	p.printf("instance %s  paradigm %s  controller %s", m.Instance, m.Paradigm, m.Controller)
	if m.Model != "" {
		p.printf("  model %s  framework %s", m.Model, m.Framework)
	}
	p.printf("  seed %d  status %s\n", m.Seed, m.Status)
	n := 0
	err = scanAudits(dir, opt.Step, opt.Agent, func(a *coord.Audit) bool {
		n++
		p.printf("step %d  t=%s  %s (%s, %s): action %d  %s", a.Step, num(a.Time), a.AgentID, a.Role, a.Kind, a.Action, a.Source)
		if a.Reason != "" {
			p.printf(" (%s)", clip(a.Reason, opt))
		}
		if note := a.AgentNote; note != nil {
			if note.Parse != "" {
				p.printf("  [%s]", note.Parse)
			}
			if note.Raw != "" {
				p.printf("  reply: %s", clip(note.Raw, opt))
			}
		}
		p.printf("\n")
		return false
	})
	if err != nil {
		return err
	}
	if n == 0 {
		p.printf("no decision of step %s, agent %s\n", stepName(opt.Step), agentName(opt.Agent))
	}
	return bw.Flush()
}

// WriteRequest prints the messages the LLM controller sent for agent's
// decision at step of the run in dir, rebuilt from the audit, and whether
// they hash to the recorded prompt_sha256. A rebuilt request that does
// not match is printed, then reported as an error; an audit without a
// hash (a run recorded before coordbench kept it) is printed unchecked,
// and says so.
func WriteRequest(w io.Writer, dir string, step int, agent string) error {
	if step < 0 || agent == "" {
		return errors.New("a request is one agent's decision: give its step and agent")
	}
	var found *coord.Audit
	if err := scanAudits(dir, step, agent, func(a *coord.Audit) bool { found = a; return true }); err != nil {
		return err
	}
	if found == nil {
		return fmt.Errorf("%s: no decision of agent %q at step %d", filepath.Join(dir, harness.FileDecisions), agent, step)
	}
	note := found.AgentNote
	if note == nil || (note.PromptSHA256 == "" && note.Model == "") {
		return fmt.Errorf("step %d, %s: decided by %s, not by a model call of the LLM controller: no request to rebuild", step, agent, found.Source)
	}
	msgs, err := llmctl.Request(found.Payload, note.FrameworkState)
	if err != nil {
		return fmt.Errorf("step %d, %s: %w", step, agent, err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	p := printer{w: bw}
	p.printf("step %d, %s (%s, %s): %d messages sent to %s\n", step, agent, found.Role, found.Kind, len(msgs), note.Model)
	for i, m := range msgs {
		p.printf("[%d %s] %s\n", i, m.Role, m.Content)
	}
	got := llmctl.PromptSHA256(msgs)
	var mismatch error
	switch {
	case note.PromptSHA256 == "":
		p.printf("not checked: the audit has no prompt_sha256 (a run recorded before coordbench kept it; its framework memory is missing from the user message)\n")
	case got == note.PromptSHA256:
		p.printf("prompt_sha256 %s: the rebuilt messages are the ones sent\n", got)
	default:
		mismatch = fmt.Errorf("step %d, %s: the rebuilt messages hash to %s, the audit recorded %s: they are not the request as sent (decisions.jsonl edited, or written by another coordbench version)", step, agent, got, note.PromptSHA256)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return mismatch
}

// scanAudits calls each with the audits of decisions.jsonl in dir that
// match step (AllSteps: any) and agent ("": any), in file order, until it
// returns true. The file is in step order: the scan stops past step.
func scanAudits(dir string, step int, agent string, each func(*coord.Audit) (stop bool)) error {
	path := filepath.Join(dir, harness.FileDecisions)
	f, err := inputfile.Open(path, "decisions log")
	if err != nil {
		return err
	}
	defer f.Close()
	return inputfile.ScanLines(f, path, "decisions log", maxLine, func(line []byte) (bool, error) {
		var head struct {
			Step    int    `json:"step"`
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return false, err
		}
		if step != AllSteps && head.Step > step {
			return true, nil
		}
		if (step != AllSteps && head.Step != step) || (agent != "" && head.AgentID != agent) {
			return false, nil
		}
		var a coord.Audit
		if err := json.Unmarshal(line, &a); err != nil {
			return false, err
		}
		if a.Payload == nil {
			return false, errors.New("no payload")
		}
		return each(&a), nil
	})
}

// readMetrics reads metrics.json of the run in dir.
func readMetrics(dir string) (*harness.Metrics, error) {
	path := filepath.Join(dir, harness.FileMetrics)
	b, err := inputfile.Read(path, "metrics file", maxMetrics)
	if err != nil {
		return nil, err
	}
	var m harness.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Instance == "" || m.Controller == "" {
		return nil, fmt.Errorf("%s: no instance or controller: not a des run's metrics (des show reads a des run directory, or a suite's cases/<case_id>/)", path)
	}
	return &m, nil
}

// printer writes everything through untrusted.Printable.
type printer struct{ w *bufio.Writer }

func (p printer) printf(format string, args ...any) {
	p.w.WriteString(untrusted.Printable(fmt.Sprintf(format, args...)))
}

// clip shortens s to opt.Width characters (unless Full), newlines as ⏎.
func clip(s string, opt Options) string {
	if opt.Full {
		return untrusted.OneLine(s, 0)
	}
	return untrusted.OneLine(s, opt.Width)
}

// num writes x in the shortest form that reads back the same.
func num(x float64) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func stepName(step int) string {
	if step == AllSteps {
		return "any"
	}
	return fmt.Sprint(step)
}

func agentName(agent string) string {
	if agent == "" {
		return "any"
	}
	return agent
}
