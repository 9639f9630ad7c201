package check

import (
	"cmp"
	"math"
	"slices"

	"github.com/coordbench/coordbench/des/factory"
)

// The plant as instance.json describes it, re-derived here from the file
// alone (the engine's compiled Plant is deliberately not used).

type cellInfo struct {
	id       string
	area     string
	machines int
	buffer   int
	dispatch string
	caps     map[string]float64
	powerW   [numMStates]int64 // draw in each machine state, whole watts
	mtbf     float64
}

type productInfo struct {
	id     string
	family string
	route  []factory.Operation
	// slack and work give a job's due date: arrival + slack × work, the
	// product's slack or the instance's due_slack, its route's base work.
	slack, work float64
}

type plantModel struct {
	inst     *factory.Instance
	cells    []cellInfo
	cellIdx  map[string]int
	products map[string]*productInfo
	// jobsExpected is the job count fixed by the instance (-1 if it
	// depends on nothing the checker can see).
	jobsExpected int
	// orders is the instance's order book by arrival (the k-th is job k),
	// nil for a Poisson stream.
	orders []factory.Order
}

// watts converts kW to whole watts; power levels are tracked in watts so
// that sums are exact.
func watts(kw float64) int64 { return int64(math.Round(kw * 1000)) }

func newPlantModel(in *factory.Instance, add func(check, format string, args ...any)) *plantModel {
	p := &plantModel{inst: in, cellIdx: map[string]int{}, products: map[string]*productInfo{}, jobsExpected: -1}
	for _, a := range in.Areas {
		for _, cs := range a.Cells {
			c := cellInfo{id: cs.ID, area: a.ID, machines: cs.Machines, buffer: cs.Buffer, dispatch: cs.Dispatch, caps: cs.Capabilities}
			if _, dup := p.cellIdx[cs.ID]; dup {
				add(ckInstance, "cell id %q appears twice", cs.ID)
				continue
			}
			if cs.Machines < 1 {
				add(ckInstance, "cell %s has %d machines", cs.ID, cs.Machines)
			}
			if cs.PowerKW == nil {
				add(ckInstance, "cell %s has no power_kw", cs.ID)
			} else {
				pw := cs.PowerKW
				c.powerW = [numMStates]int64{watts(pw.Idle), watts(pw.Setup), watts(pw.Busy), watts(pw.Blocked), watts(pw.Down)}
			}
			if cs.MTBF != nil {
				c.mtbf = *cs.MTBF
			}
			if c.machines > 1<<16 {
				add(ckInstance, "cell %s has too many machines (%d)", cs.ID, c.machines)
				c.machines = 1 << 16
			}
			p.cellIdx[cs.ID] = len(p.cells)
			p.cells = append(p.cells, c)
		}
	}
	for i := range in.Products {
		pr := &in.Products[i]
		if _, dup := p.products[pr.ID]; dup {
			add(ckInstance, "product id %q appears twice", pr.ID)
			continue
		}
		info := &productInfo{id: pr.ID, family: pr.Family, route: pr.Route, slack: pr.Slack}
		if info.slack == 0 {
			info.slack = in.DueSlack
		}
		for _, op := range pr.Route {
			info.work += op.Time
		}
		p.products[pr.ID] = info
	}
	if n := len(in.Arrivals.Orders); n > 0 {
		p.jobsExpected = n
		p.orders = slices.Clone(in.Arrivals.Orders)
		slices.SortStableFunc(p.orders, func(a, b factory.Order) int { return cmp.Compare(a.Arrival, b.Arrival) })
	} else {
		p.jobsExpected = in.Arrivals.Jobs
	}
	return p
}

// transportTime is the instance's travel time from cell `from` (-1: the
// dock) to cell `to`.
func (p *plantModel) transportTime(from, to int) float64 {
	tr := &p.inst.Transport
	dst := p.cells[to].area
	if from < 0 {
		if v, ok := tr.DockMatrix[dst]; ok {
			return v
		}
		return tr.Dock
	}
	if from == to {
		return 0
	}
	src := p.cells[from].area
	if src == dst {
		return tr.IntraArea
	}
	if v, ok := tr.InterMatrix[src][dst]; ok {
		return v
	}
	return tr.InterArea
}

// setupTime is the setup time of a machine last set up for family `from`
// (has=false: never set up) to process family `to`.
func (p *plantModel) setupTime(from string, has bool, to string) float64 {
	s := &p.inst.Setup
	switch {
	case !has:
		return s.Initial
	case from == to:
		return 0
	}
	if v, ok := s.Matrix[from][to]; ok {
		return v
	}
	return s.Change
}

// opType returns step op of product pr's route (false if there is none).
func (pr *productInfo) opType(op int) (factory.Operation, bool) {
	if pr == nil || op < 0 || op >= len(pr.route) {
		return factory.Operation{}, false
	}
	return pr.route[op], true
}
