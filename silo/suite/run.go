package suite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
	"github.com/coordbench/coordbench/suiterun"
	"github.com/coordbench/coordbench/telemetry"
)

// Manifest records how a run directory was produced; a later suite run
// keeps the directory only if the manifest matches the case.
type Manifest struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Case    string `json:"case_id"`
	Task    string `json:"task"`
	// TaskRevision is the task's Revision (omitted when 0, so manifests
	// of tasks never changed read as before).
	TaskRevision int    `json:"task_revision,omitempty"`
	N            int    `json:"n"`
	Mode         string `json:"mode"`
	Seed         uint64 `json:"seed"`
	Protocol     string `json:"protocol"`
	Agent        string `json:"agent"`
	MaxRounds    int    `json:"max_rounds"`
	MaxCalls     int    `json:"max_calls_per_turn"`
	// MessageFormat is the protocol's message format (proto.MessageFormat;
	// manifests written before it existed lack it, so their runs, made
	// with the json format, are rerun).
	MessageFormat string `json:"message_format"`
	// MessageOrder is the order of one round's messages
	// (proto.MessageOrder; manifests written before it existed lack it,
	// so their runs, made in the fixed order, are rerun).
	MessageOrder string `json:"message_order"`
	ResultSHA256 string `json:"result_sha256"`
	// ResultFormat is resultFormat when the run was written; a run written
	// before result.json gained P_paper (no field, 0) runs again on resume
	// instead of being reported with P_paper = 0.
	ResultFormat int `json:"result_format,omitempty"`
	// MergedFrom is k for a merged baseline run (Case.MergedFrom).
	MergedFrom int `json:"merged_from,omitempty"`
	// LLM is set for LLM agents: the model and every setting that changes
	// its replies or the agents' behaviour.
	LLM *LLMManifest `json:"llm,omitempty"`
	// Team is set for a mixed team: each model's settings and the agents
	// it played.
	Team *TeamManifest `json:"team,omitempty"`
	// Scorer is the scorer version result.json's scores were computed
	// under (ScorerVersion); absent in runs from before it was recorded.
	// A resumed suite does not compare it: the suite's own (Config)
	// decides whether the suite may resume.
	Scorer string `json:"scorer,omitempty"`
}

// TeamManifest is a mixed team in a manifest (or, without agents, in the
// suite's configuration).
type TeamManifest struct {
	// Shares: the counts are shares (play.Team.Shares).
	Shares  bool             `json:"shares,omitempty"`
	Members []MemberManifest `json:"members"`
}

// MemberManifest is one model of a mixed team: its settings, its count
// (or share), and in a run's manifest the ids of the agents it played.
type MemberManifest struct {
	LLMManifest
	Count  int   `json:"count"`
	Agents []int `json:"agents,omitempty"`
}

// teamManifest is the manifest entry of team tm; with n > 0 the agents
// each model plays at team size n.
func teamManifest(tm *play.Team, n int) *TeamManifest {
	m := &TeamManifest{Shares: tm.Shares}
	var counts []int
	if n > 0 {
		counts, _ = tm.Counts(n) // Resolve checked it
	}
	next := 0
	for i, mem := range tm.Members {
		mm := MemberManifest{LLMManifest: *llmManifest(mem.LLM), Count: mem.Count}
		if i < len(counts) {
			for range counts[i] {
				mm.Agents = append(mm.Agents, next)
				next++
			}
		}
		m.Members = append(m.Members, mm)
	}
	return m
}

