// Package suite runs SILO-BENCH suites: every case (task × N × protocol ×
// agent × seed) on a pool of workers, each into its own run directory
// written atomically, resumable, with a per-run summary and aggregate
// tables (S, P, D by level × N × protocol, and RCC against the N = 1
// baseline). Resume, the worker pool, interruptions and failed cases are
// package suiterun's, shared with the scheduling benchmark's suites; one
// run is package play's (the same code as coordbench silo run); this
// package says what a case is, how it runs and how a finished one is
// recognised (its manifest).
package suite

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/seeds"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
	"github.com/coordbench/coordbench/suiterun"
)

// Files and directories of a suite directory.
const (
	RunsDir         = suiterun.SiloCasesDir
	FileManifest    = "manifest.json"
	FileSummary     = suiterun.SiloSummaryFile
	FileAggregate   = "aggregate.csv"
	FileAggregateMD = "aggregate.md"
	// FailedDir holds failed runs with their partial files and error.txt
	// (suiterun.ErrorFile); they run again on the next invocation.
	FailedDir = suiterun.FailedDir
	// FileConfig records the suite's configuration (Config).
	FileConfig = suiterun.SiloConfigFile
)

// LLMWorkers is the default number of runs at once with LLM agents: their
// runs wait on the model, not on the CPU.
const LLMWorkers = 8

// protocols are the protocols, in their canonical order.
var protocols = []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS}

// Options describe a suite. The list fields are spec strings that Resolve
// parses and checks; an empty field takes its default. A bad value is
// reported as an *opterr.Error naming the field ("Agents", "Seeds", ...).
type Options struct {
	Levels    string // comma list of I, II, III (or 1, 2, 3); "all"
	Tasks     string // comma list of task ids; replaces Levels when set
	Agents    string // comma list of N
	Protocols string // comma list of p2p, broadcast, sfs; "all"
	Agent     string // comma list of agent kinds (reference, tree, chain)
	Mode      string // seeded (default) or official
	Seeds     string // seeded runs (official mode: its N = 1 baseline): comma list of seeds or ranges a-b (default "1")
	MaxRounds int    // round cap (default round.DefaultMaxRounds)
	// MaxCallsPerTurn, if positive, caps the tool calls of one turn; 0
	// (round.DefaultMaxCallsPerTurn) means no cap, as published.
	MaxCallsPerTurn int
	// MessageFormat is how message contents and sfs paths reach other
	// agents: "str" (the published str() conversion, the default) or
	// "json" (proto.MessageFormat).
	MessageFormat string
	// MessageOrder is the order of one round's messages: "random" (the
	// published order, seeded per run and round; the default) or "fixed"
	// (sender id, send sequence) (proto.MessageOrder).
	MessageOrder string
	// Baseline is the N = 1 baseline RCC compares with: BaselineMerged
	// (default; for each N = k > 1 of Agents, one agent holding the merged
	// data of that N = k instance, same mode and seeds) or BaselineSeeded
	// (fresh seeded N = 1 instances, one shard's worth of data, added when
	// Agents lacks 1; in official mode too, which has no N = 1 instances).
	Baseline string
	// NoBaseline: add no baseline runs.
	NoBaseline bool
	// LLM configures agent kind "llm" (required when Agent lists it).
	LLM *play.LLMAgent
	// LLMs, if set, replace LLM: agent kind "llm" runs once per entry, in
	// order (an experiment's models). Their labels must differ.
	LLMs []*play.LLMAgent
	// Teams are the mixed teams of agent kind "team" (play.AgentTeam), run
	// once each, in order. A team of exact counts plays only at its size,
	// which must then be every N > 1 of Agents; a team of shares plays at
	// every N > 1. Teams never play at N = 1 (one agent is no mix) and get
	// no baseline runs of their own: their aggregate rows have no RCC.
	Teams []*play.Team
}

// Baselines of RCC (Options.Baseline).
const (
	BaselineMerged = "merged"
	BaselineSeeded = "seeded"
)

