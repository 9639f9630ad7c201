package suite

// The aggregate table: runs grouped by agent × level × N × protocol, with
// RCC against the suite's N = 1 baseline (docs/cli.md, "RCC").

import (
	"slices"

	"github.com/coordbench/coordbench/silo/round"
)

// Aggregate is one row of the aggregate table: the runs of one agent,
// level, N and protocol (and, for merged baseline runs, the N = k their
// data come from).
type Aggregate struct {
	Agent    string
	Level    int
	N        int
	Protocol string
	// MergedFrom is k for the merged baseline runs of N = k (N is then 1).
	MergedFrom int
	Runs       int
	S          float64 // mean S over the runs
	Success    float64 // fraction of runs with S = 1
	P          float64 // mean P (ours)
	// PPaper is the mean P_paper (the published rule); PPaperCrashed
	// counts the runs in which that rule crashed for some agent.
	PPaper        float64
	PPaperCrashed int
	D             float64 // mean D (the published code's count)
	// DReads is the mean D_reads (the paper's sfs density, reads by
	// others), over the runs that have one (HasDReads: sfs).
	DReads     float64
	HasDReads  bool
	dReadsRuns int
	// RCC = 1 − S(N)/S(baseline) with S the mean fraction of correct agents
	// (the paper's and the published code's S), and RCCSuccess the same
	// with the success rate (fraction of runs with S = 1), against the
	// baseline row of the same agent, level and protocol (RCCBaseline:
	// "merged", the merged runs of this N; "seeded", the N = 1 row). Has*
	// is false without a baseline row or when its S (success rate) is 0;
	// RCCBaseline is set whenever the baseline row exists.
	RCC, RCCSuccess       float64
	HasRCC, HasRCCSuccess bool
	RCCBaseline           string
	// C and CCode are the mean token cost (paper and code form) over the
	// runs, for agents that call a model (HasC).
	C, CCode float64
	HasC     bool
}

// aggKey identifies an aggregate row.
type aggKey struct {
	agent          string
	level, n, from int
	protocol       string
}

// Aggregates groups finished runs by agent × level × N × protocol, in
// that order (agents and protocols in first-seen suite order; merged
// baseline rows right before the N they belong to), and computes RCC
// against the given baseline (BaselineMerged or BaselineSeeded).
func Aggregates(cases []CaseResult, baseline string) []Aggregate {
	return AggregatesUnder(cases, baseline, CurrentScorer().Rules)
}

// AggregatesUnder is Aggregates with RCC under rules.
func AggregatesUnder(cases []CaseResult, baseline string, rules Rules) []Aggregate {
	idx := map[aggKey]int{}
	var out []Aggregate
	var agents, protos []string
	for i := range cases {
		c, res := &cases[i].Case, cases[i].Result
		if !slices.Contains(agents, c.Agent) {
			agents = append(agents, c.Agent)
		}
		if !slices.Contains(protos, string(c.Protocol)) {
			protos = append(protos, string(c.Protocol))
		}
		k := aggKey{c.Agent, c.Task.Level, c.N, c.MergedFrom, string(c.Protocol)}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, Aggregate{Agent: c.Agent, Level: c.Task.Level, N: c.N, MergedFrom: c.MergedFrom, Protocol: string(c.Protocol)})
		}
		out[j].add(res)
	}
	for i := range out {
		out[i].mean()
	}
	for i := range out {
		a := &out[i]
		if j, ok := idx[baselineKey(a, baseline)]; ok {
			a.rcc(&out[j], baseline, rules)
		}
	}
	slices.SortStableFunc(out, func(a, b Aggregate) int {
		if c := slices.Index(agents, a.Agent) - slices.Index(agents, b.Agent); c != 0 {
			return c
		}
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		if a.sizeOrder() != b.sizeOrder() {
			return a.sizeOrder() - b.sizeOrder()
		}
		if a.N != b.N { // a merged baseline before the runs of its N
			return a.N - b.N
		}
		return slices.Index(protos, a.Protocol) - slices.Index(protos, b.Protocol)
	})
	return out
}

// sizeOrder sorts rows by the team size of their data.
func (a *Aggregate) sizeOrder() int {
	if a.MergedFrom > 0 {
		return a.MergedFrom
	}
	return a.N
}

// baselineKey is the key of a's baseline row: the merged runs of a's N, or
// the N = 1 row (seeded). Merged baseline rows have none (the key is
// never present).
func baselineKey(a *Aggregate, baseline string) aggKey {
	if a.MergedFrom > 0 {
		return aggKey{}
	}
	if baseline == BaselineMerged {
		return aggKey{a.Agent, a.Level, 1, a.N, a.Protocol}
	}
	return aggKey{a.Agent, a.Level, 1, 0, a.Protocol}
}

func (a *Aggregate) add(res *round.Result) {
	a.Runs++
	a.S += res.S
	a.P += res.P
	a.PPaper += res.PPaper
	if res.PPaperCrashes > 0 {
		a.PPaperCrashed++
	}
	a.D += res.D
	if res.DReads != nil {
		a.DReads += *res.DReads
		a.dReadsRuns++
	}
	if res.Success {
		a.Success++
	}
	if res.C != nil && res.CCode != nil {
		a.C += *res.C
		a.CCode += *res.CCode
		a.HasC = true
	}
}

func (a *Aggregate) mean() {
	n := float64(a.Runs)
	a.S, a.P, a.PPaper, a.D, a.Success = a.S/n, a.P/n, a.PPaper/n, a.D/n, a.Success/n
	a.C, a.CCode = a.C/n, a.CCode/n
	if a.dReadsRuns > 0 {
		a.DReads, a.HasDReads = a.DReads/float64(a.dReadsRuns), true
	}
}

func (a *Aggregate) rcc(base *Aggregate, baseline string, rules Rules) {
	a.RCCBaseline = baseline
	if base.S != 0 {
		a.RCC, a.HasRCC = rules.cost(a.S, base.S), true
	}
	if base.Success != 0 {
		a.RCCSuccess, a.HasRCCSuccess = rules.cost(a.Success, base.Success), true
	}
}
