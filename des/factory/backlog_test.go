package factory

import (
	"math"
	"testing"
)

// refMachine is what the trace tells about one machine's setup or
// operation: the phase in progress or interrupted (Idle: none), how long
// it has run, and its nominal duration.
type refMachine struct {
	phase       MachineState // Idle, Setup or Busy
	down        bool
	job         int
	family      int     // family set up for (-1: none)
	ran         float64 // time run before from
	from        float64 // start of the piece running now (when !down)
	dur         float64 // nominal duration of the phase
	interrupted bool    // a breakdown interrupted some earlier phase
}

// backlogRef rebuilds the machines' part of the nominal backlog
// (docs/payload.md) from the trace alone, independently of the engine's
// own bookkeeping.
type backlogRef struct {
	e *Engine
	m []refMachine
	// breakdowns of machines with no phase in progress after an earlier
	// interruption: where a stale residual used to show.
	staleChances int
}

// opTime is the nominal time of job j's operation op on cell c.
func (b *backlogRef) opTime(j, op, c int) float64 {
	o := b.e.jobs[j].route[op]
	return b.e.P.ProcTime(c, o.Type, o.Base)
}

// take reads the records of the engine's last steps (taken after each
// one, before the engine is read: the machines' state is the records').
func (b *backlogRef) take() {
	recs := b.e.Records()
	for i := range recs {
		b.record(&recs[i])
	}
}

func (b *backlogRef) record(r *Record) {
	if r.Machine < 0 || r.Ev == EvTransportStart {
		return
	}
	c := int(r.Cell)
	m := &b.m[b.e.P.Cells[c].FirstMachine+int(r.Machine)]
	j := int(r.Job)
	switch r.Ev {
	case EvSetupStart:
		fam := b.e.jobs[j].family
		*m = refMachine{phase: Setup, job: j, family: m.family, from: r.T, dur: b.e.P.SetupTime(m.family, fam),
			interrupted: m.interrupted}
	case EvSetupComplete:
		m.family = b.e.jobs[j].family
	case EvProcessStart:
		*m = refMachine{phase: Busy, job: j, family: m.family, from: r.T, dur: b.opTime(j, int(r.Op), c), interrupted: m.interrupted}
	case EvBreakdown:
		if m.phase == Idle && m.interrupted {
			b.staleChances++
		}
		if m.phase != Idle {
			m.ran += r.T - m.from
			m.interrupted = true
		}
		m.down = true
	case EvRepair, EvProcessResume:
		m.down, m.from = false, r.T
	case EvFinish:
		m.phase = Idle
	}
}

// backlog is machine m's documented share of its cell's backlog now.
func (b *backlogRef) backlog(mi int) float64 {
	m := &b.m[mi]
	if m.phase == Idle {
		return 0
	}
	ran := m.ran
	if !m.down {
		ran += b.e.now - m.from
	}
	left := max(0, m.dur-ran)
	if m.phase == Setup {
		left += b.opTime(m.job, b.e.jobs[m.job].op, b.e.machines[mi].cell)
	}
	return left
}

