// Package check re-checks a run directory written by `coordbench des run`
// from its files alone: it replays trace.jsonl against instance.json,
// verifies the physical rules of the plant (machines, routes,
// capabilities, buffers, breakdowns, transports, power), recomputes every
// metric the artifacts determine and compares it with metrics.json, and
// verifies decisions.jsonl, messages.jsonl and manifest.json. It never
// runs the engine and shares none of its accounting code, so a passing
// check is independent evidence that the engine did what
// docs/trace-format.md says. `coordbench des validate DIR` runs Dir.
package check

import (
	"fmt"
	"io"

	"github.com/coordbench/coordbench/des/factory"
)

// Check ids, as reported in Problem.Check; docs/trace-format.md lists
// what each one verifies.
const (
	ckFormat       = "format"
	ckHeader       = "header"
	ckTime         = "time-order"
	ckSequence     = "sequence"
	ckJobState     = "job-state"
	ckOverlap      = "machine-overlap"
	ckOpOrder      = "op-order"
	ckRouteCell    = "route-cell"
	ckNotInBuffer  = "not-in-buffer"
	ckCapability   = "capability"
	ckBuffer       = "buffer-overflow"
	ckBlocking     = "blocking"
	ckReroute      = "reroute"
	ckDown         = "down-activity"
	ckBreakdown    = "breakdown-repair"
	ckTransport    = "transport-time"
	ckSetup        = "setup"
	ckProcess      = "process-time"
	ckPowerLevel   = "power-level"
	ckPowerRecord  = "power-record"
	ckDispatch     = "dispatch"
	ckDispatchRule = "dispatch-rule"
	ckStatus       = "status"
	ckMetrics      = "metrics"
	ckDecisions    = "decisions"
	ckMessages     = "messages"
	ckManifest     = "manifest"
	ckInstance     = "instance"
	ckDue          = "due-date"
)

// Problem is one violated property.
type Problem struct {
	// Line is the trace.jsonl line it was found at, 0 if none applies.
	Line int `json:"line,omitempty"`
	// Check is the short id of the violated check, e.g. "machine-overlap".
	Check string `json:"check"`
	Msg   string `json:"msg"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("trace.jsonl:%d: [%s] %s", p.Line, p.Check, p.Msg)
	}
	return fmt.Sprintf("[%s] %s", p.Check, p.Msg)
}

// Stats counts what was checked.
type Stats struct {
	Instance string  `json:"instance"`
	Seed     uint64  `json:"seed"`
	Status   string  `json:"status"`
	End      float64 `json:"end"`
	// Records is the number of trace lines; Events counts them by type.
	Records int            `json:"records"`
	Events  map[string]int `json:"events"`
	// Jobs is the episode's job count (episode_start).
	Jobs        int `json:"jobs"`
	Arrived     int `json:"arrived"`
	Released    int `json:"released"`
	Completed   int `json:"completed"`
	OpsFinished int `json:"ops_finished"`
	Breakdowns  int `json:"breakdowns"`
	// Decisions and Messages are the line counts of decisions.jsonl and
	// messages.jsonl (Dir only).
	Decisions int `json:"decisions"`
	Messages  int `json:"messages"`
	// ReleaseTriggers counts the plant's release decisions (activations)
	// by trigger (Dir only).
	ReleaseTriggers map[string]int `json:"release_triggers,omitempty"`
}

// Report lists every violated property; OK() is true if none.
type Report struct {
	Dir      string    `json:"dir,omitempty"`
	Problems []Problem `json:"problems"`
	Stats    Stats     `json:"stats"`
}

// OK reports whether every check passed.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Trace checks a trace alone against its instance: everything but the
// metrics, decisions, messages and manifest cross-checks. The error is
// set only when r cannot be read or a line is not a JSON object.
func Trace(r io.Reader, inst *factory.Instance) (*Report, error) {
	rep := &Report{Stats: Stats{Events: map[string]int{}}}
	c := newChecker(rep, inst)
	if err := c.run(r); err != nil {
		return rep, err
	}
	return rep, nil
}
