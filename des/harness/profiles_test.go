package harness

// Scenario-profile tests: each reported instance is built to stress one
// coordination difficulty, and these tests check, over the instance's ten
// test seeds, that the difficulty is really there. They assert on
// simulated quantities only (never on wall-clock time).
//
//	go test ./des/harness -run TestProfiles -v
//
// also logs the figures quoted in docs/instances.md ("Scenario profiles,
// measured"); TestProfilesTable checks that its tables are current.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// reportedInstances are the instances of the paper's protocol.
var reportedInstances = []string{"A3C9-1", "A5C12-1", "A5C12-2", "A5C12-3"}

// traceRec is the part of a trace.jsonl record the profile tests read.
type traceRec struct {
	T       float64 `json:"t"`
	Ev      string  `json:"ev"`
	Job     *int    `json:"job"`
	Op      *int    `json:"op"`
	Cell    string  `json:"cell"`
	From    string  `json:"from"`
	Product string  `json:"product"`
	Due     float64 `json:"due"`
}

// profileRun is one episode's metrics and, if asked for, its trace.
type profileRun struct {
	Seed  uint64
	M     Metrics
	Trace []traceRec
}

func profilePlant(t *testing.T, name string) *factory.Plant {
	t.Helper()
	in, err := factory.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return factory.Compile(in)
}

// runTestSeeds plays the plant's test seeds with the controller mk builds
// for each seed (centralized paradigm), parsing the trace when withTrace.
func runTestSeeds(t *testing.T, p *factory.Plant, mk func(seed uint64) coord.Controller, withTrace bool) []profileRun {
	t.Helper()
	var out []profileRun
	for _, s := range p.Inst.Seeds.Test {
		ep := Episode{Plant: p, Seed: s, Mode: coord.Centralized(), Controller: mk(s)}
		var buf bytes.Buffer
		if withTrace {
			ep.Trace = &buf
		}
		r := Run(context.Background(), ep)
		if r.Err != nil {
			t.Fatalf("%s seed %d: %v", p.Inst.Name, s, r.Err)
		}
		run := profileRun{Seed: s, M: r.Metrics}
		if withTrace {
			run.Trace = parseTrace(t, &buf)
		}
		out = append(out, run)
	}
	return out
}

func parseTrace(t *testing.T, buf *bytes.Buffer) []traceRec {
	t.Helper()
	var recs []traceRec
	sc := bufio.NewScanner(buf)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r traceRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// builtin returns a constructor for a built-in controller.
func builtin(t *testing.T, name string) func(uint64) coord.Controller {
	return func(seed uint64) coord.Controller {
		c, err := policy.New(name, seed)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// stddev is the sample standard deviation.
func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func metricOf(runs []profileRun, f func(Metrics) float64) []float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r.M)
	}
	return xs
}