// Case is one run of a suite.
type Case struct {
	ID       string
	Task     *task.Task
	N        int
	Protocol proto.Protocol
	Agent    string // the agent label (play.Players.Label): reference, tree, chain, llm-<model>[+…], llm-mix-…
	Players  play.Players
	Mode     string
	Seed     uint64 // 0 in official mode
	Limits   play.Limits
	// MergedFrom is k for a merged baseline run (N = 1 on the merged data
	// of the N = k instance of this mode and seed; task.Merged), else 0.
	MergedFrom int
}

// Suite is a resolved suite: its cases in a fixed order.
type Suite struct {
	Options Options
	Cases   []Case
}

// HasTeams reports whether the suite plays mixed teams (and so writes
// FileSummaryModels and FileAggregateModels).
func (s *Suite) HasTeams() bool {
	for _, c := range s.Cases {
		if c.Players.Kind == play.AgentTeam {
			return true
		}
	}
	return false
}

// Version is the tool version recorded in manifests.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// LevelName is the roman numeral of a task level.
func LevelName(l int) string {
	switch l {
	case 1:
		return "I"
	case 2:
		return "II"
	case 3:
		return "III"
	}
	return strconv.Itoa(l)
}

// CaseID is <task>__n<N>__<protocol>__<agent>__<seeded-s<seed>|official>,
// with -merged-n<k> appended for the merged baseline of the N = k instance
// (mergedFrom k > 0; then n is 1).
func CaseID(taskID string, n int, p proto.Protocol, agent, mode string, seed uint64, mergedFrom int) string {
	m := mode
	if mode == task.ModeSeeded {
		m = fmt.Sprintf("seeded-s%d", seed)
	}
	if mergedFrom > 0 {
		m += fmt.Sprintf("-merged-n%d", mergedFrom)
	}
	return fmt.Sprintf("%s__n%d__%s__%s__%s", taskID, n, p, agent, m)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Resolve checks the options and builds the suite's cases. Every problem
// (unknown level, task, protocol or agent, an N the mode does not allow)
// is reported here, before anything runs.
func Resolve(opt Options) (*Suite, error) {
	if opt.Mode == "" {
		opt.Mode = task.ModeSeeded
	}
	if opt.Mode != task.ModeSeeded && opt.Mode != task.ModeOfficial {
		return nil, opterr.New("Mode", "want seeded or official (got %q)", opt.Mode)
	}
	if opt.Agent == "" {
		opt.Agent = "reference"
	}
	if opt.Baseline == "" {
		opt.Baseline = BaselineMerged
	}
	if opt.Baseline != BaselineMerged && opt.Baseline != BaselineSeeded {
		return nil, opterr.New("Baseline", "want merged or seeded (got %q)", opt.Baseline)
	}
	if opt.Seeds == "" {
		opt.Seeds = "1"
	}
	if opt.MaxRounds <= 0 {
		opt.MaxRounds = round.DefaultMaxRounds
	}
	if opt.MaxCallsPerTurn < 0 {
		return nil, opterr.New("MaxCallsPerTurn", "want 0 (no cap) or a positive cap (got %d)", opt.MaxCallsPerTurn)
	}
	format, err := proto.ParseMessageFormat(opt.MessageFormat)
	if err != nil {
		return nil, opterr.New("MessageFormat", "%v", err)
	}
	opt.MessageFormat = string(format)
	order, err := proto.ParseMessageOrder(opt.MessageOrder)
	if err != nil {
		return nil, opterr.New("MessageOrder", "%v", err)
	}
	opt.MessageOrder = string(order)
	tasks, err := resolveTasks(opt.Levels, opt.Tasks)
	if err != nil {
		return nil, err
	}
	ns, err := resolveAgents(opt.Agents)
	if err != nil {
		return nil, err
	}
	if opt.Mode == task.ModeOfficial {
		for _, n := range ns {
			if !slices.Contains(task.OfficialCounts(), n) {
				return nil, &opterr.Error{Option: "Agents", See: []string{"Mode"},
					Err: fmt.Errorf("official instances exist for N in %v, not %d; seeded ones for any N", task.OfficialCounts(), n)}
			}
		}
	}
	// The seeded RCC baseline: N = 1 runs on seeded instances (official
	// mode has none of its own). The merged baseline is added per N below.
	baseline := opt.Baseline == BaselineSeeded && !opt.NoBaseline && !slices.Contains(ns, 1)
	if baseline {
		ns = append([]int{1}, ns...)
	}
	merged := opt.Baseline == BaselineMerged && !opt.NoBaseline
	protos, err := resolveProtocols(opt.Protocols)
	if err != nil {
		return nil, err
	}
	var agents []string
	for _, a := range split(opt.Agent) {
		if kinds := round.TeamNames(); !slices.Contains(kinds, a) && a != play.AgentLLM && a != play.AgentTeam { // the scripted agent kinds
			return nil, opterr.New("Agent", "want %s, %s or %s (got %q)", strings.Join(kinds, ", "), play.AgentLLM, play.AgentTeam, a)
		}
		if a == play.AgentLLM {
			models := opt.llms()
			if len(models) == 0 {
				return nil, &opterr.Error{Option: "Agent", Err: play.ErrNoModel, See: []string{"LLM"}}
			}
			labels := map[string]bool{}
			for _, l := range models {
				if l == nil || l.Config.Model == nil {
					return nil, &opterr.Error{Option: "Agent", Err: play.ErrNoModel, See: []string{"LLM"}}
				}
				if labels[l.Label()] {
					return nil, opterr.New("LLM", "two models share the agent label %q: give them different names", l.Label())
				}
				labels[l.Label()] = true
			}
		}
		if !slices.Contains(agents, a) {
			agents = append(agents, a)
		}
	}
	if len(agents) == 0 {
		return nil, opterr.New("Agent", "empty")
	}
	if err := checkTeams(opt.Teams, slices.Contains(agents, play.AgentTeam), ns); err != nil {
		return nil, err
	}
	seeds, err := resolveSeeds(opt.Seeds)
	if err != nil {
		return nil, err
	}
	// modeOf gives the instance mode and seeds of the runs with n agents.
	modeOf := func(n int) (string, []uint64) {
		if opt.Mode == task.ModeOfficial && !(baseline && n == 1) {
			return task.ModeOfficial, []uint64{0}
		}
		return task.ModeSeeded, seeds
	}
	for _, t := range tasks {
		for _, n := range ns {
			if m, _ := modeOf(n); m == task.ModeSeeded && n > t.MaxAgents() {
				return nil, opterr.New("Agents", "task %s takes at most %d agents (got %d)", t.ID, t.MaxAgents(), n)
			}
		}
	}
	s := &Suite{Options: opt}
	add := func(t *task.Task, n, mergedFrom int) {
		size := n
		if mergedFrom > 0 {
			size = mergedFrom // the instance the merged data come from
		}
		mode, nSeeds := modeOf(size)
		for _, p := range protos {
			for _, a := range agents {
				players := []play.Players{{Kind: a}}
				switch a {
				case play.AgentLLM:
					players = nil
					for _, l := range opt.llms() {
						players = append(players, play.Players{Kind: a, LLM: l})
					}
				case play.AgentTeam:
					players = nil
					if n > 1 { // no mix of one agent: no N = 1 runs, no baselines
						for _, tm := range opt.Teams {
							players = append(players, play.Players{Kind: a, Team: tm})
						}
					}
				}
				for _, pl := range players {
					for _, seed := range nSeeds {
						s.Cases = append(s.Cases, Case{
							ID: CaseID(t.ID, n, p, pl.Label(), mode, seed, mergedFrom), Task: t, N: n, Protocol: p,
							Agent: pl.Label(), Players: pl, Mode: mode, Seed: seed,
							Limits:     play.Limits{MaxRounds: opt.MaxRounds, MaxCallsPerTurn: opt.MaxCallsPerTurn, MessageFormat: format, MessageOrder: order},
							MergedFrom: mergedFrom,
						})
					}
				}
			}
		}
	}
	for _, t := range tasks {
		for _, n := range ns {
			if merged && n > 1 { // the baseline of N = n comes right before it
				add(t, 1, n)
			}
			add(t, n, 0)
		}
	}
	return s, nil
}

// checkTeams checks the mixed teams: given exactly when agent kind team
// is (want), each a good team (play.Team.Check) playable at every N > 1
// of ns, no two with one label. Errors are of option Teams and, when
// there are several teams, name the team (from 1).
func checkTeams(teams []*play.Team, want bool, ns []int) error {
	switch {
	case want && len(teams) == 0:
		return &opterr.Error{Option: "Agent", Err: fmt.Errorf("agent kind %s needs a mixed team", play.AgentTeam), See: []string{"Teams"}}
	case !want && len(teams) > 0:
		return &opterr.Error{Option: "Teams", Err: fmt.Errorf("mixed teams given, but the agent kinds lack %s", play.AgentTeam), See: []string{"Agent"}}
	}
	fail := func(k int, err error, see ...string) error {
		oe := &opterr.Error{Option: "Teams", Err: err}
		if errors.As(err, &oe) {
			oe = &opterr.Error{Option: oe.Option, Err: oe.Err, See: oe.See}
		}
		if len(teams) > 1 {
			oe.Err = fmt.Errorf("team %d: %w", k+1, oe.Err)
		}
		oe.See = append(oe.See, see...)
		return oe
	}
	labels := map[string]bool{}
	for k, tm := range teams {
		if err := tm.Check(); err != nil {
			return fail(k, err)
		}
		if labels[tm.Label()] {
			return fail(k, fmt.Errorf("another team has the same agents (label %s)", tm.Label()))
		}
		labels[tm.Label()] = true
		played := false
		for _, n := range ns {
			if n == 1 {
				continue
			}
			played = true
			if _, err := tm.Counts(n); err != nil {
				return fail(k, err, "Agents")
			}
		}
		if !played {
			return fail(k, errors.New("it plays at no N: a mixed team needs N > 1"), "Agents")
		}
	}
	return nil
}

// llms are the models of agent kind "llm": LLMs, else LLM.
func (o Options) llms() []*play.LLMAgent {
	if len(o.LLMs) > 0 {
		return o.LLMs
	}
	if o.LLM != nil {
		return []*play.LLMAgent{o.LLM}
	}
	return nil
}

func resolveTasks(levels, ids string) ([]*task.Task, error) {
	all := task.All()
	if strings.TrimSpace(ids) != "" {
		var out []*task.Task
		for _, id := range split(ids) {
			t, err := task.Lookup(id)
			if err != nil {
				return nil, opterr.Wrap("Tasks", err)
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		// Keep the canonical task order whatever the list order.
		sort.SliceStable(out, func(i, j int) bool { return slices.Index(all, out[i]) < slices.Index(all, out[j]) })
		return out, nil
	}
	want := map[int]bool{}
	if l := strings.TrimSpace(levels); l == "" || strings.EqualFold(l, "all") {
		want = map[int]bool{1: true, 2: true, 3: true}
	} else {
		for _, f := range split(levels) {
			switch strings.ToUpper(f) {
			case "I", "1":
				want[1] = true
			case "II", "2":
				want[2] = true
			case "III", "3":
				want[3] = true
			default:
				return nil, opterr.New("Levels", "unknown level %q (want I, II, III)", f)
			}
		}
	}
	var out []*task.Task
	for _, t := range all {
		if want[t.Level] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, opterr.New("Levels", "no tasks")
	}
	return out, nil
}

func resolveAgents(spec string) ([]int, error) {
	var ns []int
	for _, f := range split(spec) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, opterr.New("Agents", "want positive integers (got %q)", f)
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		return nil, opterr.New("Agents", "empty")
	}
	slices.Sort(ns)
	return ns, nil
}

func resolveProtocols(spec string) ([]proto.Protocol, error) {
	if s := strings.TrimSpace(spec); s == "" || strings.EqualFold(s, "all") {
		return slices.Clone(protocols), nil
	}
	want := map[proto.Protocol]bool{}
	for _, f := range split(spec) {
		p := proto.Protocol(strings.ToLower(f))
		if !slices.Contains(protocols, p) {
			return nil, opterr.New("Protocols", "unknown protocol %q (want p2p, broadcast, sfs)", f)
		}
		want[p] = true
	}
	var out []proto.Protocol
	for _, p := range protocols {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func resolveSeeds(spec string) ([]uint64, error) {
	out, err := seeds.ParseList(spec, nil)
	if err != nil {
		return nil, opterr.New("Seeds", "%w (a list of seeds and ranges, e.g. 1,2,5 or 1-10)", err)
	}
	slices.Sort(out)
	return out, nil
}