// LLMManifest is the LLM part of a run's manifest.
type LLMManifest struct {
	Name    string `json:"name,omitempty"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url"`
	// Temperature is what every request sent: null when none was sent
	// (the default; the server's own applied).
	Temperature *float64 `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
	Seed        *int64   `json:"seed,omitempty"`
	ToolFormat  string   `json:"tool_format"` // xml or native
	// ToolResults is how tool results were written for the model
	// (llmagent.ResultEncoding: published or compact).
	ToolResults   string            `json:"tool_results"`
	Scaffold      llmagent.Scaffold `json:"scaffold"`
	ContextBudget int64             `json:"context_budget"`
	ReplyReserve  int64             `json:"reply_reserve"`
}

// llmManifest is the manifest entry of the LLM agents l.
func llmManifest(l *play.LLMAgent) *LLMManifest {
	c := l.Config
	if c.ReplyReserve == 0 {
		c.ReplyReserve = llmagent.DefaultReplyReserve
	}
	return &LLMManifest{Name: l.Name, Model: l.Model, BaseURL: l.BaseURL, Temperature: l.Temperature, MaxTokens: l.MaxTokens,
		Seed: l.Seed, ToolFormat: l.ToolFormat(), ToolResults: string(c.ResultEncoding), Scaffold: c.Scaffold, ContextBudget: c.ContextBudget,
		ReplyReserve: c.ReplyReserve}
}

// resultFormat counts the changes of result.json's fields that a resumed
// suite must not mix with older runs (1: P_paper, partial_paper).
const resultFormat = 1

func manifestOf(c Case) Manifest {
	m := Manifest{Tool: "coordbench", Version: Version(), Case: c.ID, Task: c.Task.ID, TaskRevision: c.Task.Revision, N: c.N, Mode: c.Mode,
		Seed: c.Seed, Protocol: string(c.Protocol), Agent: c.Players.Label(), MaxRounds: c.Limits.MaxRounds,
		MaxCalls: c.Limits.MaxCallsPerTurn, MessageFormat: string(c.Limits.Format()), MessageOrder: string(c.Limits.Order()), ResultFormat: resultFormat, MergedFrom: c.MergedFrom, Scorer: ScorerVersion}
	if c.Players.Kind == play.AgentLLM && c.Players.LLM != nil {
		m.LLM = llmManifest(c.Players.LLM)
	}
	if c.Players.Kind == play.AgentTeam && c.Players.Team != nil {
		m.Team = teamManifest(c.Players.Team, c.N)
	}
	return m
}

// sameManifest compares two manifests field by field (LLM and Team by
// value).
func sameManifest(a, b Manifest) bool {
	la, lb, ta, tb := a.LLM, b.LLM, a.Team, b.Team
	a.LLM, b.LLM, a.Team, b.Team = nil, nil, nil, nil
	return a == b && sameJSON(la, lb) && sameJSON(ta, tb)
}

// sameJSON: two optional manifest parts, equal as JSON.
func sameJSON[T any](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return string(atomicfs.MarshalLine(a)) == string(atomicfs.MarshalLine(b))
}

// Config is FileConfig: what makes a suite directory's runs one suite. A
// suite of another configuration is refused in the same directory
// (suiterun.Options.Force replaces it): the cases (by id), and what the
// ids do not say: limits, message format and the LLM agents' settings.
type Config struct {
	Tool            string       `json:"tool"`
	Version         string       `json:"version"`
	MaxRounds       int          `json:"max_rounds"`
	MaxCallsPerTurn int          `json:"max_calls_per_turn"`
	MessageFormat   string       `json:"message_format"`
	MessageOrder    string       `json:"message_order"`
	Baseline        string       `json:"baseline"`
	LLM             *LLMManifest `json:"llm,omitempty"`
	// LLMs are the models' settings when there are several
	// (Options.LLMs); LLM is then unset.
	LLMs []*LLMManifest `json:"llms,omitempty"`
	// Teams are the mixed teams (Options.Teams).
	Teams []*TeamManifest `json:"teams,omitempty"`
	Cases []string        `json:"cases"`
	// Scorer is the scorer version of the suite's results and tables
	// (ScorerVersion); absent in suites from before it was recorded. A
	// suite recorded under another version is not resumed: `silo
	// rescore` brings it to this one first.
	Scorer string `json:"scorer,omitempty"`
}

