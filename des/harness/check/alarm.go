package check

import (
	"maps"
	"slices"
)

// Alarms that reach the plant (docs/paradigms.md, "Re-routing and
// alarms"): plant power going over the cap, a breakdown and a repair each
// open a release opportunity whose trigger survives the other changes of
// its instant until the plant answers, the most urgent first (power_alarm,
// breakdown, repair). From the trace the check knows, instant by instant,
// which alarms were raised and whether a release was possible when they
// were (backlog not empty, WIP under its cap: nothing later in the instant
// can make it impossible before the plant is asked; for power, the last
// crossing over the cap in the instant counts). From decisions.jsonl
// it knows the triggers of the release decisions. Both ways are checked:
// an alarm trigger names an alarm of its instant, and an alarm raised
// while a release was possible activates the plant with it (or a more
// urgent one) in its instant, unless power came back under the cap first.

// ckAlarm names the check.
const ckAlarm = "alarm"

// alarmFacts is what the trace says of one instant's alarms.
type alarmFacts struct {
	line                          int // the first alarm's trace line
	power, breakdown, repair      bool
	powerOpen, breakOpen, repOpen bool // raised while a release was possible
	recovered                     bool // power went back under the cap in the instant
}

// raised reports whether trigger trig, if it is an alarm, was raised in
// the instant f describes (true for a trigger that is no alarm).
func (f *alarmFacts) raised(trig string) bool {
	switch trig {
	case "power_alarm":
		return f.power
	case "breakdown":
		return f.breakdown
	case "repair":
		return f.repair
	}
	return true
}

// releasePossible reports whether the plant could release now.
func (c *checker) releasePossible() bool {
	backlog := c.nArrived - c.tot.released
	return backlog > 0 && c.tot.released-c.tot.completed < c.hdr.wipCap
}

// alarm notes an alarm of the current instant ("power_alarm", "breakdown",
// "repair" or "power_recovered") at trace line line.
func (c *checker) alarm(kind string, line int, t float64) {
	if c.alarms == nil {
		c.alarms = map[float64]*alarmFacts{}
	}
	f := c.alarms[t]
	if f == nil {
		f = &alarmFacts{line: line}
		c.alarms[t] = f
	}
	open := c.releasePossible()
	switch kind {
	case "power_alarm": // the last crossing of the instant is the one that must be answered
		f.power, f.powerOpen, f.recovered = true, open, false
	case "breakdown":
		f.breakdown, f.breakOpen = true, f.breakOpen || open
	case "repair":
		f.repair, f.repOpen = true, f.repOpen || open
	case "power_recovered":
		f.recovered = true
	}
}

// checkAlarms holds the release decisions' triggers to the trace's alarms
// and counts the release decisions by trigger (Stats.ReleaseTriggers).
func checkAlarms(audits []auditLine, alarms map[float64]*alarmFacts, stats *Stats, add func(check, format string, args ...any)) {
	triggers := map[float64]map[string]bool{}
	for i := range audits {
		a := &audits[i]
		if a.Kind != "release" || a.Payload == nil || a.Time == nil {
			continue
		}
		trig := a.Payload.Context.Trigger
		if stats.ReleaseTriggers == nil {
			stats.ReleaseTriggers = map[string]int{}
		}
		stats.ReleaseTriggers[trig]++
		if triggers[*a.Time] == nil {
			triggers[*a.Time] = map[string]bool{}
		}
		triggers[*a.Time][trig] = true
		f := alarms[*a.Time]
		if f == nil {
			f = &alarmFacts{} // no alarm in that instant
		}
		if !f.raised(trig) {
			add(ckAlarm, "decisions.jsonl:%d: a release decision with trigger %s at t=%v, but the trace has no %s then", i+1, trig, *a.Time, trig)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(alarms)) {
		f, got := alarms[t], triggers[t]
		switch {
		case f.powerOpen && !f.recovered && !got["power_alarm"]:
			add(ckAlarm, "trace.jsonl:%d: power went over the cap at t=%v with a release possible, and no release decision then has trigger power_alarm", f.line, t)
		case f.breakOpen && !got["power_alarm"] && !got["breakdown"]:
			add(ckAlarm, "trace.jsonl:%d: a breakdown at t=%v with a release possible, and no release decision then has trigger breakdown (or power_alarm)", f.line, t)
		case f.repOpen && !got["power_alarm"] && !got["breakdown"] && !got["repair"]:
			add(ckAlarm, "trace.jsonl:%d: a repair at t=%v with a release possible, and no release decision then has trigger repair (or a more urgent alarm)", f.line, t)
		}
	}
}
