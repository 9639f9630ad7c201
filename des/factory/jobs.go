package factory

import (
	"slices"
	"sort"
	"strconv"

	"github.com/coordbench/coordbench/des/sim"
)

// JobSpec is one job of an episode as the seed fixes it, before any
// decision: which product, when it arrives, when it is due, and the
// processing-noise multiplier of each of its operations.
type JobSpec struct {
	ID      int       `json:"id"`
	Product string    `json:"product"`
	Arrival float64   `json:"arrival"`
	Due     float64   `json:"due"`
	Weight  float64   `json:"weight"`
	Noise   []float64 `json:"noise"`

	product int
}

// Stream names of the exogenous processes. Each process draws from its own
// stream, derived from (seed, name), so that the exogenous trajectory is the
// same whatever the decisions (common random numbers across paradigms).
const (
	StreamArrivals = "arrivals"
	StreamMix      = "product_mix"
	StreamNoise    = "processing_noise"
)

// BreakdownStream and RepairStream name a machine's failure streams.
func BreakdownStream(cell string, m int) string { return "breakdown/" + cell + "/" + strconv.Itoa(m) }

// RepairStream names the stream of a machine's repair durations.
func RepairStream(cell string, m int) string { return "repair/" + cell + "/" + strconv.Itoa(m) }

// Jobs draws the episode's jobs for a seed. They depend only on the
// instance and the seed.
func (p *Plant) Jobs(seed uint64) []JobSpec { return p.jobsInto(nil, seed) }

// jobsInto is Jobs writing into dst's storage: the slice and the noise
// slices of its elements (up to its capacity) are reused, so an engine
// that is reset for another episode draws its jobs without allocating.
// Whatever dst held is overwritten.
func (p *Plant) jobsInto(dst []JobSpec, seed uint64) []JobSpec {
	in := p.Inst
	noise := sim.NewStream(seed, StreamNoise)
	jobs := dst[:0]
	prodIdx := map[string]int{}
	for i, pr := range p.Products {
		prodIdx[pr.ID] = i
	}
	add := func(prod int, arrival, due, weight float64) {
		pt := &p.Products[prod]
		if due == 0 {
			due = arrival + pt.Slack*pt.Work
		}
		if weight == 0 {
			weight = pt.Weight
		}
		var buf []float64 // the noise storage of the element being overwritten
		if len(jobs) < cap(jobs) {
			buf = jobs[:len(jobs)+1][len(jobs)].Noise[:0]
		}
		jobs = append(jobs, JobSpec{Product: pt.ID, Arrival: arrival, Due: due, Weight: weight, Noise: buf, product: prod})
	}
	if len(in.Arrivals.Orders) > 0 {
		orders := append([]Order(nil), in.Arrivals.Orders...)
		sort.SliceStable(orders, func(a, b int) bool { return orders[a].Arrival < orders[b].Arrival })
		for _, o := range orders {
			add(prodIdx[o.Product], o.Arrival, o.Due, o.Weight)
		}
	} else {
		arr := sim.NewStream(seed, StreamArrivals)
		mix := sim.NewStream(seed, StreamMix)
		w := make([]float64, len(p.Products))
		for i, pr := range p.Products {
			if len(in.Arrivals.Mix) == 0 {
				w[i] = 1
			} else {
				w[i] = in.Arrivals.Mix[pr.ID]
			}
		}
		t := 0.0
		for k := 0; k < in.Arrivals.Jobs; k++ {
			if k >= in.Arrivals.Initial {
				t += arr.Exp(in.Arrivals.MeanInterarrival)
			}
			add(mix.Weighted(w), t, 0, 0)
		}
	}
	h := in.ProcessingNoise
	for i := range jobs {
		jobs[i].ID = i
		route := p.Products[jobs[i].product].Route
		jobs[i].Noise = slices.Grow(jobs[i].Noise[:0], len(route))[:len(route)]
		for k := range route {
			jobs[i].Noise[k] = 1
			if h > 0 {
				jobs[i].Noise[k] = noise.Uniform(1-h, 1+h)
			}
		}
	}
	return jobs
}
