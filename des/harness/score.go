package harness

// The scoring rules: how an episode's trace, decisions and messages
// become the metrics of metrics.json. A live run and `des rescore` both
// feed a Tally with the trace's records and apply one Scorer to it, so a
// stored run rescored under unchanged rules gets its metrics.json back
// byte for byte (docs/rescore.md).

import (
	"math"
	"slices"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/suiterun"
)

// ScorerVersion names the scoring rules of this build (docs/metrics.md,
// "Scorer version"). Any change to what a metric of metrics.json means or
// how it is computed from a run's artifacts must bump it: runs scored
// under different versions are not comparable, and `coordbench report`
// says so when it is given both. TestScorerPin fails on a change that
// leaves it alone.
const ScorerVersion = "des-metrics/2"

// ScorerUnrecorded is the scorer version of a run or suite that records
// none (written before scorer versions were recorded).
const ScorerUnrecorded = suiterun.Unrecorded

// What G_vc counts of the power cap (Rules.PowerViolations).
const (
	// PowerSeconds counts the seconds of plant time over the cap, whatever
	// the instance's time unit (des-metrics/2).
	PowerSeconds = "seconds"
	// PowerUnits counts the time units of the instance's clock over the
	// cap (des-metrics/1: the count depends on the unit).
	PowerUnits = "units"
	// PowerEntries counts the entries into overshoot (the rule before
	// time units, kept as violations.power_overshoot_entries).
	PowerEntries = "entries"
)

// Rules are the choices of the scoring rules that a version fixes. The
// current rules are CurrentScorer's; others exist so that a stored run
// can be rescored under a variant (a test, or a study of a definition).
type Rules struct {
	// PowerViolations is the power term of G_vc: PowerSeconds,
	// PowerUnits or PowerEntries.
	PowerViolations string `json:"power_violations"`
	// Obligation is how far a truncated episode's unfinished jobs accrue
	// G_mk, G_td and G_ut: ObligationHorizon or ObligationEnd.
	Obligation string `json:"obligation"`
}

// How far an episode is held to its jobs (Rules.Obligation).
const (
	// ObligationHorizon: a truncated episode is scored to the instance's
	// horizon, as if the plant stood still until then: G_mk is the
	// horizon, unfinished jobs accrue tardiness (G_td) and overdue debt
	// (G_ut) to it (des-metrics/2).
	ObligationHorizon = "horizon"
	// ObligationEnd: scored to the time of truncation, and G_td counts
	// completed jobs only (des-metrics/1).
	ObligationEnd = "end"
)

// Scorer turns a Tally into metrics under Rules; Version names them.
type Scorer struct {
	Version string
	Rules   Rules
}

// CurrentScorer is the scorer of live runs: ScorerVersion and its rules.
func CurrentScorer() Scorer {
	return Scorer{Version: ScorerVersion, Rules: Rules{PowerViolations: PowerSeconds, Obligation: ObligationHorizon}}
}

// TallyHeader is what a Tally needs of the instance: the figures of the
// trace's episode_start line.
type TallyHeader struct {
	TimeUnitS      float64
	CapKW          float64
	CarbonKgPerKWh float64
	WIPCap         int
	Horizon        float64
}

// PlantHeader is the TallyHeader of plant p, as its trace's episode_start
// line writes it.
func PlantHeader(p *factory.Plant) TallyHeader {
	return TallyHeader{TimeUnitS: p.Inst.TimeUnitS, CapKW: p.CapKW(), CarbonKgPerKWh: p.Inst.Power.CarbonKgPerKWh, WIPCap: p.Inst.WIPCap, Horizon: p.Inst.Horizon}
}

// Tally accumulates what the scoring rules read of an episode's trace,
// one record at a time in trace order (Record), and of its decisions and
// messages (Coordination). The zero value is not ready: call Reset.
type Tally struct {
	hdr            TallyHeader
	jobs, totalOps int
	end            float64
	status         string

	completed, finished, released int
	tardiness                     float64
	blocking, wip                 int
	breakdowns, reroutes          int

	// power
	powerRecs        int
	lastKW, lastPowT float64
	energy, overKWh  float64
	overT            float64
	overEntries      int
	overUnits        slots // time units of the instance's clock
	overSeconds      slots // seconds of plant time

	// per job, by id: its due date, and whether it completed; relFrom is
	// the cell whose blocked queue it left for a re-route offer (-1: none),
	// unblocked whether its last record was a blocking_release.
	job []tallyJob
}

