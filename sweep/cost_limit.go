package sweep

import (
	"slices"
	"sync"
)

// Budget enforces a sweep run's cost limit (--cost-limit): before a case
// starts, the money spent so far in the directory (the finished cases'
// cost and the discarded attempts', earlier runs included, and the cases
// of this run that ended) plus the estimates of the cases still running plus the
// case's own estimate must stay within the limit. The first case that
// would exceed it, and every model-backed case after it, is not started;
// the cases running finish, and cases without a model (built-in
// controllers and agents, which cost nothing) still start. A rerun with a
// higher limit resumes. Its methods are safe for concurrent use (the
// workers call Admit and Ended).
type Budget struct {
	Limit float64

	benchmark string
	ids       []string
	est       []CaseEstimate
	prices    map[string]Price

	mu         sync.Mutex
	spent      float64
	running    map[int]float64
	stopped    bool
	notStarted []int
}

// NewBudget makes the budget of limit US dollars for the shard's cases,
// with their estimates est, over the suite directory dir.
func (s *Suite) NewBudget(limit float64, est Estimate, dir string) (*Budget, error) {
	costs, err := s.ReadCosts(dir)
	if err != nil {
		return nil, err
	}
	// Spent counts the discarded attempts of earlier runs (failed cases
	// among them): a case that fails again and again must not be rerun
	// past the limit.
	by := est.byID()
	b := &Budget{Limit: limit, benchmark: s.Experiment.Benchmark, ids: s.ShardIDs(), prices: costs.prices,
		spent: costs.Spent(), running: map[int]float64{}}
	for _, id := range b.ids {
		b.est = append(b.est, by[id])
	}
	return b, nil
}

// Admit reports whether case i (a position in the shard's cases) may
// start, and reserves its estimate if so.
func (b *Budget) Admit(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.est[i].Model == "" && b.est[i].CostUSD == 0 {
		return true // no model call: free whatever the limit
	}
	if !b.stopped {
		committed := b.spent + b.est[i].CostUSD
		for _, v := range b.running {
			committed += v
		}
		if committed > b.Limit {
			b.stopped = true
		}
	}
	if b.stopped {
		b.notStarted = append(b.notStarted, i)
		return false
	}
	b.running[i] = b.est[i].CostUSD
	return true
}

// Ended records the cost of case i, which ended in dir: its estimate is
// released and its real cost, read from its artifacts, counted.
func (b *Budget) Ended(i int, dir string, failed bool) {
	var u Usage
	var err error
	switch {
	case dir == "": // the case never ran
	case failed: // its logs may end cut short
		u, err = ReadPartialUsage(b.benchmark, dir)
	default:
		u, err = ReadUsage(b.benchmark, dir)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cost := b.running[i]
	if err == nil {
		cost = UsageCost(u, b.est[i].Model, b.price)
	}
	delete(b.running, i)
	b.spent += cost
}

// Discarded counts the usage u of a discarded attempt at case id that was
// not in the directory's ledger when the budget was made (a killed run's,
// recorded by Recorder.Leftover).
func (b *Budget) Discarded(id string, u Usage) {
	model := ""
	for i, x := range b.ids {
		if x == id {
			model = b.est[i].Model
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += UsageCost(u, model, b.price)
}

// price is model label m's price.
func (b *Budget) price(m string) Price { return b.prices[m] }

// Stopped reports whether the limit kept a case from starting.
func (b *Budget) Stopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// Spent is the money spent in the directory so far, in US dollars.
func (b *Budget) Spent() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// NotStarted are the ids of the cases the limit kept from starting, in
// suite order.
func (b *Budget) NotStarted() []string {
	b.mu.Lock()
	idx := slices.Clone(b.notStarted)
	b.mu.Unlock()
	slices.Sort(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = b.ids[i]
	}
	return out
}