// productWeights is the expected share of each product among an episode's
// jobs: the mix of a generated stream, or the counts of an order book.
func productWeights(p *factory.Plant) []float64 {
	in := p.Inst
	w := make([]float64, len(p.Products))
	idx := map[string]int{}
	for i, pr := range p.Products {
		idx[pr.ID] = i
	}
	switch {
	case len(in.Arrivals.Orders) > 0:
		for _, o := range in.Arrivals.Orders {
			w[idx[o.Product]]++
		}
	case len(in.Arrivals.Mix) > 0:
		for id, x := range in.Arrivals.Mix {
			w[idx[id]] = x
		}
	default:
		for i := range w {
			w[i] = 1
		}
	}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// capableCells counts the cells that can do operation type op.
func capableCells(p *factory.Plant, op int) int {
	n := 0
	for c := range p.Cells {
		if p.Capable(c, op) {
			n++
		}
	}
	return n
}

// opIndex maps an operation type name to its index in p.Ops.
func opIndex(p *factory.Plant, name string) int {
	for i, o := range p.Ops {
		if o == name {
			return i
		}
	}
	return -1
}

// routeView resolves the operation type of (job, op index) from a trace's
// arrival records, which name each job's product.
type routeView struct {
	p       *factory.Plant
	product map[string]int
	jobProd map[int]int
}

func newRouteView(p *factory.Plant, trace []traceRec) *routeView {
	v := &routeView{p: p, product: map[string]int{}, jobProd: map[int]int{}}
	for i, pr := range p.Products {
		v.product[pr.ID] = i
	}
	for _, r := range trace {
		if r.Ev == "arrival" {
			v.jobProd[*r.Job] = v.product[r.Product]
		}
	}
	return v
}

// opType is the operation type index of job j's operation k.
func (v *routeView) opType(j, k int) int {
	return v.p.Products[v.jobProd[j]].Route[k].Type
}

func cellArea(p *factory.Plant) map[string]int {
	m := map[string]int{}
	for _, c := range p.Cells {
		m[c.ID] = c.Area
	}
	return m
}

// TestProfilesSolvable: with the rule controller, nearly every test seed
// of every reported instance completes all its jobs, and episodes have
// 40 to 60 jobs.
func TestProfilesSolvable(t *testing.T) {
	for _, name := range reportedInstances {
		p := profilePlant(t, name)
		runs := runTestSeeds(t, p, builtin(t, "rule"), false)
		done := 0
		for _, r := range runs {
			if r.M.Status == string(factory.Done) {
				done++
			}
			if r.M.Secondary.Jobs < 40 || r.M.Secondary.Jobs > 60 {
				t.Errorf("%s seed %d: %d jobs, want 40 to 60", name, r.Seed, r.M.Secondary.Jobs)
			}
		}
		if done < len(runs)-1 {
			t.Errorf("%s: rule completed %d of %d test seeds, want all but at most one", name, done, len(runs))
		}
	}
}

// TestProfileA5C12_1BranchPressure: almost every operation has several
// feasible cells, and the load-aware rule router really uses them.
func TestProfileA5C12_1BranchPressure(t *testing.T) {
	p := profilePlant(t, "A5C12-1")
	w := productWeights(p)
	multi, total := 0.0, 0.0
	for i, pr := range p.Products {
		for _, op := range pr.Route {
			total += w[i]
			if capableCells(p, op.Type) >= 2 {
				multi += w[i]
			}
		}
	}
	share := multi / total
	t.Logf("A5C12-1: %.0f%% of route operations (mix-weighted) have >= 2 capable cells", 100*share)
	if share < 0.8 {
		t.Errorf("share of operations with several capable cells = %.2f, want >= 0.8", share)
	}

	runs := runTestSeeds(t, p, builtin(t, "rule"), true)
	used := make([]map[string]int, len(p.Ops)) // op type -> cell -> assignments
	for i := range used {
		used[i] = map[string]int{}
	}
	for _, r := range runs {
		v := newRouteView(p, r.Trace)
		for _, rec := range r.Trace {
			if rec.Ev == "route_assigned" {
				used[v.opType(*rec.Job, *rec.Op)][rec.Cell]++
			}
		}
	}
	for op, cells := range used {
		n, top := 0, 0
		for _, k := range cells {
			n += k
			top = max(top, k)
		}
		t.Logf("rule routes %-7s to %d of %d capable cells (busiest cell %.0f%%): %v",
			p.Ops[op], len(cells), capableCells(p, op), 100*float64(top)/float64(max(n, 1)), cells)
		if capableCells(p, op) < 2 {
			continue
		}
		if len(cells) < 2 {
			t.Errorf("rule routes every %s operation to one cell, want a spread over several: %v", p.Ops[op], cells)
		}
		if float64(top) > 0.8*float64(n) {
			t.Errorf("rule routes %.0f%% of %s operations to one cell, want <= 80%%: %v", 100*float64(top)/float64(n), p.Ops[op], cells)
		}
	}
}

// TestProfileA5C12_2ClusterPull: the fast, power-hungry, small-buffer
// cluster A1 lures a fastest-cell-first router; piling onto it overshoots
// the power cap and blocks, so greedy's energy overshoot, blocking and
// tardiness are each at least 1.5 times the load/power-aware rule's.
func TestProfileA5C12_2ClusterPull(t *testing.T) {
	p := profilePlant(t, "A5C12-2")
	rule := runTestSeeds(t, p, builtin(t, "rule"), true)
	greedy := runTestSeeds(t, p, builtin(t, "greedy"), true)

	// The lure: the share of assembly operations each router sends to A1.
	assembly := map[string]bool{"axis": true, "r": true, "I": true, "L": true, "screw": true}
	area := cellArea(p)
	clusterShare := func(runs []profileRun) float64 {
		in, all := 0, 0
		for _, r := range runs {
			v := newRouteView(p, r.Trace)
			for _, rec := range r.Trace {
				if rec.Ev == "route_assigned" && assembly[p.Ops[v.opType(*rec.Job, *rec.Op)]] {
					all++
					if area[rec.Cell] == 0 {
						in++
					}
				}
			}
		}
		return float64(in) / float64(all)
	}
	rs, gs := clusterShare(rule), clusterShare(greedy)
	t.Logf("assembly operations routed to the fast cluster A1: rule %.0f%%, greedy %.0f%%", 100*rs, 100*gs)
	if gs < 0.9 || gs <= rs {
		t.Errorf("greedy sends %.0f%% of assembly work to A1 (rule %.0f%%): want >= 90%% and more than rule", 100*gs, 100*rs)
	}

	for _, r := range greedy {
		if r.M.Status != string(factory.Done) {
			t.Errorf("greedy seed %d ended %s: the profile wants a lure that hurts, not a dead plant", r.Seed, r.M.Status)
		}
	}
	claims := []struct {
		name string
		f    func(Metrics) float64
	}{
		{"G_eo (energy overshoot, kWh)", func(m Metrics) float64 { return m.GEo }},
		{"violations.blocking", func(m Metrics) float64 { return float64(m.Violations.Blocking) }},
		{"secondary.blocking_time", func(m Metrics) float64 { return m.Secondary.BlockingTime }},
		{"G_td (tardiness)", func(m Metrics) float64 { return m.GTd }},
	}
	for _, c := range claims {
		g, r := mean(metricOf(greedy, c.f)), mean(metricOf(rule, c.f))
		t.Logf("%-30s greedy %10.3f  rule %10.3f", c.name, g, r)
		want := 1.5 * r
		if r == 0 {
			want = 1 // rule never blocks: greedy must, at least once per episode on average
		}
		if g < want {
			t.Errorf("%s: greedy mean %.3f is not >= 1.5 x rule mean %.3f", c.name, g, r)
		}
	}
}

// earlyFastest routes like a myopic fastest-cell router (shortest
// processing plus transport time among cells with a free slot, ignoring
// queues and power) for decisions taken before Until, and exactly like the
// rule controller from then on. Releases are always the rule's.
type earlyFastest struct{ Until float64 }

func (earlyFastest) Name() string         { return "early-fastest" }
func (earlyFastest) Source() coord.Source { return coord.SourceBuiltin }
func (e earlyFastest) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	out, err := policy.Rule{}.Act(ctx, d)
	if err != nil || d.Time >= e.Until {
		return out, err
	}
	for id, v := range d.ActiveAgents {
		if v.Kind != coord.KindSelectCell {
			continue
		}
		best, bestS := -1, 0.0
		for _, i := range v.LegalActions {
			c := v.Options[i].Cell
			if c == nil {
				continue
			}
			s := c.ProcTime + c.TransportTime
			if c.FreeSlots <= 0 {
				s += 1e6 // never block on purpose
			}
			if best < 0 || s < bestS {
				best, bestS = i, s
			}
		}
		if best >= 0 {
			out[id] = best
		}
	}
	return out, nil
}

