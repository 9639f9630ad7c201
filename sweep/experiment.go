// Package sweep reads experiment files and runs them in shards.
//
// An experiment file (YAML, docs/experiments.md, schema in
// docs/experiment.schema.json) names one benchmark and the matrix of one
// of its suites: for des the instances, paradigms, controllers and seeds
// (harness.SuiteOptions); for silo the tasks or levels, team sizes,
// protocols, agent kinds, seeds, mode, baseline and message format
// (suite.Options); the models of model-backed controllers or agents, each
// with its endpoint, key variable, limits and price (models.go), crossed
// with the matrix, and for des the LLM controller's frameworks; and run
// settings, which never change results. A suite command is a one-line
// experiment: this package only maps the file onto the suites' own
// options, and the suites' own runner (package suiterun) runs the cases.
//
// Cost: Suite.Estimate estimates each case's model calls, tokens and cost
// before anything runs (cost_estimate.go); ReadCosts prices the usage the
// finished cases' logs record and Costs.Write writes cost.csv and
// cost_summary.csv (cost.go); a Budget keeps a run within a cost limit
// (cost_limit.go); StatusOf and Status.Render tell an experiment's
// progress (status.go, status_render.go).
//
// A sweep can be cut into N static shards (Shard): shard i runs the
// cases whose position in suite order is i modulo N, into a directory of
// the suite's layout marked with the experiment (Marker, sweep.json).
// Collect assembles the shard directories of one experiment into one
// suite directory, whose summaries the benchmark's own code then writes,
// byte-identical to a single-machine run's. Package sweep/jetstream hands
// the cases out to workers on many machines instead, over NATS JetStream.
package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/suiterun"
)

// Benchmarks an experiment can name.
const (
	BenchmarkDes  = "des"
	BenchmarkSilo = "silo"
)

// MaxFileSize bounds an experiment file.
const MaxFileSize = 1 << 20

// Experiment is an experiment file.
type Experiment struct {
	// Benchmark is BenchmarkDes or BenchmarkSilo.
	Benchmark string `yaml:"benchmark" json:"benchmark"`
	// Name is free text for people.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Des is the matrix of a des experiment (Benchmark des only).
	Des *Des `yaml:"des,omitempty" json:"des,omitempty"`
	// Silo is the matrix of a silo experiment (Benchmark silo only).
	Silo *Silo `yaml:"silo,omitempty" json:"silo,omitempty"`
	// LLM configures the model-backed controller (des controller llm) or
	// agents (silo agent kind llm).
	LLM *LLM `yaml:"llm,omitempty" json:"llm,omitempty"`
	// Models are the models every model-backed case runs with, each with
	// its endpoint, key variable, limits and price (models.go). Without
	// it, the llm section names one model; with it, the llm section holds
	// only the settings the models share.
	Models []Model `yaml:"models,omitempty" json:"models,omitempty"`
	// Run are settings that change how fast, not what: they are not part
	// of the experiment's identity (ID).
	Run Run `yaml:"run,omitempty" json:"-"`

	// Dir is the directory relative paths in the file (instance and
	// paradigm files) are read from: the file's own directory.
	Dir string `yaml:"-" json:"-"`

	// file and lines are the file's name and the lines of its keys by
	// dotted path, to place the suites' errors (FieldError).
	file  string
	lines map[string]int
}

// List is a YAML list of scalars, or one scalar (which may itself be a
// comma list, as on the command line).
type List []string

// UnmarshalYAML accepts a scalar or a sequence of scalars.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = List{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(List, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return &valueError{line: c.Line, msg: "want a list of names or numbers, not of lists or maps"}
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return &valueError{line: n.Line, msg: "want a name, a number or a list of them"}
}

// spec is the list as the command line's comma list.
func (l List) spec() string { return strings.Join(l, ",") }

// Des is the matrix of a des experiment: every instance × paradigm ×
// controller × seed (docs/cli.md, des suite).
type Des struct {
	// Instances: A5C12, A3C9, all, instance names, gen:A<n>C<m> specs or
	// instance files (relative to the experiment file).
	Instances List `yaml:"instances" json:"instances"`
	// Paradigms: all (the default) or paradigm ids.
	Paradigms List `yaml:"paradigms,omitempty" json:"paradigms,omitempty"`
	// ParadigmFiles are custom paradigms (relative to the experiment file).
	ParadigmFiles List `yaml:"paradigm_files,omitempty" json:"paradigm_files,omitempty"`
	// Controllers: builtin (the default: rule), built-in names, llm.
	Controllers List `yaml:"controllers,omitempty" json:"controllers,omitempty"`
	// Seeds: test (the default), dev, seeds and ranges a-b.
	Seeds List `yaml:"seeds,omitempty" json:"seeds,omitempty"`
	// GroupBy are the aggregate's group keys (default: the paper's).
	GroupBy List `yaml:"group_by,omitempty" json:"group_by,omitempty"`
	// Frameworks are the LLM controller's frameworks (graph, relay), each
	// crossed with every model; default llm.framework, else graph.
	Frameworks List `yaml:"frameworks,omitempty" json:"frameworks,omitempty"`
}

