package task

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/silo/pyrand"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

// Instance modes.
const (
	ModeOfficial = "official" // the published generator's stream, replayed
	ModeSeeded   = "seeded"   // an independent stream per (task, N, seed)
	ModeFile     = "file"     // loaded from a task file
)

// officialCounts backs OfficialCounts.
var officialCounts = []int{2, 5, 10, 20, 50, 100}

// OfficialCounts returns the agent counts of the published benchmark, in
// the order the published generator drew them.
func OfficialCounts() []int { return slices.Clone(officialCounts) }

// OfficialSeed is the published generator's random.seed.
const OfficialSeed = 42

// Instance is one task at one team size: the shards, the gold answers and
// the text the agents see. Treat it as read-only: instances returned by
// Official share their data with a cache.
type Instance struct {
	Task *Task
	N    int
	Mode string // ModeOfficial, ModeSeeded, ModeFile
	Seed uint64 // seeded mode: the seed given to Seeded
	// MergedFrom is, for a merged baseline (Merged), the team size of the
	// instance whose data the single agent holds; 0 otherwise.
	MergedFrom int

	// Template is the task_description: the description with {agent_id},
	// {input_shard}, {max_id} and {num_agents} left in.
	Template string
	// Hint is the topology suggestion as it appears in Template (one line,
	// with its newline); Prompt(i, false) removes it. Empty when unknown
	// (imported files whose wording is not ours) and for a single agent
	// (N = 1 texts suggest no communication).
	Hint string

	Shards   []json.RawMessage // per agent, compact JSON as in input_shard
	Expected []json.RawMessage // per agent gold (per_agent_values)
	Deps     [][]int           // per agent: the shards its correct answer depends on

	// Params holds task parameters that appear only in the description, as
	// JSON: III-25's initial centroids ([[x, y], …]); nil for other tasks.
	Params json.RawMessage

	// Doc is the descriptive text of the task file.
	Doc Doc
	// Path is the file an instance was loaded from (file mode).
	Path string

	shards []any // typed Python values of Shards
	params any
}

// Doc is the text a task file carries besides data and answers. Generated
// instances get ours; loaded instances keep the file's.
type Doc struct {
	CaseName            string
	Paradigm            string
	LeetCodeURL         string
	LeetCodeDescription string
	OptimalTopology     string
	OptimalMessageCount string
	Complexity          string
	OutputType          string   // metadata.output_type ("distributed")
	SystemPrompts       []string // per agent: the placeholder system prompt (ignored by the engine)
	// UserPrompts are the files' per-agent user_prompt texts; nil for
	// generated instances, whose prompts are rendered from Template.
	UserPrompts           []string
	ExpectedType          string // expected_output.type ("distributed")
	VerificationLogic     string
	VerificationLogicHint string
	FormatDescription     string
	// EvaluationMetrics is the legacy evaluation_metrics object, compact JSON.
	EvaluationMetrics json.RawMessage
}