// tardinessByThird splits an episode's tardiness over its jobs taken in
// arrival order into thirds (first, middle, last). Unfinished jobs count
// their lateness at the episode's end.
func tardinessByThird(r profileRun) [3]float64 {
	type job struct {
		id       int
		arr, due float64
	}
	var jobs []job
	done := map[int]float64{}
	for _, rec := range r.Trace {
		switch rec.Ev {
		case "arrival":
			jobs = append(jobs, job{*rec.Job, rec.T, rec.Due})
		case "job_complete":
			done[*rec.Job] = rec.T
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].arr < jobs[b].arr })
	var out [3]float64
	n := len(jobs)
	for k, j := range jobs {
		end, ok := done[j.id]
		if !ok {
			end = r.M.GMk
		}
		third := 1
		switch {
		case k < n/3:
			third = 0
		case k >= n-n/3:
			third = 2
		}
		out[third] += math.Max(0, end-j.due)
	}
	return out
}

// TestProfileA5C12_3LateCommitment: routing choices made early cost
// tardiness late. Two controllers differ only in how they route before the
// late (I-heavy, tight-due) orders start arriving: myopic fastest-cell
// routing versus the rule. From then on both are the rule, and every
// decision about the last third of the jobs (which all arrive later) is
// the same logic. Yet the early-myopic controller ends with clearly more
// tardiness, and the extra tardiness falls on the last third of the jobs,
// not the first.
func TestProfileA5C12_3LateCommitment(t *testing.T) {
	p := profilePlant(t, "A5C12-3")
	// The switch is the arrival of the median job (in A5C12-3's order book,
	// the first order of the late phase), so the last third of the jobs
	// arrive after it. The jobs depend on the seed only.
	switchAt := func(seed uint64) float64 {
		jobs := p.Jobs(seed)
		arr := make([]float64, len(jobs))
		for i, j := range jobs {
			arr[i] = j.Arrival
		}
		sort.Float64s(arr)
		return arr[len(arr)/2]
	}
	rule := runTestSeeds(t, p, builtin(t, "rule"), true)
	early := runTestSeeds(t, p, func(seed uint64) coord.Controller { return earlyFastest{Until: switchAt(seed)} }, true)

	var gap [3]float64
	var ruleT, earlyT [3]float64
	worseSeeds := 0
	for i := range rule {
		a, b := tardinessByThird(rule[i]), tardinessByThird(early[i])
		if b[0]+b[1]+b[2] > a[0]+a[1]+a[2] {
			worseSeeds++
		}
		for k := range gap {
			ruleT[k] += a[k] / float64(len(rule))
			earlyT[k] += b[k] / float64(len(rule))
			gap[k] += (b[k] - a[k]) / float64(len(rule))
		}
		if rule[i].M.Status != string(factory.Done) || early[i].M.Status != string(factory.Done) {
			t.Errorf("seed %d: rule %s, early-fastest %s; want both done", rule[i].Seed, rule[i].M.Status, early[i].M.Status)
		}
	}
	total := gap[0] + gap[1] + gap[2]
	sum := func(x [3]float64) float64 { return x[0] + x[1] + x[2] }
	t.Logf("switch at t=%.0f (seed %d); mean tardiness by arrival third (first, middle, last):",
		switchAt(rule[0].Seed), rule[0].Seed)
	t.Logf("  rule          %7.1f %7.1f %7.1f  total %7.1f", ruleT[0], ruleT[1], ruleT[2], sum(ruleT))
	t.Logf("  early-fastest %7.1f %7.1f %7.1f  total %7.1f", earlyT[0], earlyT[1], earlyT[2], sum(earlyT))
	t.Logf("  gap           %7.1f %7.1f %7.1f  total %7.1f; early-fastest worse on %d of %d seeds",
		gap[0], gap[1], gap[2], total, worseSeeds, len(rule))
	if sum(earlyT) < 1.5*sum(ruleT) {
		t.Errorf("early myopic routing: mean tardiness %.1f, not >= 1.5 x rule's %.1f", sum(earlyT), sum(ruleT))
	}
	if worseSeeds < len(rule)-2 {
		t.Errorf("early myopic routing is worse than rule on only %d of %d seeds", worseSeeds, len(rule))
	}
	if gap[2] < 0.5*total {
		t.Errorf("the last third of the jobs carries %.1f of a %.1f tardiness gap, want at least half", gap[2], total)
	}
	if math.Abs(gap[0]) > 0.1*total {
		t.Errorf("the first third of the jobs carries %.1f of a %.1f tardiness gap, want at most a tenth", gap[0], total)
	}
}