// Silo is the matrix of a silo experiment: every task × N × protocol ×
// agent kind × seed, with the RCC baseline (docs/cli.md, silo suite).
type Silo struct {
	Tasks           List   `yaml:"tasks,omitempty" json:"tasks,omitempty"`
	Levels          List   `yaml:"levels,omitempty" json:"levels,omitempty"`
	Agents          List   `yaml:"agents" json:"agents"`
	Protocols       List   `yaml:"protocols,omitempty" json:"protocols,omitempty"`
	AgentKinds      List   `yaml:"agent_kinds,omitempty" json:"agent_kinds,omitempty"`
	Seeds           List   `yaml:"seeds,omitempty" json:"seeds,omitempty"`
	Mode            string `yaml:"mode,omitempty" json:"mode,omitempty"`
	Baseline        string `yaml:"baseline,omitempty" json:"baseline,omitempty"` // merged, seeded or none
	MessageFormat   string `yaml:"message_format,omitempty" json:"message_format,omitempty"`
	MessageOrder    string `yaml:"message_order,omitempty" json:"message_order,omitempty"` // random (default) or fixed
	MaxRounds       int    `yaml:"max_rounds,omitempty" json:"max_rounds,omitempty"`
	MaxCallsPerTurn int    `yaml:"max_calls_per_turn,omitempty" json:"max_calls_per_turn,omitempty"`
	// Teams are the mixed teams of agent kind team (teams.go).
	Teams []Team `yaml:"teams,omitempty" json:"teams,omitempty"`
}

// LLM are the model settings, as the suites' --llm-* flags (docs/llm.md).
// Operational settings (cache, concurrency, rpm, timeout, attempts) do not
// change replies and are left out of the experiment's identity.
type LLM struct {
	// The one model (without a models list); Name labels it in case ids
	// and summaries (default: Model).
	Endpoint    `yaml:",inline"`
	Concurrency int      `yaml:"concurrency,omitempty" json:"-"`
	RPM         float64  `yaml:"rpm,omitempty" json:"-"`
	Cache       string   `yaml:"cache,omitempty" json:"-"`
	CacheMode   string   `yaml:"cache_mode,omitempty" json:"-"`
	CacheKeyURL bool     `yaml:"cache_key_url,omitempty" json:"-"` // llm.Config.CacheKeyURL
	Timeout     Duration `yaml:"timeout,omitempty" json:"-"`
	MaxAttempts int      `yaml:"max_attempts,omitempty" json:"-"`
	// Price of the one model (USD per million tokens); with a models
	// list, each model has its own.
	Price Price `yaml:"price,omitempty" json:"-"`
	// des only: the LLM controller's framework and reply parsing.
	Framework    string `yaml:"framework,omitempty" json:"framework,omitempty"`
	ReplyParsing string `yaml:"reply_parsing,omitempty" json:"reply_parsing,omitempty"`
	// silo only: the LLM agents' tool format, scaffolds and context budget.
	ToolFormat    string `yaml:"tool_format,omitempty" json:"tool_format,omitempty"`
	ToolResults   string `yaml:"tool_results,omitempty" json:"tool_results,omitempty"` // published (default) or compact
	Scaffold      List   `yaml:"scaffold,omitempty" json:"scaffold,omitempty"`
	ContextBudget int64  `yaml:"context_budget,omitempty" json:"context_budget,omitempty"`
	ReplyReserve  int64  `yaml:"reply_reserve,omitempty" json:"reply_reserve,omitempty"`
}

// Duration is a Go duration string ("2m", "90s").
type Duration string

// Run are the run settings.
type Run struct {
	// Workers is the number of cases run at once (0: the suite's default).
	Workers int `yaml:"workers,omitempty" json:"workers,omitempty"`
}

// Error is a problem in an experiment file: where, which field (a dotted
// path such as des.seeds), what.
type Error = inputfile.Error

// valueError is a List's decoding error, placed by Parse.
type valueError struct {
	line int
	msg  string
}