// Official returns the published instance of a task for n agents, n in
// OfficialCounts. The first call replays the whole published stream (all
// 180 instances) and caches it.
func Official(taskID string, n int) (*Instance, error) {
	t, err := Lookup(taskID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(officialCounts, n) {
		return nil, &opterr.Error{Option: "Agents", See: []string{"Mode"},
			Err: fmt.Errorf("official instances exist for N in %v, not %d; seeded ones for any N", officialCounts, n)}
	}
	officialOnce.Do(replayOfficial)
	if officialErr != nil {
		return nil, officialErr
	}
	return officialCache[officialKey(t.ID, n)].clone(), nil
}

var (
	officialOnce  sync.Once
	officialCache map[string]*Instance
	officialErr   error
)

func officialKey(id string, n int) string { return fmt.Sprintf("%s_n%d", id, n) }

// replayOfficial is the published main.py: one stream from random.seed(42),
// counts in order, tasks I-01 … III-30 for each count.
func replayOfficial() {
	r := pyrand.New(OfficialSeed)
	cache := map[string]*Instance{}
	for _, n := range officialCounts {
		for _, t := range registry {
			shards, params := t.gen(r, n)
			in, err := build(t, n, ModeOfficial, 0, shards, params)
			if err != nil {
				officialErr = fmt.Errorf("task: official %s n=%d: %w", t.ID, n, err)
				return
			}
			cache[officialKey(t.ID, n)] = in
		}
	}
	officialCache = cache
}

// Seeded returns a fresh instance of a task for n agents (n >= 1) from an
// independent stream: CPython's generator seeded with a value derived from
// (task, n, seed), driving the same generator as the official mode. The
// global input grows with n, so each agent's share stays the same.
func Seeded(taskID string, n int, seed uint64) (*Instance, error) {
	t, err := Lookup(taskID)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > t.MaxAgents() {
		// Agents names the team size as the suites' options do, so that
		// the CLI names its flag (--agents).
		return nil, opterr.New("Agents", "task %s: %d agents, want 1 … %d", t.ID, n, t.MaxAgents())
	}
	r := pyrand.New(SeededStreamSeed(t.ID, n, seed))
	shards, params := t.gen(r, n)
	in, err := build(t, n, ModeSeeded, seed, shards, params)
	if err != nil {
		return nil, fmt.Errorf("task: seeded %s n=%d seed=%d: %w", t.ID, n, seed, err)
	}
	return in, nil
}

// SeededStreamSeed is the random.seed value of a seeded instance: the first
// 8 bytes (big-endian) of SHA-256("silobench-task:{id}:n={n}:seed={seed}"),
// top bit cleared.
func SeededStreamSeed(taskID string, n int, seed uint64) int64 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("silobench-task:%s:n=%d:seed=%d", taskID, n, seed)))
	return int64(binary.BigEndian.Uint64(sum[:8]) &^ (1 << 63))
}

func build(t *Task, n int, mode string, seed uint64, shards []any, params any) (*Instance, error) {
	golds, err := t.solve(n, params, shards)
	if err != nil {
		return nil, err
	}
	in := &Instance{
		Task:     t,
		N:        n,
		Mode:     mode,
		Seed:     seed,
		Template: t.template(n, n == 1, params, shards),
		Shards:   rawAll(shards),
		Expected: rawAll(golds),
		Deps:     t.Deps(n),
		shards:   shards,
		params:   params,
	}
	if n > 1 {
		in.Hint = t.hintLine()
	}
	if params != nil {
		in.Params = pyvalue.Canon(params)
	}
	in.Doc = defaultDoc(t, n)
	return in, nil
}

// rawAll encodes each value; a global answer repeated N times (the same
// value) is encoded once and shared.
func rawAll(vs []any) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		if i > 0 && sameRef(v, vs[i-1]) {
			out[i] = out[i-1]
			continue
		}
		out[i] = pyvalue.Canon(v)
	}
	return out
}

func sameRef(a, b any) bool {
	switch x := a.(type) {
	case *pyvalue.List:
		y, ok := b.(*pyvalue.List)
		return ok && x == y
	case *pyvalue.Dict:
		y, ok := b.(*pyvalue.Dict)
		return ok && x == y
	}
	return false
}

func (in *Instance) clone() *Instance {
	cp := *in
	cp.Shards = slices.Clone(in.Shards)
	cp.Expected = slices.Clone(in.Expected)
	cp.Deps = make([][]int, len(in.Deps))
	for i, d := range in.Deps {
		cp.Deps[i] = slices.Clone(d)
	}
	cp.Doc.SystemPrompts = slices.Clone(in.Doc.SystemPrompts)
	cp.Doc.UserPrompts = slices.Clone(in.Doc.UserPrompts)
	return &cp
}