// minAreaChanges is the least number of area changes a route needs:
// consecutive operations in different areas, whatever cells are chosen.
func minAreaChanges(p *factory.Plant, route []factory.RouteOp) int {
	const inf = 1 << 30
	na := len(p.Areas)
	can := func(a, op int) bool {
		for _, c := range p.Areas[a].Cells {
			if p.Capable(c, op) {
				return true
			}
		}
		return false
	}
	cost := make([]int, na)
	for a := range cost {
		cost[a] = inf
		if can(a, route[0].Type) {
			cost[a] = 0
		}
	}
	for _, op := range route[1:] {
		best := inf
		for _, c := range cost {
			best = min(best, c)
		}
		next := make([]int, na)
		for a := range next {
			next[a] = inf
			if can(a, op.Type) {
				next[a] = min(cost[a], best+1)
			}
		}
		cost = next
	}
	best := inf
	for _, c := range cost {
		best = min(best, c)
	}
	return best
}

// TestProfileA3C9_1CrossArea: no area can finish any product, so routes
// must cross areas, and in the traces most moves between cells are moves
// between areas.
func TestProfileA3C9_1CrossArea(t *testing.T) {
	p := profilePlant(t, "A3C9-1")
	w := productWeights(p)
	crossing := 0.0
	for i, pr := range p.Products {
		k := minAreaChanges(p, pr.Route)
		t.Logf("product %s: at least %d area changes", pr.ID, k)
		if k >= 2 {
			crossing += w[i]
		}
	}
	if crossing < 0.8 {
		t.Errorf("share of routes (mix-weighted) that must change area at least twice = %.2f, want >= 0.8", crossing)
	}

	area := cellArea(p)
	for _, name := range []string{"rule", "greedy"} {
		runs := runTestSeeds(t, p, builtin(t, name), true)
		moves, cross, jobs := 0, 0, 0
		for _, r := range runs {
			for _, rec := range r.Trace {
				switch rec.Ev {
				case "transport_start":
					if rec.From == "dock" {
						continue
					}
					moves++
					if area[rec.From] != area[rec.Cell] {
						cross++
					}
				case "job_complete":
					jobs++
				}
			}
		}
		share := float64(cross) / float64(moves)
		t.Logf("%s: %d of %d cell-to-cell transports cross areas (%.0f%%), %.1f area crossings per completed job",
			name, cross, moves, 100*share, float64(cross)/float64(max(jobs, 1)))
		if share < 0.5 {
			t.Errorf("%s: %.0f%% of transports cross areas, want most", name, 100*share)
		}
		if float64(cross) < 2*float64(jobs) {
			t.Errorf("%s: %d area crossings for %d completed jobs, want at least two per job", name, cross, jobs)
		}
	}
}