func configOf(s *Suite) Config {
	o := s.Options
	c := Config{Tool: "coordbench", Version: Version(), MaxRounds: o.MaxRounds, MaxCallsPerTurn: o.MaxCallsPerTurn,
		MessageFormat: o.MessageFormat, MessageOrder: o.MessageOrder, Baseline: o.Baseline, Scorer: ScorerVersion}
	if o.NoBaseline {
		c.Baseline = "none"
	}
	if ms := o.llms(); len(ms) == 1 {
		c.LLM = llmManifest(ms[0])
	} else {
		for _, l := range ms {
			c.LLMs = append(c.LLMs, llmManifest(l))
		}
	}
	for _, tm := range o.Teams {
		c.Teams = append(c.Teams, teamManifest(tm, 0))
	}
	for _, cs := range s.Cases {
		c.Cases = append(c.Cases, cs.ID)
	}
	return c
}

// RunOptions tune how a suite runs; none changes its results.
type RunOptions = suiterun.Options

// Progress is the state of a running suite.
type Progress = suiterun.Progress

// CaseResult is one finished (or failed) case.
type CaseResult struct {
	Case    Case
	Result  *round.Result // nil when Err is set
	Err     string
	Skipped bool // finished by an earlier run
}

// Report is what Run did.
type Report struct {
	Dir         string
	Suite       *Suite
	Cases       []CaseResult // the finished cases, in suite order
	Failures    []CaseResult // cases whose run failed (rerun next time)
	Ran, Skip   int
	Interrupted bool // cancelled before every case had run
	Aggregate   []Aggregate
	// ModelAggregate is the per-model aggregate of the mixed teams' runs
	// (nil without them).
	ModelAggregate []ModelAggregate
}

// Complete reports whether every case has finished.
func (r *Report) Complete() bool { return len(r.Cases) == len(r.Suite.Cases) }

// Run runs the cases of s into dir that are not there already, with
// package suiterun: each case goes to dir/runs/<id>/ (result.json, run.db,
// calls.jsonl, manifest.json, and the turn log of LLM agents), a failed
// one with its partial files and error.txt to dir/failed/<id>/, and runs
// again next time. A case whose directory holds a manifest matching the
// case (tool version, task and its revision, N, mode, seed, protocol, agent, limits, model
// settings) and an intact result.json is not rerun. When ctx is cancelled
// no new case starts; cases in flight finish. The summary and aggregates
// always describe the finished cases.
func Run(ctx context.Context, s *Suite, dir string, opt RunOptions) (*Report, error) {
	ids := make([]string, len(s.Cases))
	for i, c := range s.Cases {
		ids[i] = c.ID
	}
	var rep *Report
	plan := suiterun.Plan[*round.Result]{
		IDs:    ids,
		Config: configOf(s),
		Finished: func(i int, dir string) (*round.Result, bool) {
			r, ok := finishedCase(s.Cases[i], dir)
			return r.Result, ok
		},
		Run: func(ctx context.Context, i int, dir string) (*round.Result, error) {
			return runCase(ctx, s.Cases[i], dir)
		},
		Begin: func() error {
			if opt.Force {
				return nil
			}
			return SameScorer(dir)
		},
		End: func(r *suiterun.Report[*round.Result]) error {
			rep = report(s, dir, r)
			return writeFiles(dir, rep)
		},
	}
	// rep is set by End, which suiterun.Run calls whenever it returns a report.
	_, err := suiterun.Run(ctx, suiterun.Layout{Dir: dir, CasesDir: RunsDir, ConfigFile: FileConfig}, plan, opt)
	return rep, err
}

// SameScorer refuses a suite directory whose configuration records
// another scorer version than this build's, or none
// (suiterun.SameScorer).
func SameScorer(dir string) error {
	return suiterun.SameScorer(dir, FileConfig, ScorerVersion, "coordbench silo rescore")
}

// NewReport is the report of a suite's finished cases (in suite order)
// and the number of its failed ones, with the aggregates under rules:
// what its summary and aggregate files are written from (Files).
func NewReport(s *Suite, dir string, cases []CaseResult, failures int, rules Rules) *Report {
	rep := &Report{Dir: dir, Suite: s, Cases: cases, Failures: make([]CaseResult, failures)}
	rep.Aggregate = AggregatesUnder(rep.Cases, s.Options.Baseline, rules)
	rep.ModelAggregate = ModelAggregates(rep.Cases)
	return rep
}