func (e *valueError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// Load reads and checks the experiment file at path (at most MaxFileSize
// bytes); relative paths in it are read from its directory.
func Load(path string) (*Experiment, error) {
	data, err := inputfile.Read(path, "experiment file", MaxFileSize)
	if err != nil {
		return nil, err
	}
	return LoadData(path, data)
}

// LoadData is Load of the file's contents data, already read (by a
// caller that also keeps the bytes, such as sweep serve, which publishes
// them: one read, so that the bytes and the experiment agree).
func LoadData(path string, data []byte) (*Experiment, error) {
	e, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if e.Dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return e, nil
}

// unknownField is yaml.v3's message for a key the struct lacks.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (?:sweep|llm)\.(\w+)$`)

// lineMsg is yaml.v3's "line N: msg".
var lineMsg = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Parse decodes and checks an experiment file's contents; name is used in
// errors. Unknown keys, values of the wrong type and values the suites
// would refuse up front (an unknown benchmark, a section of the other
// benchmark) are errors naming the field and its line.
func Parse(name string, data []byte) (*Experiment, error) {
	if n := inputfile.Items(data); n > 100_000 {
		return nil, &Error{File: name, Msg: fmt.Sprintf("about %d YAML items: too many for an experiment file", n)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, placed(name, err, nil)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: name, Msg: "empty experiment file (want benchmark: des or benchmark: silo and its matrix; docs/experiments.md)"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		return nil, placed(name, err, &root)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Msg: "more than one YAML document: an experiment file holds one"}
	}
	e.file, e.lines = name, map[string]int{}
	keyLines(root.Content[0], "", e.lines)
	if err := e.check(); err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.File, fe.Line = name, e.lineOf(fe.Field)
		}
		return nil, err
	}
	return &e, nil
}

// keyLines records in lines the line of every key under n, by dotted path.
func keyLines(n *yaml.Node, path string, lines map[string]int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if path != "" {
			p = path + "." + p
		}
		lines[p] = n.Content[i].Line
		v := n.Content[i+1]
		keyLines(v, p, lines)
		if v.Kind == yaml.SequenceNode {
			for j, c := range v.Content {
				q := p + "[" + strconv.Itoa(j) + "]"
				lines[q] = c.Line
				keyLines(c, q, lines)
			}
		}
	}
}

// lineOf is the line of the key at the dotted path, or of its nearest
// parent key in the file (0 if none).
func (e *Experiment) lineOf(path string) int {
	for p := path; p != ""; {
		if l, ok := e.lines[p]; ok {
			return l
		}
		i := strings.LastIndex(p, ".")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// placed turns a yaml.v3 error into an *Error naming the file, line and,
// where it can, the field.
func placed(name string, err error, root *yaml.Node) error {
	var ve *valueError
	if errors.As(err, &ve) {
		return &Error{File: name, Line: ve.line, Field: fieldAt(root, ve.line), Msg: ve.msg}
	}
	var te *yaml.TypeError
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		field := fieldAtKey(root, line, m[2]) // the key itself, also in a flow mapping of several keys on one line
		if field == "" {
			field = fieldAt(root, line)
		}
		if field == "" {
			field = m[2]
		}
		return &Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf("unknown field in %s (docs/experiments.md lists the fields)", section(m[3]))}
	}
	if m := lineMsg.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Field: fieldAt(root, line), Msg: m[2]}
	}
	return &Error{File: name, Msg: msg}
}

// section names the part of the file a struct decodes.
func section(typ string) string {
	switch typ {
	case "Experiment":
		return "the top level"
	case "Run":
		return "run"
	case "Spec":
		return "model"
	case "Team":
		return "a team of silo.teams"
	case "TeamMember":
		return "a team's agents entry (model and count or share)"
	}
	return strings.ToLower(typ)
}

// fieldAt is the dotted path of the key on line (or of the value there),
// "" if none.
func fieldAt(root *yaml.Node, line int) string { return fieldAtKey(root, line, "") }

// fieldAtKey is fieldAt of the key named key on line ("": any key).
func fieldAtKey(root *yaml.Node, line int, key string) string {
	if root == nil || len(root.Content) == 0 {
		return ""
	}
	var walk func(n *yaml.Node, path string) string
	walk = func(n *yaml.Node, path string) string {
		if n.Kind != yaml.MappingNode {
			return ""
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if k.Line == line && (key == "" || k.Value == key) {
				return p
			}
			if f := walk(v, p); f != "" {
				return f
			}
			if v.Kind == yaml.SequenceNode {
				for j, c := range v.Content {
					q := p + "[" + strconv.Itoa(j) + "]"
					if f := walk(c, q); f != "" {
						return f
					}
					if c.Line == line && key == "" {
						return p
					}
				}
			}
		}
		return ""
	}
	return walk(root.Content[0], "")
}