// TestProfilesTable computes, for every reported instance, mean ± std over
// the test seeds of the main metrics for the built-in controllers, and
// checks that docs/instances.md ("Scenario profiles, measured") holds
// exactly these tables, so that the doc cannot go stale.
func TestProfilesTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/instances.md")
	if err != nil {
		t.Fatal(err)
	}
	cols := []struct {
		name string
		f    func(Metrics) float64
		prec int
	}{
		{"G_mk", func(m Metrics) float64 { return m.GMk }, 0},
		{"G_td", func(m Metrics) float64 { return m.GTd }, 0},
		{"G_cj", func(m Metrics) float64 { return float64(m.GCj) }, 1},
		{"G_vc", func(m Metrics) float64 { return float64(m.GVc) }, 1},
		{"G_eo", func(m Metrics) float64 { return m.GEo }, 3},
		{"G_tr", func(m Metrics) float64 { return float64(m.GTr) }, 1},
		{"blocking_time", func(m Metrics) float64 { return m.Secondary.BlockingTime }, 0},
	}
	for _, name := range reportedInstances {
		p := profilePlant(t, name)
		if n := len(p.Inst.Seeds.Test); n != 10 {
			t.Errorf("%s: %d test seeds; docs/instances.md says the tables are over 10", name, n)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "**%s**\n\n| controller |", name)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", c.name)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, ctrl := range policy.Names() {
			runs := runTestSeeds(t, p, builtin(t, ctrl), false)
			fmt.Fprintf(&b, "| %s |", ctrl)
			for _, c := range cols {
				xs := metricOf(runs, c.f)
				fmt.Fprintf(&b, " %.*f ± %.*f |", c.prec, mean(xs), c.prec, stddev(xs))
			}
			b.WriteString("\n")
		}
		if !bytes.Contains(doc, []byte(b.String())) {
			t.Errorf("docs/instances.md does not hold the table of %s (mean ± std over its test seeds, centralized); the engine gives:\n\n%s", name, b.String())
		}
	}
}
