package harness

import (
	"context"
	"errors"
	"runtime/metrics"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// RoleCost splits the cost of an episode's decision steps by role level:
// the steps in which the plant agent is active (its views show the whole
// plant, by design) and the local ones, in which only area and cell agents
// are (their views must cost the same whatever the plant's size).
// Measured by `coordbench des bench --by-role` (wall-clock: for humans,
// never for tests) and, in instructions, under callgrind (MeasureRoles).
type RoleCost struct {
	Instance   string    `json:"instance"`
	Cells      int       `json:"cells"`
	Paradigm   string    `json:"paradigm"`
	Controller string    `json:"controller"`
	Episodes   int       `json:"episodes"`
	Plant      LevelCost `json:"plant"`
	Local      LevelCost `json:"local"`
}

// LevelCost is the cost of the decision steps of one role level, summed
// over the episodes.
type LevelCost struct {
	Decisions int `json:"decisions"`
	Views     int `json:"views"` // agent views built (a bid round activates several cells)
	// CellReads are the cell summaries the views read
	// (coord.Interpreter.CellReads): counted work, the same from run to
	// run.
	CellReads int `json:"cell_reads"`
	// ObserveSeconds is the time spent building the views
	// (coord.Interpreter.Next); ActSeconds the controller's choice and
	// the commit (Apply).
	ObserveSeconds float64 `json:"observe_s"`
	ActSeconds     float64 `json:"act_s"`
	// Allocs are the heap allocations of those steps (counted only when
	// MeasureRoles is asked to: reading the count costs more than a step).
	Allocs uint64 `json:"allocs,omitempty"`
}

// NsPerDecision is the mean wall time of a step, views and commit.
func (l LevelCost) NsPerDecision() float64 {
	if l.Decisions == 0 {
		return 0
	}
	return (l.ObserveSeconds + l.ActSeconds) * 1e9 / float64(l.Decisions)
}

// RoleOptions are MeasureRoles's settings.
type RoleOptions struct {
	// Allocs counts the heap allocations of each level's steps.
	Allocs bool
}

// MeasureRoles runs k episodes (seeds 1..k) of the built-in controller
// newCtrl makes, on one goroutine without artifacts, and splits the cost
// of their decision steps by role level (RoleCost). Each episode is
// played twice on the same reused engine and interpreter: the first pass
// finds each step's level, the second, the same episode step for step
// (same seed, same answers), runs every step inside the function of its
// level (plantObserve, plantAct, localObserve, localAct), so that a
// profiler's inclusive cost of those functions is the cost of each
// level; the engine's own work between steps is outside them. Only the
// second pass is measured.
//
// The loop is Run's for a controller that answers each view alone
// (coord.ViewChooser), without artifacts; any other controller is asked
// through Act. It ends an episode as Run does (decision limit, no
// progress) and stops at the first protocol or commit error.
func MeasureRoles(ctx context.Context, p *factory.Plant, mode coord.AuthorityMode, newCtrl func(seed uint64) coord.Controller, k int, opt RoleOptions) (RoleCost, error) {
	rc := RoleCost{Instance: p.Inst.Name, Cells: len(p.Cells), Paradigm: mode.ID, Episodes: k}
	var rs roleScratch
	var levels []bool // per step: the plant is active
	for i := 1; i <= k; i++ {
		seed := uint64(i)
		ctrl := newCtrl(seed)
		rc.Controller = ctrl.Name()
		var err error
		if levels, err = rs.play(ctx, p, seed, mode, ctrl, levels[:0], nil, opt); err != nil {
			return rc, err
		}
		if _, err = rs.play(ctx, p, seed, mode, newCtrl(seed), levels, &rc, opt); err != nil {
			return rc, err
		}
	}
	return rc, nil
}

// Errors of MeasureRoles: the engine waited with no decision to make, or
// the measured pass did not replay the first.
var (
	errNoDecision = errors.New("the engine waits with no decision to make")
	errDiverged   = errors.New("the measured episode took more steps than its first pass")
)

// roleScratch is MeasureRoles's engine, interpreter and answers, reused.
type roleScratch struct {
	eng     *factory.Engine
	in      *coord.Interpreter
	actions []int
	allocs  []metrics.Sample
}

// play runs one episode. Without rc it appends each step's level (true:
// the plant is active) to levels and returns them; with rc it runs each
// step in its level's functions, by levels, and adds the costs to rc.
func (rs *roleScratch) play(ctx context.Context, p *factory.Plant, seed uint64, mode coord.AuthorityMode, ctrl coord.Controller, levels []bool, rc *RoleCost, opt RoleOptions) ([]bool, error) {
	if rs.eng == nil {
		rs.eng = factory.NewEngine(p, seed)
	} else {
		rs.eng.Reset(p, seed)
	}
	eng := rs.eng
	if rs.in == nil {
		in, err := coord.NewInterpreter(eng, mode)
		if err != nil {
			return levels, err
		}
		rs.in = in
	} else if err := rs.in.Reset(eng, mode); err != nil {
		return levels, err
	}
	in := rs.in
	st := stepper{in: in, ctrl: ctrl, ctx: ctx, actions: rs.actions}
	st.chooser, st.perView = coord.IsViewChooser(ctrl)
	if opt.Allocs && rs.allocs == nil {
		rs.allocs = []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	}
	guard := newStepGuard(eng, p.Inst.Limits)
	for step := 0; eng.Advance(); step++ {
		in.Observe(eng.Records())
		var err error
		if rc == nil {
			err = st.classify(&levels)
		} else {
			if step >= len(levels) {
				return levels, errDiverged
			}
			lc := &rc.Local
			if levels[step] {
				lc = &rc.Plant
			}
			err = rs.measure(&st, levels[step], lc, opt.Allocs)
		}
		if err != nil {
			return levels, err
		}
		guard.after(eng, in.Steps())
	}
	rs.actions = st.actions
	return levels, nil
}

// measure runs one step in its level's functions and adds its cost to lc.
func (rs *roleScratch) measure(st *stepper, plant bool, lc *LevelCost, allocs bool) error {
	var a0 uint64
	if allocs {
		metrics.Read(rs.allocs)
		a0 = rs.allocs[0].Value.Uint64()
	}
	r0 := st.in.CellReads()
	t0 := time.Now()
	var views int
	var err error
	if plant {
		views, err = st.plantObserve()
	} else {
		views, err = st.localObserve()
	}
	t1 := time.Now()
	if err == nil {
		if plant {
			err = st.plantAct()
		} else {
			err = st.localAct()
		}
	}
	t2 := time.Now()
	if allocs {
		metrics.Read(rs.allocs)
		lc.Allocs += rs.allocs[0].Value.Uint64() - a0
	}
	lc.Decisions++
	lc.Views += views
	lc.CellReads += st.in.CellReads() - r0
	lc.ObserveSeconds += t1.Sub(t0).Seconds()
	lc.ActSeconds += t2.Sub(t1).Seconds()
	return err
}

// stepper makes and commits one decision step.
type stepper struct {
	in      *coord.Interpreter
	ctrl    coord.Controller
	chooser coord.ViewChooser
	perView bool
	ctx     context.Context
	d       *coord.Decision
	actions []int
}

// classify makes and commits a step, appending its level to levels.
func (st *stepper) classify(levels *[]bool) error {
	n, err := st.observe()
	if err != nil {
		return err
	}
	plant := false
	for _, v := range st.in.ActiveViews()[:n] {
		plant = plant || v.Role == coord.RolePlant
	}
	*levels = append(*levels, plant)
	return st.act()
}

// The steps of each level, each in a function of its own for profilers
// (MeasureRoles): kept out of line so that each has its own inclusive
// cost.

//go:noinline
func (st *stepper) plantObserve() (int, error) { return st.observe() }

//go:noinline
func (st *stepper) localObserve() (int, error) { return st.observe() }

//go:noinline
func (st *stepper) plantAct() error { return st.act() }

//go:noinline
func (st *stepper) localAct() error { return st.act() }

// observe builds the decision's views and returns how many there are.
func (st *stepper) observe() (int, error) {
	st.d = st.in.Next()
	if st.d == nil {
		if err := st.in.Err(); err != nil {
			return 0, err
		}
		return 0, errNoDecision
	}
	return len(st.in.ActiveViews()), nil
}

// act asks the controller and commits its answers.
func (st *stepper) act() error {
	if st.perView {
		views := st.in.ActiveViews()
		st.actions = st.actions[:0]
		for _, v := range views {
			st.actions = append(st.actions, st.chooser.ChooseView(v))
		}
		_, err := st.in.ApplyList(st.actions, st.ctrl.Source(), nil, nil)
		return err
	}
	actions, cerr := st.ctrl.Act(st.ctx, st.d)
	_, err := st.in.Apply(st.d, actions, st.ctrl.Source(), cerr)
	return err
}
