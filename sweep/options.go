package sweep

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/silo/suite"
)

// DesOptions maps a des experiment onto the suite's options, with the
// suite command's defaults for what the file leaves out; instance and
// paradigm files are read relative to e.Dir. Model-backed controllers
// need their makers added (SuiteOptions.Makers).
func (e *Experiment) DesOptions() harness.SuiteOptions {
	d := e.Des
	if d == nil {
		d = &Des{}
	}
	opt := harness.SuiteOptions{Suite: e.paths(d.Instances).spec(), Paradigms: orDefault(d.Paradigms, "all"),
		Controllers: orDefault(d.Controllers, "builtin"), Builtins: policy.Builtins(), Seeds: orDefault(d.Seeds, "test")}
	for _, f := range d.ParadigmFiles {
		opt.ParadigmFiles = append(opt.ParadigmFiles, e.path(f))
	}
	return opt
}

// DesGroupBy is the des aggregate's grouping (nil: the default).
func (e *Experiment) DesGroupBy() ([]string, error) {
	if e.Des == nil || len(e.Des.GroupBy) == 0 {
		return nil, nil
	}
	keys, err := harness.ParseGroupBy(e.Des.GroupBy.spec())
	if err != nil {
		return nil, &Error{File: e.file, Line: e.lineOf("des.group_by"), Field: "des.group_by", Msg: err.Error()}
	}
	return keys, nil
}

// SiloOptions maps a silo experiment onto the suite's options, with the
// suite command's defaults for what the file leaves out. Agent kind llm
// needs Options.LLMs set, and kind team Options.Teams (SiloTeams).
func (e *Experiment) SiloOptions() suite.Options {
	s := e.Silo
	if s == nil {
		s = &Silo{}
	}
	opt := suite.Options{Tasks: s.Tasks.spec(), Levels: orDefault(s.Levels, "I,II,III"), Agents: s.Agents.spec(),
		Protocols: orDefault(s.Protocols, "p2p,broadcast,sfs"), Agent: orDefault(s.AgentKinds, "reference"),
		Mode: s.Mode, Seeds: s.Seeds.spec(), MaxRounds: s.MaxRounds, MaxCallsPerTurn: s.MaxCallsPerTurn,
		MessageFormat: s.MessageFormat, MessageOrder: s.MessageOrder, Baseline: s.Baseline}
	if s.Baseline == "none" {
		opt.Baseline, opt.NoBaseline = "", true
	}
	return opt
}

// WithLLM reports whether the experiment runs a model-backed controller
// (des controller llm) or agents (silo agent kinds llm and team).
func (e *Experiment) WithLLM() bool {
	var l List
	switch e.Benchmark {
	case BenchmarkDes:
		l = List(strings.Split(e.DesOptions().Controllers, ","))
	case BenchmarkSilo:
		l = List(strings.Split(e.SiloOptions().Agent, ","))
	}
	for _, x := range l {
		if x = strings.TrimSpace(x); x == "llm" || (x == "team" && e.Benchmark == BenchmarkSilo) {
			return true
		}
	}
	return false
}

func orDefault(l List, def string) string {
	if len(l) == 0 {
		return def
	}
	return l.spec()
}

// Path is p, a path in the experiment file, as read from the file's
// directory (relative paths are relative to the file).
func (e *Experiment) Path(p string) string { return e.path(p) }

func (e *Experiment) path(p string) string {
	if e.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// paths resolves the instance files of a des instance list: every item
// that is not a group, a reported instance or a gen spec.
func (e *Experiment) paths(l List) List {
	out := make(List, 0, len(l))
	for _, item := range l {
		for _, x := range strings.Split(item, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			if x == "all" || x == "A5C12" || x == "A3C9" || strings.HasPrefix(x, "gen:") || slices.Contains(factory.BuiltinNames(), x) {
				out = append(out, x)
				continue
			}
			out = append(out, e.path(x))
		}
	}
	return out
}

// fields maps the suites' option names to the experiment's fields.
var fields = map[string]map[string]string{
	BenchmarkDes: {"Suite": "des.instances", "Paradigms": "des.paradigms", "ParadigmFiles": "des.paradigm_files",
		"Controllers": "des.controllers", "Seeds": "des.seeds", "GroupBy": "des.group_by"},
	BenchmarkSilo: {"Levels": "silo.levels", "Tasks": "silo.tasks", "Agents": "silo.agents", "Protocols": "silo.protocols",
		"Agent": "silo.agent_kinds", "Mode": "silo.mode", "Seeds": "silo.seeds", "MaxRounds": "silo.max_rounds",
		"MaxCallsPerTurn": "silo.max_calls_per_turn", "MessageFormat": "silo.message_format", "MessageOrder": "silo.message_order", "Baseline": "silo.baseline",
		"LLM": "llm", "Teams": "silo.teams"},
}

// FieldError puts an error of the suites' options (an *opterr.Error
// naming an option) in the experiment's terms: the field of file that
// sets it. Other errors are returned as they are.
func (e *Experiment) FieldError(file string, err error) error {
	var oe *opterr.Error
	if !errors.As(err, &oe) {
		return err
	}
	f, ok := fields[e.Benchmark][oe.Option]
	if !ok {
		return err
	}
	msg := oe.Err.Error()
	for _, s := range oe.See {
		if g, ok := fields[e.Benchmark][s]; ok {
			msg += " (see " + g + ")"
		}
	}
	return &Error{File: file, Line: e.lineOf(f), Field: f, Msg: msg}
}