type tallyJob struct {
	due       float64
	done      bool
	unblocked bool
	relCell   int32 // the cell of its last blocking_release
	relFrom   int32
}

// Header is the header t was reset with.
func (t *Tally) Header() TallyHeader { return t.hdr }

// Reset readies t for a new episode of an instance with header h.
func (t *Tally) Reset(h TallyHeader) {
	*t = Tally{hdr: h, job: t.job[:0], overUnits: newSlots(1), overSeconds: newSlots(h.TimeUnitS)}
}

// Records feeds t with records in trace order (mode_selected lines carry
// nothing the rules read).
func (t *Tally) Records(recs []factory.Record) {
	for i := range recs {
		t.Record(&recs[i])
	}
}

// Record feeds t with one record; the fields it reads are those the
// trace line of the record carries (docs/trace-format.md).
func (t *Tally) Record(r *factory.Record) {
	switch r.Ev {
	case factory.EvEpisodeStart:
		t.jobs, t.totalOps = int(r.Job), int(r.Ops)
		// Room for every job at once (a read trace's count bounded: the
		// slice grows as jobs arrive beyond it).
		t.job = slices.Grow(t.job, min(max(t.jobs, 0), 1<<16))
	case factory.EvArrival:
		if int(r.Job) == len(t.job) { // jobs arrive in id order
			t.job = append(t.job, tallyJob{due: r.Due, relCell: -1, relFrom: -1})
		}
	case factory.EvRelease:
		if t.released-t.completed >= t.hdr.WIPCap {
			t.wip++
		}
		t.released++
	case factory.EvStageReleaseReady:
		if j := t.jobOf(r); j != nil {
			if j.unblocked { // a re-route offer: the job left its blocked queue
				j.relFrom = j.relCell
				t.reroutes++
			} else {
				j.relFrom = -1
			}
			j.unblocked = false
		}
	case factory.EvBlocked:
		if j := t.jobOf(r); j != nil {
			if j.relFrom != r.Cell { // kept on the cell it left for a re-route: no new incident
				t.blocking++
			}
			j.relFrom = -1
		}
	case factory.EvBlockingRelease, factory.EvQueueRelease: // a re-route offer follows a queue_release always, a blocking_release sometimes
		if j := t.jobOf(r); j != nil {
			j.unblocked, j.relCell = true, r.Cell
		}
	case factory.EvAdmission:
		if j := t.jobOf(r); j != nil {
			j.unblocked, j.relFrom = false, -1
		}
	case factory.EvFinish:
		t.finished++
	case factory.EvJobComplete:
		t.completed++
		if j := t.jobOf(r); j != nil {
			j.done = true
			if late := r.T - j.due; late > 0 {
				t.tardiness += late
			}
		}
	case factory.EvBreakdown:
		t.breakdowns++
	case factory.EvPowerChange:
		t.integrate(r.T)
		if cap := t.hdr.CapKW; r.KW > cap && (t.powerRecs == 0 || t.lastKW <= cap) {
			t.overEntries++
		}
		t.powerRecs++
		t.lastKW = r.KW
	case factory.EvEpisodeEnd:
		t.integrate(r.T)
		t.end, t.status = r.T, string(r.Status)
	}
}

func (t *Tally) jobOf(r *factory.Record) *tallyJob {
	if j := int(r.Job); j >= 0 && j < len(t.job) {
		return &t.job[j]
	}
	return nil
}

// integrate books the last traced power level over [lastPowT, at], the
// formula of docs/trace-format.md, summed in trace order.
func (t *Tally) integrate(at float64) {
	if t.powerRecs > 0 {
		if dt := at - t.lastPowT; dt > 0 {
			kw := t.lastKW
			h := dt * t.hdr.TimeUnitS / 3600
			t.energy += kw * h
			if kw > t.hdr.CapKW {
				t.overKWh += (kw - t.hdr.CapKW) * h
				t.overT += dt
				t.overUnits.add(t.lastPowT, at)
				t.overSeconds.add(t.lastPowT, at)
			}
		}
	}
	t.lastPowT = at
}

// slots counts, once each, the slots [k, k+1) of a clock that over-cap
// intervals meet, in trace order; the clock reads time × scale (scale
// is the time unit in seconds for a count in seconds).
type slots struct {
	scale float64
	n     int
	last  float64 // the last slot counted (-1 before any)
}

func newSlots(scale float64) slots { return slots{scale: scale, last: -1} }