// report turns the runner's outcomes into summary rows and aggregates.
func report(s *Suite, dir string, r *suiterun.Report[*round.Result]) *Report {
	rep := &Report{Dir: dir, Suite: s, Ran: r.Ran, Skip: r.Skipped, Interrupted: r.Interrupted}
	for _, o := range r.Outcomes {
		cr := CaseResult{Case: s.Cases[o.Index], Result: o.Result, Err: o.Err, Skipped: o.Skipped}
		if o.Failed() {
			cr.Result = nil
			rep.Failures = append(rep.Failures, cr)
		} else {
			rep.Cases = append(rep.Cases, cr)
		}
	}
	rep.Aggregate = Aggregates(rep.Cases, s.Options.Baseline)
	rep.ModelAggregate = ModelAggregates(rep.Cases)
	return rep
}

// runCase runs one case into dir and writes its manifest.
func runCase(ctx context.Context, c Case, dir string) (*round.Result, error) {
	in, err := InstanceOf(c)
	if err != nil {
		return nil, err
	}
	players := abortOnModelError(c.Players)
	ctx = telemetry.WithAttrs(ctx, telemetry.String(telemetry.KeyCaseID, c.ID)) // for the run's span
	res, b, err := play.Run(ctx, in, c.Protocol, players, c.Limits, dir)
	if err != nil {
		return nil, err
	}
	man := manifestOf(c)
	man.ResultSHA256 = sha(b)
	if err := os.WriteFile(filepath.Join(dir, FileManifest), atomicfs.MarshalLine(man), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// abortOnModelError is p whose LLM agents end the run at a failed model
// call (llmagent.Config.AbortOnModelError): a model failure fails the
// case, which reruns next time.
func abortOnModelError(p play.Players) play.Players {
	if p.LLM != nil {
		l := *p.LLM
		l.Config.AbortOnModelError = true
		p.LLM = &l
	}
	if p.Team != nil {
		tm := *p.Team
		tm.Members = slices.Clone(tm.Members)
		for i, m := range tm.Members {
			l := *m.LLM
			l.Config.AbortOnModelError = true
			tm.Members[i].LLM = &l
		}
		p.Team = &tm
	}
	return p
}

// InstanceOf builds the instance of case c: official or seeded, and for a
// merged baseline the merged data of the N = MergedFrom instance.
func InstanceOf(c Case) (*task.Instance, error) {
	n := c.N
	if c.MergedFrom > 0 {
		n = c.MergedFrom
	}
	var in *task.Instance
	var err error
	if c.Mode == task.ModeOfficial {
		in, err = task.Official(c.Task.ID, n)
	} else {
		in, err = task.Seeded(c.Task.ID, n, c.Seed)
	}
	if err != nil || c.MergedFrom == 0 {
		return in, err
	}
	return task.Merged(in)
}

// CaseFinished reports whether dir holds case c as this tool writes it,
// as a suite run that resumes counts it (and the summary lists it): its
// manifest records c, its files are there and its result is the one the
// manifest hashes.
func CaseFinished(c Case, dir string) bool {
	_, ok := finishedCase(c, dir)
	return ok
}

// finishedCase reports whether dir holds case c as this tool writes it.
func finishedCase(c Case, dir string) (CaseResult, bool) {
	var man Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, FileManifest), &man); err != nil {
		return CaseResult{}, false
	}
	want := manifestOf(c)
	want.ResultSHA256, want.Scorer = man.ResultSHA256, man.Scorer
	if !sameManifest(man, want) {
		return CaseResult{}, false
	}
	for _, f := range []string{play.FileDB, play.FileCalls} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return CaseResult{}, false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, play.FileResult))
	if err != nil || sha(b) != man.ResultSHA256 {
		return CaseResult{}, false
	}
	var res round.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return CaseResult{}, false
	}
	return CaseResult{Case: c, Result: &res, Skipped: true}, true
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
