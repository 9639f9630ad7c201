package report

import (
	"slices"
	"strconv"
	"strings"
)

// Paired statistics between the protocols of one silo suite. Every
// protocol of a suite runs the same task instances: a task, N and seed
// fix the data each agent holds, whatever the protocol. Two protocols are
// therefore compared run by run, paired by task × N × seed (and agent),
// with the statistics of Paired.

// SectionSiloPaired is the kind of the protocol comparison's section.
const SectionSiloPaired = "silo-paired"

// siloPairedSection compares each pair of protocols of the suite, per
// level × N × agent and metric (S, success, P, D).
func siloPairedSection(dir string, runs []siloRunRow) Section {
	sec := Section{Suite: dir, Kind: SectionSiloPaired, Title: dir + ": paired differences between protocols"}
	var protoSet distinct[string]
	type gkey struct {
		level string
		n     int
		agent string
	}
	var groupSet distinct[gkey]
	byKey := map[string]siloRunRow{} // task, N, seed, agent, protocol → run
	for _, r := range runs {
		if r.baseline {
			continue
		}
		protoSet.add(r.protocol)
		groupSet.add(gkey{r.level, r.n, r.agent})
		byKey[strings.Join([]string{r.task, strconv.Itoa(r.n), r.seed, r.agent, r.protocol}, "\x00")] = r
	}
	protos, groups := protoSet.list, groupSet.list
	slices.SortStableFunc(groups, func(a, b gkey) int {
		if c := levels[a.level] - levels[b.level]; c != 0 {
			return c
		}
		return a.n - b.n
	})
	metrics := siloPairMetrics[:4] // S, success, P, D: tokens differ by protocol by design
	var rows []pairRow
	for _, g := range groups {
		for i, pa := range protos {
			for _, pb := range protos[i+1:] {
				for _, m := range metrics {
					r := pairRow{group: []string{g.level, strconv.Itoa(g.n), g.agent, pa, pb}, metric: m.name, arrow: m.arrow, digits: 3}
					for _, a := range runs {
						if a.baseline || a.level != g.level || a.n != g.n || a.agent != g.agent || a.protocol != pa {
							continue
						}
						b, ok := byKey[strings.Join([]string{a.task, strconv.Itoa(a.n), a.seed, a.agent, pb}, "\x00")]
						if ok {
							r.add(m.get(a), m.get(b))
						}
					}
					if len(r.diffs) > 0 {
						rows = append(rows, r)
					}
				}
			}
		}
	}
	caption := "Protocols A and B ran the same task instances (task × N × seed), so they are compared run by run: each row is over the n runs of its level × N × agent " +
		"that both protocols finished, of the differences A − B. 95% t interval: mean ± t(0.975, n−1)·sd/√n; bootstrap: percentiles of " + strconv.Itoa(Resamples) +
		" resample means. ≠ 0: the t interval excludes 0. The tasks of a level differ in difficulty, so a row mixes them: read it as the average effect over the level's tasks."
	compareTable(&sec, "Paired differences between protocols", caption, []string{"level", "N", "agent", "A", "B"}, rows, 0, 0, false)
	return sec
}
