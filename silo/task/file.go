package task

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

// FileError reports a malformed task file: which file, which field, what.
type FileError struct {
	Path  string
	Field string // JSON path, e.g. "agent_configs[3].input_shard[2]"
	Msg   string
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: field %q: %s", e.Path, e.Field, e.Msg)
}

// FileName is the published file name of an instance: "{case_id}_n{N}.json".
func (in *Instance) FileName() string { return fmt.Sprintf("%s_n%d.json", in.Task.ID, in.N) }

// WriteFile writes the instance in the published task-file format: keys in
// the published order, indent 2, non-ASCII characters unescaped, no
// trailing newline (json.dump(case, f, indent=2, ensure_ascii=False)).
func (in *Instance) WriteFile(path string) error {
	data, err := in.MarshalFile()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// MarshalFile returns the bytes WriteFile writes.
func (in *Instance) MarshalFile() ([]byte, error) {
	t := in.Task
	if len(in.Shards) != in.N || len(in.Expected) != in.N {
		return nil, fmt.Errorf("task: %s: %d shards and %d answers for %d agents", t.ID, len(in.Shards), len(in.Expected), in.N)
	}
	d := in.Doc
	str := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	def := defaultDoc(t, in.N)
	golds := make([]any, in.N)
	configs := &pyvalue.List{}
	for i := 0; i < in.N; i++ {
		shard, err := pyvalue.ParseJSON(in.Shards[i])
		if err != nil {
			return nil, fmt.Errorf("task: %s: shard %d: %v", t.ID, i, err)
		}
		if golds[i], err = pyvalue.ParseJSON(in.Expected[i]); err != nil {
			return nil, fmt.Errorf("task: %s: expected %d: %v", t.ID, i, err)
		}
		sys := def.SystemPrompts[i]
		if i < len(d.SystemPrompts) {
			sys = d.SystemPrompts[i]
		}
		configs.Items = append(configs.Items, &pyvalue.Dict{
			Keys: []any{"agent_id", "system_prompt", "user_prompt", "input_shard", "expected_output"},
			Vals: []any{int64(i), sys, in.Prompt(i, true), shard, golds[i]},
		})
	}
	metrics := any(&pyvalue.Dict{})
	if len(d.EvaluationMetrics) > 0 {
		v, err := pyvalue.ParseJSON(d.EvaluationMetrics)
		if err != nil {
			return nil, fmt.Errorf("task: %s: evaluation metrics: %v", t.ID, err)
		}
		metrics = v
	} else if v, err := pyvalue.ParseJSON(def.EvaluationMetrics); err == nil {
		metrics = v
	}
	root := &pyvalue.Dict{}
	root.Set("case_id", t.ID)
	root.Set("case_name", str(d.CaseName, t.Name))
	root.Set("paradigm", str(d.Paradigm, t.Paradigm))
	root.Set("leetcode", &pyvalue.Dict{Keys: []any{"url", "description"},
		Vals: []any{str(d.LeetCodeURL, def.LeetCodeURL), str(d.LeetCodeDescription, def.LeetCodeDescription)}})
	root.Set("metadata", &pyvalue.Dict{
		Keys: []any{"num_agents", "optimal_topology", "optimal_message_count", "theoretical_complexity", "output_type", "is_segmented"},
		Vals: []any{int64(in.N), str(d.OptimalTopology, def.OptimalTopology), str(d.OptimalMessageCount, def.OptimalMessageCount),
			str(d.Complexity, def.Complexity), str(d.OutputType, def.OutputType), t.Segmented},
	})
	root.Set("task_description", in.Template)
	root.Set("agent_configs", configs)
	root.Set("expected_output", &pyvalue.Dict{
		Keys: []any{"type", "per_agent_values", "is_segmented", "verification_logic", "verification_logic_hint", "format_description"},
		Vals: []any{str(d.ExpectedType, def.ExpectedType), &pyvalue.List{Items: golds}, t.Segmented,
			str(d.VerificationLogic, def.VerificationLogic), str(d.VerificationLogicHint, def.VerificationLogicHint),
			str(d.FormatDescription, def.FormatDescription)},
	})
	root.Set("evaluation_metrics", metrics)
	return pyvalue.EncodeJSON(root, 2), nil
}

// Bounds of a task file (docs/silo-tasks.md): its size, and its values
// as inputfile.Items counts them, which bound the parser's memory. The
// largest file we write, III-30 with 100 agents, has 51 MB and 7.1
// million items.
const (
	MaxFileBytes = 64 << 20
	MaxFileItems = 8_000_000
)

// LoadFile reads a published task file (section 2 of the design notes),
// including the single-agent variant with agent_config instead of
// agent_configs. Unknown keys are ignored. A malformed file gives a
// *FileError naming the file and the field.
func LoadFile(path string) (*Instance, error) {
	data, err := inputfile.Read(path, "task file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if n := inputfile.Items(data); n > MaxFileItems {
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("about %d JSON values: over the limit of %d for a task file", n, MaxFileItems)}
	}
	return ParseFile(path, data)
}