// typedShard returns the Python value of shard i (nil if it cannot be typed).
func (in *Instance) typedShard(i int) any {
	if in.shards != nil && len(in.shards) == in.N {
		return in.shards[i]
	}
	v, err := typeShard(in.Task, in.Shards[i], "")
	if err != nil {
		return nil
	}
	return v
}

func typeShard(t *Task, raw json.RawMessage, path string) (any, error) {
	v, err := pyvalue.ParseJSON(raw)
	if err != nil {
		return nil, &fieldErr{path: path, msg: err.Error()}
	}
	v, err = t.shard.conv(v)
	if err != nil {
		return nil, under(err, path)
	}
	return v, nil
}

// ShardText is agent i's shard as the prompt shows it: Python's str() of
// the shard (tuples in parentheses, single-quoted strings, int dict keys,
// string shards without quotes, full float repr).
func (in *Instance) ShardText(agent int) string {
	if agent < 0 || agent >= in.N {
		return ""
	}
	v := in.typedShard(agent)
	if v == nil {
		return ""
	}
	return pyvalue.Str(v)
}

// Prompt is the task text agent i sees: the template with the placeholders
// substituted (the published user_prompt). With topologyHint false, the
// topology suggestion line (Hint) is left out; nothing else changes. For a
// loaded file with the hint on, the file's own user_prompt is returned
// verbatim; if the file's hint wording is unknown (Hint empty), the hint
// cannot be removed and both settings give that text.
func (in *Instance) Prompt(agent int, topologyHint bool) string {
	if agent < 0 || agent >= in.N {
		return ""
	}
	if in.Doc.UserPrompts != nil && (topologyHint || in.Hint == "") {
		return in.Doc.UserPrompts[agent]
	}
	tmpl := in.Template
	if !topologyHint && in.Hint != "" {
		tmpl = strings.Replace(tmpl, in.Hint, "", 1)
	}
	return render(tmpl, agent, in.N, in.ShardText(agent))
}

// Solve is the team's perfect answer for this instance: SolveScaled over
// its shards, parameters and Scale.
func (in *Instance) Solve() ([]json.RawMessage, error) {
	return SolveScaled(in.Task, in.Shards, in.Params, in.Scale())
}

// Scale is the team size the instance's data were drawn for: MergedFrom for
// a merged baseline, N otherwise.
func (in *Instance) Scale() int {
	if in.MergedFrom > 0 {
		return in.MergedFrom
	}
	return in.N
}

// Verify recomputes the gold answers from the shards and reports the first
// agent whose stored gold differs (compared as canonical JSON). Use it on
// imported files: our answers must agree with the published ones.
func (in *Instance) Verify() error {
	got, err := in.Solve()
	if err != nil {
		return fmt.Errorf("%s n=%d: %w", in.Task.ID, in.N, err)
	}
	if len(got) != len(in.Expected) {
		return fmt.Errorf("%s n=%d: %d answers computed, %d stored", in.Task.ID, in.N, len(got), len(in.Expected))
	}
	var want json.RawMessage
	for i := range got {
		if i > 0 && bytes.Equal(in.Expected[i], in.Expected[i-1]) {
			if !bytes.Equal(got[i], want) {
				return fmt.Errorf("%s n=%d: agent %d: computed %s, stored %s", in.Task.ID, in.N, i, got[i], want)
			}
			continue
		}
		want, err = recanon(in.Expected[i])
		if err != nil {
			return fmt.Errorf("%s n=%d: agent %d: stored gold: %v", in.Task.ID, in.N, i, err)
		}
		if !bytes.Equal(got[i], want) {
			return fmt.Errorf("%s n=%d: agent %d: computed %s, stored %s", in.Task.ID, in.N, i, got[i], want)
		}
	}
	return nil
}

func recanon(raw json.RawMessage) (json.RawMessage, error) {
	v, err := pyvalue.ParseJSON(raw)
	if err != nil {
		return nil, err
	}
	return pyvalue.Canon(v), nil
}