// TestBacklogIsNominal compares every cell's backlog, at every decision
// point of episodes on the reported instances, with the documented rule
// rebuilt from the trace: nominal durations minus time run, nothing left
// over from a phase a breakdown interrupted earlier.
func TestBacklogIsNominal(t *testing.T) {
	tb := t
	stale, checked, termsChecked, termsFull := 0, 0, 0, 0
	for _, name := range BuiltinNames() {
		in, err := Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		p := Compile(in)
		for _, seed := range in.Seeds.Test {
			ref := &backlogRef{m: make([]refMachine, p.Machines)}
			for i := range ref.m {
				ref.m[i].family = -1
			}
			e := NewEngine(p, seed)
			ref.e = e
			terms := make([]BacklogTerms, len(p.Cells))
			termsVer := make([]uint64, len(p.Cells))
			for e.Advance() {
				ref.take()
				for c := range p.Cells {
					// The terms of a cell whose version is unchanged give
					// CellInto's backlog at any later time, bit for bit.
					if t := &terms[c]; t.OK() && termsVer[c] == e.CellVersion(c) {
						if got, want := t.At(e.Now()), e.Cell(c).Backlog; got != want {
							t2 := *t
							tb.Fatalf("%s seed %d t=%g: cell %s backlog from its terms %v, CellInto %v (%+v)", name, seed, e.Now(), p.Cells[c].ID, got, want, t2)
						}
						termsChecked++
					} else {
						var info CellInfo
						e.CellIntoTerms(c, &info, t)
						if want := e.Cell(c); info != want {
							tb.Fatalf("%s seed %d t=%g: cell %s CellIntoTerms %+v, CellInto %+v", name, seed, e.Now(), p.Cells[c].ID, info, want)
						}
						termsVer[c] = e.CellVersion(c)
						if !t.OK() {
							termsFull++
						}
					}
					want := 0.0
					for m := 0; m < p.Cells[c].Machines; m++ {
						want += ref.backlog(p.Cells[c].FirstMachine + m)
					}
					cs := &e.cells[c]
					for _, q := range [][]int{cs.waiting, cs.admitQ, cs.incoming} {
						for _, j := range q {
							want += e.nominal(j, c)
						}
					}
					if got, want := e.Cell(c), cellInfoRef(e, c); got != want {
						t.Fatalf("%s seed %d t=%g: cell %s summary %+v, the plain summation gives %+v", name, seed, e.Now(), p.Cells[c].ID, got, want)
					}
					if got := e.Cell(c).Backlog; math.Abs(got-want) > 1e-9*max(1, want) {
						t.Fatalf("%s seed %d t=%g: cell %s backlog %v, want %v", name, seed, e.Now(), p.Cells[c].ID, got, want)
					}
					checked++
				}
				leastLoaded(e)
			}
			stale += ref.staleChances
		}
	}
	t.Logf("%d cell backlogs checked, %d breakdowns of idle or blocked machines after an interruption; %d backlogs from kept terms, %d cells with too many terms",
		checked, stale, termsChecked, termsFull)
	if termsChecked == 0 {
		t.Error("no backlog was computed from kept terms")
	}
	if stale == 0 {
		t.Error("no machine broke down idle or blocked after an interrupted phase: the stale case went untested")
	}
}

// cellInfoRef is Engine.Cell written plainly (CellInto before it counted
// in locals): CellInto must give the same summary, the backlog's float
// sum in the same order included.
func cellInfoRef(e *Engine, c int) CellInfo {
	cell := &e.P.Cells[c]
	cs := &e.cells[c]
	info := CellInfo{Occupancy: cs.occupancy, Waiting: len(cs.waiting), AdmitQueue: len(cs.admitQ),
		FreeSlots: cell.Buffer - cs.occupancy}
	for m := 0; m < cell.Machines; m++ {
		mc := &e.machines[cell.FirstMachine+m]
		info.PowerW += cell.PowerW[mc.state]
		switch mc.state {
		case Idle:
			info.Idle++
		case Setup:
			info.Setup++
		case Busy:
			info.Busy++
		case Blocked:
			info.Blocked++
		case Down:
			info.Down++
		}
		info.Backlog += e.machineBacklog(mc)
	}
	for _, q := range [][]int{cs.waiting, cs.admitQ, cs.incoming} {
		for _, j := range q {
			info.Backlog += e.nominal(j, c)
		}
	}
	return info
}

// leastLoaded makes the pending decision: it releases the first backlog
// job, or routes the oldest work item to the capable cell with free slots
// and the least backlog.
func leastLoaded(e *Engine) {
	if len(e.RouteQueue()) == 0 {
		e.Release(e.Backlog()[0])
		return
	}
	j := e.RouteQueue()[0]
	op, _, _ := e.CurrentOp(j)
	best, bestS := -1, 0.0
	for c := range e.P.Cells {
		if !e.P.Capable(c, op) {
			continue
		}
		ci := e.Cell(c)
		s := ci.Backlog
		if ci.FreeSlots == 0 {
			s += 1e9
		}
		if best < 0 || s < bestS {
			best, bestS = c, s
		}
	}
	e.Assign(j, best)
}
