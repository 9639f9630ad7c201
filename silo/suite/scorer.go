package suite

// The scorer version of the silo benchmark and its rule set.

import "github.com/coordbench/coordbench/suiterun"

// ScorerVersion names the scoring rules of this build: S, P, P_fine,
// P_paper, the failure labels, C and C_code of each run (silo/round) and
// RCC of the aggregate. Any change to what one of them means or how it is
// computed from a run's records must bump it (docs/silo-rounds.md,
// "Scorer version"); TestScorerPin fails on a change that leaves it.
const ScorerVersion = "silo-score/1"

// ScorerUnrecorded is the scorer version of a suite or run that records
// none (written before versions were recorded).
const ScorerUnrecorded = suiterun.Unrecorded

// How RCC compares a row's S with its baseline's (Rules.RCC).
const (
	// RCCRatio: RCC = 1 − S(N)/S(baseline) (the paper's; silo-score/1).
	RCCRatio = "ratio"
	// RCCDifference: RCC = S(baseline) − S(N), a variant.
	RCCDifference = "difference"
)

// Rules are the choices of the silo scoring rules that a version fixes.
type Rules struct {
	// RCC is RCCRatio or RCCDifference.
	RCC string `json:"rcc"`
}

// Scorer is a rule set and the version that names it.
type Scorer struct {
	Version string
	Rules   Rules
}

// CurrentScorer is the scorer of live runs.
func CurrentScorer() Scorer { return Scorer{Version: ScorerVersion, Rules: Rules{RCC: RCCRatio}} }

// cost is RCC of s against base under the rules.
func (r Rules) cost(s, base float64) float64 {
	if r.RCC == RCCDifference {
		return base - s
	}
	return 1 - s/base
}
