package llmctl

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
)

// MakerConfig says how to build the LLM controllers of a run or a suite.
// Validate checks it; NewMaker checks it and builds the model clients.
// Errors are *opterr.Error naming the field ("Framework") or, for the
// model, the llm.Spec field ("BaseURL"); a front end names them its own way.
type MakerConfig struct {
	// Model is the endpoint. Its Model is one model name for every role, or
	// a model per role: "plant=M1,area=M2,cell=M3" (a role may be left out
	// when a default is given: "M,cell=M3"). Its Name, if set, labels the
	// controllers' models in case ids, manifests and summaries.
	Model llm.Spec
	// Options are the clients' settings besides the model's (timeouts,
	// the response cache, the process's shared endpoint state).
	Options llm.Options
	// Framework is the orchestration style (Frameworks; "" is graph).
	Framework string
	// ReplyParsing is how replies are read (ReplyParsings; "" is
	// published).
	ReplyParsing string
	// MaxModelFailures is Controller.MaxModelFailures, at least 1.
	MaxModelFailures int
	// AbortOnModelError is Controller.AbortOnModelError.
	AbortOnModelError bool
}

// DefaultFramework is the framework of a MakerConfig that names none.
const DefaultFramework = "graph"

// DefaultMaxTokens is the output-token cap the command line and experiment
// files give a des model by default: 0, no cap (max_completion_tokens is
// not sent). The contract's reply needs a handful of tokens, but a
// reasoning model spends its thinking from the same budget and, under a
// small cap, ends before it answers; a run that wants a cap sets one.
const DefaultMaxTokens = 0

// roleModels reads Model.Model: the model of each role, "" the default.
func roleModels(spec string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(spec, ",") {
		role, name, found := strings.Cut(part, "=")
		if !found {
			role, name = "", part
		}
		switch role {
		case "", coord.RolePlant, coord.RoleArea, coord.RoleCell:
		default:
			return nil, opterr.New("Model", "unknown role %q (want plant, area or cell)", role)
		}
		out[role] = name
	}
	if _, ok := out[""]; !ok && len(out) < 3 {
		return nil, opterr.New("Model", "give a default model or one for each of plant, area and cell")
	}
	return out, nil
}

// Validate checks c without building anything: the first bad field.
func (c MakerConfig) Validate() error {
	if c.Model.Model == "" || c.Model.BaseURL == "" {
		return opterr.New("LLM", "an LLM controller needs a model and a base URL (try a stub: coordbench llm stub)")
	}
	if fw := cmp.Or(c.Framework, DefaultFramework); !slices.Contains(frameworks, fw) {
		return opterr.New("Framework", "unknown framework %q (want %s)", fw, strings.Join(frameworks, " or "))
	}
	if rp := cmp.Or(c.ReplyParsing, ParsingPublished); !slices.Contains(replyParsings, rp) {
		return opterr.New("ReplyParsing", "unknown rule %q (want %s)", rp, strings.Join(replyParsings, " or "))
	}
	if c.MaxModelFailures < 1 {
		return opterr.New("MaxModelFailures", "must be at least 1 (got %d)", c.MaxModelFailures)
	}
	if err := c.Model.Validate(); err != nil {
		return err
	}
	models, err := roleModels(c.Model.Model)
	if err != nil {
		return err
	}
	for _, role := range slices.Sorted(maps.Keys(models)) {
		if err := c.Model.Config(models[role], c.Options).Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Maker makes the LLM controllers of a suite (it is a
// harness.ControllerMaker): one set of clients, and the caller's response
// cache, shared by every case; a fresh controller (fresh framework memory)
// per case.
type Maker struct {
	cfg    MakerConfig
	models map[string]Model
	stats  *llm.Stats
}

// NewMaker validates cfg and builds the clients of its models.
func NewMaker(cfg MakerConfig) (*Maker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Framework = cmp.Or(cfg.Framework, DefaultFramework)
	cfg.ReplyParsing = cmp.Or(cfg.ReplyParsing, ParsingPublished)
	names, err := roleModels(cfg.Model.Model)
	if err != nil {
		return nil, err
	}
	m := &Maker{cfg: cfg, models: map[string]Model{}}
	// In the order given, so that the last client's endpoint reports the
	// status, as the roles share one base URL.
	for _, part := range strings.Split(cfg.Model.Model, ",") {
		role, _, found := strings.Cut(part, "=")
		if !found {
			role = ""
		}
		cl, err := llm.New(cfg.Model.Config(names[role], cfg.Options))
		if err != nil {
			return nil, err
		}
		m.models[role] = Model{Name: names[role], Client: cl}
		m.stats = cl.Stats()
	}
	if len(m.models) == 0 {
		return nil, errors.New("llm controller: no model")
	}
	return m, nil
}

// Name is the controllers' name in case ids ("llm").
func (m *Maker) Name() string { return "llm" }

// Model names the models in case ids and summaries: the Spec's Name, else
// its Model as given.
func (m *Maker) Model() string { return m.cfg.Model.Label() }

// Framework is the orchestration style.
func (m *Maker) Framework() string { return m.cfg.Framework }

// ReplyParsing is the rule replies are read by.
func (m *Maker) ReplyParsing() string { return m.cfg.ReplyParsing }

// DefaultReplyParsing is the rule of a run that names none.
func (m *Maker) DefaultReplyParsing() string { return ParsingPublished }

// Status is the endpoint's live state for progress lines.
func (m *Maker) Status() string { return m.stats.String() }

// New makes the controller of one case.
func (m *Maker) New(uint64) (coord.Controller, error) {
	c, err := New(m.cfg.Framework, m.models)
	if err == nil {
		err = c.SetReplyParsing(m.cfg.ReplyParsing)
	}
	if err != nil {
		return nil, err
	}
	c.MaxModelFailures, c.AbortOnModelError = m.cfg.MaxModelFailures, m.cfg.AbortOnModelError
	if s := m.cfg.Model; s.Name != s.Model {
		c.Label = s.Name
	}
	return c, nil
}
