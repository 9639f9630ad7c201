package analyze

import (
	"cmp"
	"slices"

	"github.com/coordbench/coordbench/silo/round"
)

// PrimaryField is result.json's per-agent label field; other label fields
// (Outcome.Labels) follow it in name order.
const PrimaryField = "labels"

// knownLabels are the failure labels the project defines, in the order
// the paper discusses them; other labels follow in name order.
var knownLabels = []string{round.LabelPremature, round.LabelConsensus, round.LabelComputation, round.LabelNoSubmission}

// LabelRow counts one pair of labels (A == B: one label) of one label
// field in one group of runs (agent × level × protocol; AllLevels and
// AllProtocols for the whole input).
type LabelRow struct {
	Field    string
	Agent    string
	Level    int
	Protocol string
	A, B     string
	Agents   int // agents carrying both A and B
	Runs     int // runs in which A and B both occur, on any agents
	// GroupRuns and GroupAgents are the group's runs and agents, labelled
	// or not (the denominators of rates).
	GroupRuns, GroupAgents int
}

// labelFields lists the label fields of runs, PrimaryField first.
func labelFields(runs []Run) []string {
	seen := map[string]bool{}
	var out []string
	for i := range runs {
		for _, o := range runs[i].Agents {
			for f := range o.Labels {
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(-cmp.Compare(boolInt(a == PrimaryField), boolInt(b == PrimaryField)), cmp.Compare(a, b))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// labelOrder lists the labels of field seen in multi-agent runs: knownLabels first,
// then the others in name order.
func labelOrder(runs []Run, field string) []string {
	seen := map[string]bool{}
	for i := range runs {
		if runs[i].N < 2 { // coOccurrence leaves single-agent runs out
			continue
		}
		for _, o := range runs[i].Agents {
			for _, l := range o.Labels[field] {
				seen[l] = true
			}
		}
	}
	var out, rest []string
	for _, l := range knownLabels {
		if seen[l] {
			out = append(out, l)
			delete(seen, l)
		}
	}
	for l := range seen {
		rest = append(rest, l)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// coOccurrence counts labels and label pairs of every field (in fields,
// with its labels in orders[field]) by agent × level × protocol and by
// agent over everything. Like the paper's appendix G.2 it counts
// multi-agent runs only: single-agent runs (N = 1 baselines, merged or
// seeded) are left out.
func coOccurrence(runs []Run, fields []string, orders map[string][]string) []LabelRow {
	type gkey struct {
		field, agent string
		level        int
		protocol     string
	}
	type pair struct{ a, b int } // label ranks, a <= b
	type acc struct {
		runs, agents         int
		agentPairs, runPairs map[pair]int
	}
	var out []LabelRow
	for _, field := range fields {
		start := len(out)
		order := orders[field]
		rank := map[string]int{}
		for i, l := range order {
			rank[l] = i
		}
		groups := map[gkey]*acc{}
		var keys []gkey
		for i := range runs {
			r := &runs[i]
			if r.N < 2 {
				continue
			}
			// The ranks of each agent's labels, and of the run's union.
			var union []int
			perAgent := make([][]int, len(r.Agents))
			for j, o := range r.Agents {
				for _, l := range o.Labels[field] {
					perAgent[j] = append(perAgent[j], rank[l])
					if !slices.Contains(union, rank[l]) {
						union = append(union, rank[l])
					}
				}
				slices.Sort(perAgent[j])
			}
			slices.Sort(union)
			for _, k := range []gkey{{field, r.Agent, r.Level, r.Protocol}, {field, r.Agent, AllLevels, AllProtocols}} {
				a := groups[k]
				if a == nil {
					a = &acc{agentPairs: map[pair]int{}, runPairs: map[pair]int{}}
					groups[k] = a
					keys = append(keys, k)
				}
				a.runs++
				a.agents += len(r.Agents)
				for _, ls := range perAgent {
					for x := range ls {
						for _, y := range ls[x:] {
							a.agentPairs[pair{ls[x], y}]++
						}
					}
				}
				for x := range union {
					for _, y := range union[x:] {
						a.runPairs[pair{union[x], y}]++
					}
				}
			}
		}
		for _, k := range keys {
			a := groups[k]
			for p, nr := range a.runPairs {
				out = append(out, LabelRow{Field: k.field, Agent: k.agent, Level: k.level, Protocol: k.protocol,
					A: order[p.a], B: order[p.b], Agents: a.agentPairs[p], Runs: nr, GroupRuns: a.runs, GroupAgents: a.agents})
			}
		}
		slices.SortFunc(out[start:], func(x, y LabelRow) int {
			return cmp.Or(cmp.Compare(x.Agent, y.Agent), cmp.Compare(x.Level, y.Level), cmpProto(x.Protocol, y.Protocol),
				cmp.Compare(rank[x.A], rank[y.A]), cmp.Compare(rank[x.B], rank[y.B]))
		})
	}
	return out
}
