package sweep

import (
	"slices"
	"testing"
)

// TestBudgetReservesRunningCases: a case is admitted while the money spent
// plus the estimates of the cases running plus its own stay within the
// limit; the first refusal stops every later model-backed case, while a
// case without a model still starts; an ended case's real cost, read from
// its logs, replaces its estimate.
func TestBudgetReservesRunningCases(t *testing.T) {
	b := &Budget{Limit: 2.5, benchmark: BenchmarkDes, ids: []string{"a", "b", "c", "d", "e", "f"},
		est:     []CaseEstimate{{Model: "m", CostUSD: 1}, {Model: "m", CostUSD: 1}, {Model: "m", CostUSD: 1}, {Model: "m", CostUSD: 0}, {CostUSD: 0}, {Model: "m"}},
		spent:   0.25,
		running: map[int]float64{}, prices: map[string]Price{}}
	if !b.Admit(0) || !b.Admit(1) {
		t.Fatal("the first two cases were refused")
	}
	if b.Admit(2) || b.Admit(3) || !b.Stopped() {
		t.Fatal("the third case was admitted: 0.25 spent + 2 running + 1 > 2.5")
	}
	b.Ended(0, t.TempDir(), false) // no logs: no model call recorded, cost 0
	b.Ended(1, t.TempDir(), true)
	if b.Admit(5) {
		t.Error("a model-backed case was admitted after the limit was reached")
	}
	if !b.Admit(4) {
		t.Error("a case without a model was refused")
	}
	if got := b.NotStarted(); !slices.Equal(got, []string{"c", "d", "f"}) {
		t.Errorf("not started %v", got)
	}
	if b.Spent() != 0.25 {
		t.Errorf("spent %v, want 0.25 (the two ended cases made no call)", b.Spent())
	}
}
