package inspect

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
)

// decisionLine is the part of a decisions.jsonl line the export reads.
type decisionLine struct {
	Step      int          `json:"step"`
	AgentID   string       `json:"agent_id"`
	Role      string       `json:"role"`
	Kind      string       `json:"kind"`
	Action    int          `json:"action"`
	Source    coord.Source `json:"source"`
	Requested *int         `json:"requested"`
	Reason    string       `json:"reason"`
	coord.AgentNote
	Payload json.RawMessage `json:"payload"`
}

// readDESRun reads the des run directory dir (des run --out, or a des
// suite's cases/<id>/).
func readDESRun(source, dir string) (*Run, error) {
	var man harness.Manifest
	if err := readJSON(filepath.Join(dir, "manifest.json"), &man); err != nil {
		return nil, err
	}
	var m harness.Metrics
	if err := readJSON(filepath.Join(dir, "metrics.json"), &m); err != nil {
		return nil, err
	}
	if m.Instance == "" || m.Paradigm == "" || m.Controller == "" || m.Status == "" {
		return nil, fmt.Errorf("%s: metrics.json lacks instance, paradigm, controller or status: not a des run's metrics", dir)
	}
	r := &Run{
		Benchmark:  BenchDES,
		Source:     source,
		CaseID:     filepath.Base(dir),
		Sample:     m.Instance + "__" + m.Paradigm,
		Seed:       m.Seed,
		Controller: m.Controller,
		Variant:    m.Framework,
		Status:     m.Status,
		Fields: map[string]any{
			"instance": m.Instance, "paradigm": m.Paradigm, "controller": m.Controller,
			"model": m.Model, "framework": m.Framework,
		},
	}
	builtin := slices.Contains(policy.Names(), m.Controller)
	switch {
	case m.Model != "":
		r.Model, r.ModelRecorded = m.Model, true
	case builtin:
		r.Model = "coordbench/builtin-" + m.Controller
	default:
		r.Model = "coordbench/" + m.Controller
	}
	for _, sm := range harness.SuiteMetrics() {
		r.Metrics = append(r.Metrics, Metric{Name: sm.Key, Value: sm.Value(&m), Int: sm.Int})
	}
	sec := m.Secondary
	r.Usage = Usage{Calls: int64(sec.LLMCalls), InputTokens: sec.PromptTokens, OutputTokens: sec.CompletionTokens}
	r.Meta = map[string]any{
		"benchmark": BenchDES, "case_id": r.CaseID, "seed": m.Seed, "status": m.Status,
		"instance": m.Instance, "paradigm": man.Paradigm, "controller": m.Controller,
		"violations": m.Violations, "secondary": m.Secondary, "coordbench_version": man.Version,
	}
	if m.Framework != "" {
		r.Meta["framework"] = m.Framework
	}
	if man.ReplyParsing != "" {
		r.Meta["reply_parsing"] = man.ReplyParsing
	}
	if builtin {
		r.Messages = []Message{{Role: "system", Content: fmt.Sprintf(
			"Controller %q is a built-in coordbench controller: it decides without a model, so this run has no model transcript. "+
				"Its %d decisions are in decisions.jsonl.", m.Controller, sec.Decisions)}}
	} else {
		tr, err := desTranscript(filepath.Join(dir, "decisions.jsonl"))
		if err != nil {
			return nil, err
		}
		r.Usage.CachedInputTokens = tr.cached
		r.Messages = tr.msgs
		if len(tr.byModel) > 1 {
			r.ByModel = tr.byModel
		}
	}
	switch m.Status {
	case "aborted":
		r.Error = "the episode was aborted: the controller ended it with a fatal error (its message is not in the run's files; see docs/metrics.md)"
	case "interrupted":
		r.Error = "the episode was interrupted by the user (Ctrl-C or SIGTERM) before it ended: not a result to compare"
	}
	r.Summary = fmt.Sprintf("status %s: %d of %d jobs completed by t=%s; %d decisions (%d by the fallback), %d protocol messages",
		m.Status, m.GCj, sec.Jobs, fmtNum(m.GMk), sec.Decisions, m.GFb, m.GCm)
	return r, nil
}

// desAnswers is what desTranscript reads from decisions.jsonl.
type desAnswers struct {
	msgs    []Message
	cached  int64            // prompt tokens a provider's cache served
	byModel map[string]Usage // the answers' usage by model
}

// desTranscript reads the answers of a model or external controller from
// decisions.jsonl: for each audited answer the agent's payload (an LLM
// controller's user message, rebuilt from it and the framework memory the
// audit keeps, as llmctl.Request does; runs older than that audit field
// lack the memory) and the reply;
// a replaced answer is followed by the harness's note. It also sums the
// usage of each model (a controller may give each role its own).
func desTranscript(path string) (*desAnswers, error) {
	a := &desAnswers{byModel: map[string]Usage{}}
	system := false
	err := scanJSONL(path, func(line []byte, _ int) error {
		var d decisionLine
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		n := d.AgentNote
		if n.Raw == "" && n.Error == "" && n.Model == "" && n.Calls == 0 {
			return nil // a built-in answer (des serve's server-answered agents)
		}
		a.cached += n.PromptCachedTokens
		user := string(d.Payload)
		if n.Model != "" {
			u := a.byModel[n.Model]
			u.add(Usage{Calls: int64(n.Calls), InputTokens: n.PromptTokens, OutputTokens: n.CompletionTokens, CachedInputTokens: n.PromptCachedTokens})
			a.byModel[n.Model] = u
			if !system {
				a.msgs = append(a.msgs, Message{Role: "system", Content: llmctl.SystemPrompt})
				system = true
			}
			var v coord.View
			if err := json.Unmarshal(d.Payload, &v); err != nil {
				return fmt.Errorf("payload: %w", err)
			}
			msgs, err := llmctl.Request(&v, n.FrameworkState)
			if err != nil {
				return err
			}
			user = msgs[len(msgs)-1].Content
		}
		a.msgs = append(a.msgs, Message{Role: "user", Content: user})
		reply := n.Raw
		if n.RawTruncated {
			reply += fmt.Sprintf("\n[coordbench: reply cut at %d bytes of %d; SHA-256 of the whole reply %s]", len(n.Raw), n.RawLen, n.RawSHA256)
		}
		if reply == "" && n.Error != "" {
			reply = "[coordbench: no usable reply: " + n.Error + "]"
		}
		a.msgs = append(a.msgs, Message{Role: "assistant", Content: reply})
		if d.Source == coord.SourceFallback {
			note := fmt.Sprintf("[coordbench: step %d, %s (%s, %s): the answer was not used (%s); the harness committed option %d (fallback)]",
				d.Step, d.AgentID, d.Role, d.Kind, d.Reason, d.Action)
			a.msgs = append(a.msgs, Message{Role: "user", Content: note})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// fmtNum writes x in the shortest form that reads back the same.
func fmtNum(x float64) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return strings.TrimSpace(string(b))
}