// add counts the slots the interval [from, to) meets for a positive
// length: from floor(from) up to the slot that holds the instant just
// before to.
func (s *slots) add(from, to float64) {
	lo, hi := math.Floor(slotClock(from, s.scale)), math.Ceil(slotClock(to, s.scale))-1
	if lo <= s.last {
		lo = s.last + 1
	}
	if !(hi >= lo) { // none, or a time that is not a number
		return
	}
	s.n = int(min(float64(s.n)+(hi-lo+1), maxSlots))
	s.last = hi
}

// maxSlots bounds a slot count: a horizon of 1e12 time units of 1e12
// seconds each has more seconds than an int holds.
const maxSlots = 1 << 53

// slotClock is time t on a clock that reads t × scale, snapped to a
// whole number within a few rounding errors of it, so that a trace
// written in another time unit (its times divided by the unit) counts
// the same slots. With scale 1 it is t, unless t is within 4 ulps of a
// whole number (des/harness/check recomputes it with its own copy).
func slotClock(t, scale float64) float64 {
	x := t * scale
	if r := math.Round(x); math.Abs(x-r) <= 4*0x1p-52*math.Max(1, math.Abs(r)) {
		return r
	}
	return x
}

// Coordination is what the scoring rules read of decisions.jsonl and
// messages.jsonl: the decision steps, the decisions by source, the
// messages by type, and the work items forced to the plant-level
// fallback.
type Coordination struct {
	Steps, Forced int
	BySource      map[string]int
	ByType        map[string]int
}

// Score writes into m the metrics the rules define: the 15 primary
// metrics, the violations, and the secondary figures the artifacts
// determine (carbon, breakdowns, re-routes, jobs, decisions, messages,
// forced assignments). The rest of m (identity, time accounting,
// events, model calls) is left as it is.
func (s Scorer) Score(t *Tally, c Coordination, m *Metrics) {
	m.Status = t.status
	truncated := factory.Status(t.status).Truncated()
	// to is the end of the episode's obligation: its end, or for a
	// truncated episode under ObligationHorizon the horizon.
	to := t.end
	if s.Rules.Obligation == ObligationHorizon && truncated && t.hdr.Horizon > to {
		to = t.hdr.Horizon
	}
	m.GMk, m.GTd, m.GCj = to, t.tardiness, t.completed
	m.GEo, m.GEd, m.GEn = t.overKWh, t.overT, t.energy
	m.GDs, m.GFb, m.GLlm = c.Steps, c.BySource["fallback"], c.BySource["llm"]
	m.GDj, m.GDo = t.jobs-t.completed, t.totalOps-t.finished
	m.GUt = 0
	for i := range t.job { // arrived jobs, in id order; one that has not arrived is never overdue
		if j := &t.job[i]; !j.done {
			if late := to - j.due; late > 0 {
				m.GUt += late
			}
		}
	}
	if s.Rules.Obligation == ObligationHorizon {
		m.GTd += m.GUt // the unfinished jobs' tardiness so far
	}
	power := t.overSeconds.n
	switch s.Rules.PowerViolations {
	case PowerUnits:
		power = t.overUnits.n
	case PowerEntries:
		power = t.overEntries
	}
	m.Violations = Violations{PowerOvershootUnits: power, PowerOvershootEntries: t.overEntries, Blocking: t.blocking, WIP: t.wip}
	if s.Rules.PowerViolations == PowerEntries {
		m.Violations.PowerOvershootUnits = t.overUnits.n
	}
	m.GVc = power + t.blocking + t.wip
	m.GTr = 0
	if truncated {
		m.GTr = 1
	}
	m.GCm = 0
	for _, n := range c.ByType {
		m.GCm += n
	}
	sc := &m.Secondary
	sc.CarbonKg = t.energy * t.hdr.CarbonKgPerKWh
	sc.Breakdowns, sc.Reroutes, sc.Jobs = t.breakdowns, t.reroutes, t.jobs
	sc.DecisionsBySource, sc.MessagesByType, sc.ForcedAssignments = c.BySource, c.ByType, c.Forced
	sc.Decisions = 0
	for _, n := range c.BySource {
		sc.Decisions += n
	}
}

// V1Scorer is the scorer of des-metrics/1 (docs/rescore.md): a truncated
// episode scored to its end, G_vc's power term in time units of the
// instance's clock. `des rescore` does not use it; it is kept so that a
// study or a test can read a run under the old rules.
func V1Scorer() Scorer {
	return Scorer{Version: "des-metrics/1", Rules: Rules{PowerViolations: PowerUnits, Obligation: ObligationEnd}}
}
