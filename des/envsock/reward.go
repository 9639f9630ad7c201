package envsock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/harness"
)

// Weights are the weights of python/coordbench_env's Reward (reward.py):
// per step, of the increments of the progress tally; at the end, of
// metrics. The reward is computed in the same order as there, so that it is
// the same float64.
type Weights struct {
	step [4]float64 // time, tardiness, completed, released
	end  [5]float64 // overdue G_ut, unfinished G_dj, violations G_vc, energy_overshoot G_eo, fallbacks G_fb
}

var (
	stepTerms = [4]string{"time", "tardiness", "completed", "released"}
	endTerms  = [5]string{"overdue", "unfinished", "violations", "energy_overshoot", "fallbacks"}
)

// NewWeights checks the weights by term name.
func NewWeights(w map[string]float64) (*Weights, error) {
	out := &Weights{}
	var unknown []string
	for k, v := range w {
		found := false
		for i, t := range stepTerms {
			if t == k {
				out.step[i], found = v, true
			}
		}
		for i, t := range endTerms {
			if t == k {
				out.end[i], found = v, true
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown reward terms %s; known: %s, %s", strings.Join(unknown, ", "),
			strings.Join(stepTerms[:], ", "), strings.Join(endTerms[:], ", "))
	}
	return out, nil
}

// Reward is the reward from progress prev to cur, plus the end terms when
// m (the metrics of the end) is set.
func (w *Weights) Reward(prev, cur envcore.Progress, m *harness.Metrics) float64 {
	r := 0.0
	deltas := [4]float64{cur.Time - prev.Time, cur.Tardiness - prev.Tardiness,
		float64(cur.Completed) - float64(prev.Completed), float64(cur.Released) - float64(prev.Released)}
	for i, wt := range w.step {
		if wt != 0 {
			r += wt * deltas[i]
		}
	}
	if m != nil {
		ends := [5]float64{m.GUt, float64(m.GDj), float64(m.GVc), m.GEo, float64(m.GFb)}
		for i, wt := range w.end {
			if wt != 0 {
				r += wt * ends[i]
			}
		}
	}
	return r
}
