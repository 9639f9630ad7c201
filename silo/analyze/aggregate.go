package analyze

import (
	"cmp"
	"slices"
)

// AllLevels and AllProtocols stand for "every level" and "every protocol"
// in a group key.
const (
	AllLevels    = 1 << 20
	AllProtocols = "all"
)

// TopologyRow is the topology of the runs of one agent × level × N ×
// protocol: means over its runs (rates are fractions of them). Merged
// baselines of N = k are a row of their own (N = 1, MergedFrom k), apart
// from seeded N = 1 runs and from the baselines of other sizes.
type TopologyRow struct {
	Agent      string
	Level      int
	N          int
	MergedFrom int
	Protocol   string
	Runs       int
	Success    float64 // success rate
	Rounds     float64 // mean rounds run
	// RoundsSuccess and RoundsFailed are the mean rounds of the successful
	// and of the failed runs (Has… false when there are none).
	RoundsSuccess, RoundsFailed       float64
	HasRoundsSuccess, HasRoundsFailed bool
	EdgeDensity                       float64
	MeanOut                           float64
	MaxOut, MaxIn                     float64
	Gini                              float64
	HubShare                          float64
	HubReached                        float64 // mean peers the hub reached
	HubReachedFrac                    float64 // mean HubReached / (N-1); 0 when N = 1
	// HubReachedAtSubmitFrac is the mean Topology.HubReachedAtSubmit /
	// (N-1); 0 when N = 1.
	HubReachedAtSubmitFrac float64
	Hub0                   float64 // fraction of runs whose hub is agent 0
	Leader                 float64 // leader-emergence rate (HasLeader: N >= 3)
	HasLeader              bool
}

// LeaderRow relates leader emergence to success for the runs with N >= 3
// of one agent × level × protocol (AllProtocols: every protocol).
type LeaderRow struct {
	Agent    string
	Level    int
	Protocol string
	Runs     int
	Leaders  int // runs in which a leader emerged
	// SuccessWith and SuccessWithout are the success rates of the runs
	// with and without a leader (Has… false when there are none).
	SuccessWith, SuccessWithout       float64
	HasSuccessWith, HasSuccessWithout bool
}

// protoRank orders protocols canonically, unknown ones after them and
// AllProtocols last.
func protoRank(p string) int {
	switch p {
	case "p2p":
		return 0
	case "broadcast":
		return 1
	case "sfs":
		return 2
	case AllProtocols:
		return 4
	}
	return 3
}

func cmpProto(a, b string) int {
	return cmp.Or(cmp.Compare(protoRank(a), protoRank(b)), cmp.Compare(a, b))
}

// topologyRows groups runs by agent × level × N × protocol.
func topologyRows(runs []Run) []TopologyRow {
	type key struct {
		agent            string
		level, n, merged int
		protocol         string
	}
	groups := map[key][]*Run{}
	for i := range runs {
		r := &runs[i]
		k := key{r.Agent, r.Level, r.N, r.MergedFrom, r.Protocol}
		groups[k] = append(groups[k], r)
	}
	var out []TopologyRow
	for k, rs := range groups {
		row := TopologyRow{Agent: k.agent, Level: k.level, N: k.n, MergedFrom: k.merged, Protocol: k.protocol, Runs: len(rs),
			HasLeader: k.n >= 3}
		var succ, fail, succRounds, failRounds, leaders, hub0 int
		for _, r := range rs { // rs is in run order: sums are deterministic
			t := &r.Topology
			if r.Success {
				succ++
				succRounds += r.Rounds
			} else {
				fail++
				failRounds += r.Rounds
			}
			row.Rounds += float64(r.Rounds)
			row.EdgeDensity += t.EdgeDensity
			row.MeanOut += t.MeanOut
			row.MaxOut += float64(t.MaxOut)
			row.MaxIn += float64(t.MaxIn)
			row.Gini += t.Gini
			row.HubShare += t.HubShare
			row.HubReached += float64(t.HubReached)
			if r.N > 1 {
				row.HubReachedFrac += float64(t.HubReached) / float64(r.N-1)
				row.HubReachedAtSubmitFrac += float64(t.HubReachedAtSubmit) / float64(r.N-1)
			}
			if t.Hub == 0 {
				hub0++
			}
			if t.Leader {
				leaders++
			}
		}
		n := float64(len(rs))
		row.Success = float64(succ) / n
		row.Rounds /= n
		row.EdgeDensity /= n
		row.MeanOut /= n
		row.MaxOut /= n
		row.MaxIn /= n
		row.Gini /= n
		row.HubShare /= n
		row.HubReached /= n
		row.HubReachedFrac /= n
		row.HubReachedAtSubmitFrac /= n
		row.Hub0 = float64(hub0) / n
		row.Leader = float64(leaders) / n
		if succ > 0 {
			row.RoundsSuccess, row.HasRoundsSuccess = float64(succRounds)/float64(succ), true
		}
		if fail > 0 {
			row.RoundsFailed, row.HasRoundsFailed = float64(failRounds)/float64(fail), true
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b TopologyRow) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Level, b.Level), cmp.Compare(a.N, b.N),
			cmp.Compare(a.MergedFrom, b.MergedFrom), cmpProto(a.Protocol, b.Protocol))
	})
	return out
}

// leaderRows groups the runs with N >= 3 by agent × level × protocol, and
// by agent × level over all protocols.
func leaderRows(runs []Run) []LeaderRow {
	type key struct {
		agent    string
		level    int
		protocol string
	}
	type acc struct{ runs, leaders, succWith, succWithout int }
	groups := map[key]*acc{}
	for i := range runs {
		r := &runs[i]
		if !r.Topology.LeaderDefined {
			continue
		}
		for _, p := range []string{r.Protocol, AllProtocols} {
			k := key{r.Agent, r.Level, p}
			a := groups[k]
			if a == nil {
				a = &acc{}
				groups[k] = a
			}
			a.runs++
			switch {
			case r.Topology.Leader:
				a.leaders++
				if r.Success {
					a.succWith++
				}
			case r.Success:
				a.succWithout++
			}
		}
	}
	var out []LeaderRow
	for k, a := range groups {
		row := LeaderRow{Agent: k.agent, Level: k.level, Protocol: k.protocol, Runs: a.runs, Leaders: a.leaders}
		if a.leaders > 0 {
			row.SuccessWith, row.HasSuccessWith = float64(a.succWith)/float64(a.leaders), true
		}
		if without := a.runs - a.leaders; without > 0 {
			row.SuccessWithout, row.HasSuccessWithout = float64(a.succWithout)/float64(without), true
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b LeaderRow) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Level, b.Level), cmpProto(a.Protocol, b.Protocol))
	})
	return out
}