// fieldErr is an *Error of field, placed by Parse.
func fieldErr(field, format string, a ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// check checks what does not need the suites: the benchmark and its
// section, the model settings that belong to the other benchmark, and
// numbers out of range. The suites check the matrix itself (Resolve).
func (e *Experiment) check() error {
	switch e.Benchmark {
	case BenchmarkDes:
		if e.Silo != nil {
			return fieldErr("silo", "a des experiment takes a des section, not a silo one")
		}
		if e.Des == nil {
			return fieldErr("benchmark", "a des experiment needs a des section (instances, paradigms, controllers, seeds)")
		}
		if len(e.Des.Instances) == 0 {
			return fieldErr("des.instances", "required: A5C12, A3C9, all, instance names, gen:A<n>C<m> or instance files")
		}
	case BenchmarkSilo:
		if e.Des != nil {
			return fieldErr("des", "a silo experiment takes a silo section, not a des one")
		}
		if e.Silo == nil {
			return fieldErr("benchmark", "a silo experiment needs a silo section (tasks or levels, agents, protocols, ...)")
		}
		if len(e.Silo.Agents) == 0 {
			return fieldErr("silo.agents", "required: the team sizes N, e.g. [2, 5, 10]")
		}
		if e.Silo.MaxRounds < 0 {
			return fieldErr("silo.max_rounds", "want a positive round cap (got %d)", e.Silo.MaxRounds)
		}
		if e.Silo.MaxCallsPerTurn < 0 {
			return fieldErr("silo.max_calls_per_turn", "want 0 (no cap) or a positive cap (got %d)", e.Silo.MaxCallsPerTurn)
		}
		if b := e.Silo.Baseline; b != "" && b != "merged" && b != "seeded" && b != "none" {
			return fieldErr("silo.baseline", "want merged, seeded or none (got %q)", b)
		}
	case "":
		return fieldErr("benchmark", "required: des or silo")
	default:
		return fieldErr("benchmark", "want des or silo (got %q)", e.Benchmark)
	}
	if e.Run.Workers < 0 || e.Run.Workers > suiterun.MaxWorkers {
		return fieldErr("run.workers", "want 1 to %d cases at once (got %d)", suiterun.MaxWorkers, e.Run.Workers)
	}
	if e.Des != nil && len(e.Des.Frameworks) > 0 && e.Benchmark != BenchmarkDes {
		return fieldErr("des.frameworks", "not a setting of %s experiments", e.Benchmark)
	}
	if l := e.LLM; l != nil {
		if len(e.Models) == 0 && l.Model == "" {
			return fieldErr("llm.model", "required with an llm section (or give a models list)")
		}
		if len(e.Models) == 0 && l.BaseURL == "" {
			return fieldErr("llm.base_url", "required with an llm section (try a stub played in-process: stub:builtin for des, stub:silo-gather for silo; coordbench llm stub --help)")
		}
		des := map[string]bool{"framework": l.Framework != "", "reply_parsing": l.ReplyParsing != ""}
		silo := map[string]bool{"tool_format": l.ToolFormat != "", "tool_results": l.ToolResults != "", "scaffold": len(l.Scaffold) > 0,
			"context_budget": l.ContextBudget != 0, "reply_reserve": l.ReplyReserve != 0}
		other := silo
		if e.Benchmark == BenchmarkSilo {
			other = des
		}
		for _, k := range sortedKeys(other) {
			if other[k] {
				return fieldErr("llm."+k, "not a setting of %s experiments", e.Benchmark)
			}
		}
		if t := l.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0) {
			return fieldErr("llm.temperature", "want a number from 0 (got %v)", *t)
		}
		if math.IsNaN(l.RPM) || math.IsInf(l.RPM, 0) {
			return fieldErr("llm.rpm", "want a number (got %v)", l.RPM)
		}
		counts := map[string]float64{"concurrency": float64(l.Concurrency), "rpm": l.RPM, "max_tokens": float64(l.MaxTokens),
			"max_attempts": float64(l.MaxAttempts), "context_budget": float64(l.ContextBudget), "reply_reserve": float64(l.ReplyReserve)}
		for _, k := range sortedKeys(counts) {
			if v := counts[k]; v < 0 {
				return fieldErr("llm."+k, "must not be negative (got %v)", v)
			}
		}
	}
	if err := e.checkModels(); err != nil {
		return err
	}
	return e.checkTeams()
}

// sortedKeys are m's keys in order (to check fields in a fixed order).
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ID identifies the experiment: the SHA-256 of its canonical JSON, which
// holds what changes results (the matrix and the model settings that
// change replies) and leaves out run settings, operational model
// settings, the name and the file's location. Shards of one experiment
// have one ID.
func (e *Experiment) ID() string {
	x := *e
	x.Name = "" // for people only
	sum := sha256.Sum256(x.Canonical())
	return hex.EncodeToString(sum[:])
}

// Canonical is the experiment's identity as JSON (see ID).
func (e *Experiment) Canonical() []byte {
	// Strings, lists and finite numbers (check refuses NaN): Marshal
	// cannot fail.
	b, _ := json.Marshal(e)
	return b
}