// ParseFile is LoadFile on bytes already read; path is used in errors.
func ParseFile(path string, data []byte) (*Instance, error) {
	fail := func(field, format string, a ...any) error {
		return &FileError{Path: path, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	v, err := pyvalue.ParseJSON(data)
	if err != nil {
		return nil, fail("", "%v", err)
	}
	root, ok := v.(*pyvalue.Dict)
	if !ok {
		return nil, fail("", "want a JSON object at the top level, got %s", kindOf(v))
	}
	getStr := func(d *pyvalue.Dict, key, field string, required bool) (string, error) {
		x, ok := d.Get(key)
		if !ok {
			if required {
				return "", fail(field, "missing")
			}
			return "", nil
		}
		s, ok := x.(string)
		if !ok {
			return "", fail(field, "want string, got %s", kindOf(x))
		}
		return s, nil
	}
	getObj := func(d *pyvalue.Dict, key, field string, required bool) (*pyvalue.Dict, error) {
		x, ok := d.Get(key)
		if !ok {
			if required {
				return nil, fail(field, "missing")
			}
			return &pyvalue.Dict{}, nil
		}
		o, ok := x.(*pyvalue.Dict)
		if !ok {
			return nil, fail(field, "want object, got %s", kindOf(x))
		}
		return o, nil
	}

	caseID, err := getStr(root, "case_id", "case_id", true)
	if err != nil {
		return nil, err
	}
	t, err := Lookup(caseID)
	if err != nil || t.ID != caseID {
		return nil, fail("case_id", "unknown task %q", caseID)
	}
	in := &Instance{Task: t, Mode: ModeFile, Path: path}
	d := &in.Doc
	if d.CaseName, err = getStr(root, "case_name", "case_name", true); err != nil {
		return nil, err
	}
	if d.Paradigm, err = getStr(root, "paradigm", "paradigm", true); err != nil {
		return nil, err
	}
	for _, f := range []struct{ field, s string }{{"case_name", d.CaseName}, {"paradigm", d.Paradigm}} {
		if r, bad := inputfile.ControlChar(f.s, false); bad {
			return nil, fail(f.field, "contains %U, a control or invisible character; use printable characters", r)
		}
	}
	lc, err := getObj(root, "leetcode", "leetcode", false)
	if err != nil {
		return nil, err
	}
	if d.LeetCodeURL, err = getStr(lc, "url", "leetcode.url", false); err != nil {
		return nil, err
	}
	if d.LeetCodeDescription, err = getStr(lc, "description", "leetcode.description", false); err != nil {
		return nil, err
	}
	meta, err := getObj(root, "metadata", "metadata", false)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"optimal_topology", &d.OptimalTopology}, {"optimal_message_count", &d.OptimalMessageCount},
		{"theoretical_complexity", &d.Complexity}, {"output_type", &d.OutputType}} {
		if *f.dst, err = getStr(meta, f.key, "metadata."+f.key, false); err != nil {
			return nil, err
		}
	}
	if x, ok := meta.Get("is_segmented"); ok {
		if b, ok := x.(bool); !ok || b != t.Segmented {
			return nil, fail("metadata.is_segmented", "want %v for %s, got %s", t.Segmented, t.ID, pyvalue.Repr(x))
		}
	}
	n := -1
	if x, ok := meta.Get("num_agents"); ok {
		k, ok := x.(int64)
		if !ok || k < 1 || k > 1_000_000 {
			return nil, fail("metadata.num_agents", "want a positive integer, got %s", pyvalue.Repr(x))
		}
		n = int(k)
	}
	if in.Template, err = getStr(root, "task_description", "task_description", false); err != nil {
		return nil, err
	}
	if _, ok := root.Get("task_description"); !ok {
		in.Template = d.CaseName
	}

	// Gold values, per agent.
	var golds []any
	exp, hasExp := root.Get("expected_output")
	expObj, isObj := exp.(*pyvalue.Dict)
	if !hasExp {
		return nil, fail("expected_output", "missing")
	}
	if isObj {
		if _, ok := expObj.Get("per_agent_values"); !ok {
			isObj = false // the single-agent variant's raw gold that happens to be a dict
		}
	}
	if isObj {
		pav, _ := expObj.Get("per_agent_values")
		l, ok := pav.(*pyvalue.List)
		if !ok {
			return nil, fail("expected_output.per_agent_values", "want list, got %s", kindOf(pav))
		}
		golds = l.Items
		for _, f := range []struct {
			key string
			dst *string
		}{{"type", &d.ExpectedType}, {"verification_logic", &d.VerificationLogic},
			{"verification_logic_hint", &d.VerificationLogicHint}, {"format_description", &d.FormatDescription}} {
			if *f.dst, err = getStr(expObj, f.key, "expected_output."+f.key, false); err != nil {
				return nil, err
			}
		}
		if x, ok := expObj.Get("is_segmented"); ok {
			if b, ok := x.(bool); !ok || b != t.Segmented {
				return nil, fail("expected_output.is_segmented", "want %v for %s, got %s", t.Segmented, t.ID, pyvalue.Repr(x))
			}
		}
	} else {
		golds = []any{exp}
		d.ExpectedType = "single"
	}

	var shards []any
	configsV, hasConfigs := root.Get("agent_configs")
	if hasConfigs {
		configs, ok := configsV.(*pyvalue.List)
		if !ok {
			return nil, fail("agent_configs", "want list, got %s", kindOf(configsV))
		}
		if n < 0 {
			return nil, fail("metadata.num_agents", "missing")
		}
		if len(configs.Items) != n {
			return nil, fail("agent_configs", "%d entries for num_agents = %d", len(configs.Items), n)
		}
		for i, c := range configs.Items {
			f := fmt.Sprintf("agent_configs[%d]", i)
			cfg, ok := c.(*pyvalue.Dict)
			if !ok {
				return nil, fail(f, "want object, got %s", kindOf(c))
			}
			id, ok := cfg.Get("agent_id")
			if k, isInt := id.(int64); !ok || !isInt || k != int64(i) {
				return nil, fail(f+".agent_id", "want %d, got %s", i, pyvalue.Repr(id))
			}
			sys, err := getStr(cfg, "system_prompt", f+".system_prompt", false)
			if err != nil {
				return nil, err
			}
			user, err := getStr(cfg, "user_prompt", f+".user_prompt", true)
			if err != nil {
				return nil, err
			}
			d.SystemPrompts = append(d.SystemPrompts, sys)
			d.UserPrompts = append(d.UserPrompts, user)
			raw, ok := cfg.Get("input_shard")
			if !ok {
				return nil, fail(f+".input_shard", "missing")
			}
			sh, err := t.shard.conv(raw)
			if err != nil {
				return nil, shapeToFileErr(path, under(err, f+".input_shard"))
			}
			shards = append(shards, sh)
			if g, ok := cfg.Get("expected_output"); ok && i < len(golds) && !pyEq(g, golds[i]) {
				return nil, fail(f+".expected_output", "differs from expected_output.per_agent_values[%d]", i)
			}
		}
	} else {
		cfgV, ok := root.Get("agent_config")
		if !ok {
			return nil, fail("agent_configs", "missing")
		}
		if n < 0 {
			n = 1
		}
		if n != 1 {
			return nil, fail("metadata.num_agents", "a file with agent_config (single agent) needs num_agents = 1, got %d", n)
		}
		cfg, ok := cfgV.(*pyvalue.Dict)
		if !ok {
			return nil, fail("agent_config", "want object, got %s", kindOf(cfgV))
		}
		user, err := getStr(cfg, "user_prompt", "agent_config.user_prompt", true)
		if err != nil {
			return nil, err
		}
		sys, err := getStr(cfg, "system_prompt", "agent_config.system_prompt", false)
		if err != nil {
			return nil, err
		}
		d.UserPrompts, d.SystemPrompts = []string{user}, []string{sys}
		// The published loader would take an agent_config without its
		// shard, but no run, check or write-back can use one.
		raw, ok := cfg.Get("input_shard")
		if !ok {
			return nil, fail("agent_config.input_shard", "missing")
		}
		sh, err := t.shard.conv(raw)
		if err != nil {
			return nil, shapeToFileErr(path, under(err, "agent_config.input_shard"))
		}
		shards = []any{sh}
	}
	in.N = n
	if len(golds) != n {
		return nil, fail("expected_output.per_agent_values", "%d values for %d agents", len(golds), n)
	}
	for i, g := range golds {
		if _, err := t.gold.conv(g); err != nil {
			return nil, shapeToFileErr(path, under(err, fmt.Sprintf("expected_output.per_agent_values[%d]", i)))
		}
	}
	if em, ok := root.Get("evaluation_metrics"); ok {
		in.Doc.EvaluationMetrics = pyvalue.Canon(em)
	}

	in.shards = shards
	in.Shards = rawAll(shards)
	in.Expected = rawAll(golds)
	in.Deps = t.Deps(n)
	if h := t.hintLine(); strings.Contains(in.Template, h) {
		in.Hint = h
	}
	if t.paramsIn != nil {
		if p := t.paramsIn(in.Template); p != nil {
			in.params = p
			in.Params = pyvalue.Canon(p)
		}
	}
	return in, nil
}

func shapeToFileErr(path string, err error) error {
	var fe *fieldErr
	if errors.As(err, &fe) {
		return &FileError{Path: path, Field: fe.path, Msg: fe.msg}
	}
	return &FileError{Path: path, Msg: err.Error()}
}