// Solve computes, from all shards, the answer each agent must submit (what
// a perfect team submits): N copies of the global answer, or each agent's
// own segment for segmented tasks. params carries what only the
// description states (III-25's initial centroids, Instance.Params); pass
// nil for other tasks. Malformed shards give an error naming the field.
func Solve(t *Task, shards []json.RawMessage, params json.RawMessage) ([]json.RawMessage, error) {
	return solveAt(t, shards, params, len(shards))
}

// solveAt is Solve with the team size n the solver is told (SolveScaled).
func solveAt(t *Task, shards []json.RawMessage, params json.RawMessage, n int) ([]json.RawMessage, error) {
	if t == nil {
		return nil, fmt.Errorf("task: Solve: nil task")
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("task: %s: Solve needs at least one shard", t.ID)
	}
	typed := make([]any, len(shards))
	for i, raw := range shards {
		v, err := typeShard(t, raw, fmt.Sprintf("shards[%d]", i))
		if err != nil {
			return nil, fmt.Errorf("task: %s: %w", t.ID, err)
		}
		typed[i] = v
	}
	var p any
	if t.params != nil && len(params) > 0 {
		v, err := pyvalue.ParseJSON(params)
		if err != nil {
			return nil, fmt.Errorf("task: %s: field \"params\": %v", t.ID, err)
		}
		if p, err = t.params.conv(v); err != nil {
			return nil, fmt.Errorf("task: %s: %w", t.ID, under(err, "params"))
		}
	}
	golds, err := t.solve(n, p, typed)
	if err != nil {
		return nil, fmt.Errorf("task: %s: %w", t.ID, err)
	}
	return rawAll(golds), nil
}

func defaultDoc(t *Task, n int) Doc {
	d := Doc{
		CaseName:            t.Name,
		Paradigm:            t.Paradigm,
		LeetCodeURL:         t.LeetCodeURL,
		LeetCodeDescription: "A related classic single-machine problem; here the input is split across agents, none of which sees all of it.",
		OptimalTopology:     t.Topology,
		OptimalMessageCount: t.MessageCount,
		Complexity:          t.Complexity,
		OutputType:          "distributed",
		ExpectedType:        "distributed",
		VerificationLogic:   verificationLogic(t),
		FormatDescription:   formatDescription(t),
		EvaluationMetrics: pyvalue.Canon(&pyvalue.Dict{
			Keys: []any{"success_rate", "round_to_completion", "communication_redundancy_ratio", "topological_fidelity"},
			Vals: []any{
				"Fraction of agents whose submitted answer equals their expected output.",
				"Number of rounds until every agent has submitted.",
				"Messages sent relative to the suggested message count.",
				"How closely the observed communication graph follows the suggested topology.",
			},
		}),
	}
	if t.Segmented {
		d.VerificationLogicHint = "Agent i's output must equal per_agent_values[i], its own segment."
	} else {
		d.VerificationLogicHint = "Every agent's output must equal the single global answer."
	}
	d.SystemPrompts = make([]string, n)
	for i := range d.SystemPrompts {
		d.SystemPrompts[i] = fmt.Sprintf("This system prompt is a placeholder; the runtime replaces it with the protocol's system prompt.\nAgent ID: %d\nTotal agents: %d\nMax ID: %d", i, n, n-1)
	}
	return d
}

func verificationLogic(t *Task) string {
	switch {
	case t.Segmented:
		return "all(agent_outputs[i] == expected_output['per_agent_values'][i] for i in range(num_agents))"
	case t.Output == OutFloat:
		return "all(abs(agent_outputs[i] - expected_output['per_agent_values'][0]) < 0.01 for i in range(num_agents))"
	default:
		return "all(agent_outputs[i] == expected_output['per_agent_values'][0] for i in range(num_agents))"
	}
}

func formatDescription(t *Task) string {
	if t.Segmented {
		return "Every agent must call submit_result(answer); each submits its own portion of the result."
	}
	return "Every agent must call submit_result(answer); all submit the same answer."
}
