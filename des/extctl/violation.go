package extctl

import (
	"fmt"
	"slices"
	"strconv"
)

// maxViolations is how many violations are kept in full; counts go on.
const maxViolations = 1000

// Severities of a violation: an error is a broken protocol rule; a
// warning is tolerated behaviour worth fixing (print debugging on stdout,
// slow answers).
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Violation codes.
const (
	VStart        = "start_failed"   // the runner could not be started
	VReady        = "no_ready"       // no valid ready message after hello
	VProtocol     = "protocol"       // ready named another protocol version
	VExited       = "exited"         // the runner exited (or closed stdout) during the episode
	VTimeout      = "timeout"        // no answer within the timeout
	VWrite        = "write_failed"   // a message could not be written to the runner
	VInvalidJSON  = "invalid_json"   // a protocol line is not valid JSON
	VBadReply     = "bad_reply"      // valid JSON, but not a reply (no actions, wrong type or step)
	VUnknownAgent = "unknown_agent"  // a reply names an agent that is not active
	VMissingAgent = "missing_agent"  // a reply leaves an active agent out
	VNotInt       = "not_an_integer" // an action is not an integer
	VIllegal      = "illegal_action" // an index out of range or masked
	VStale        = "stale_reply"    // a reply to an earlier step (skipped)
	VUnsolicited  = "unsolicited"    // a protocol line nobody asked for (skipped)
	VLongLine     = "line_too_long"  // a stdout line over MaxLine
	VBadNotes     = "bad_notes"      // reply notes malformed or naming inactive agents (ignored)
	VNoise        = "stdout_noise"   // a stdout line that is not a protocol message (skipped)
	VExitStatus   = "exit_status"    // non-zero exit after episode_end
	VNoExit       = "no_exit"        // still running Grace after episode_end
	VEndNotSent   = "end_not_sent"   // episode_end could not be delivered
	VSlow         = "slow"           // an answer slower than the checker's threshold
)

// Violation steps that are not decision steps.
const (
	StepHello   = -1 // before the first decision: hello and ready
	StepEpisode = -2 // the episode as a whole (slow answers)
	StepEnd     = -3 // after the last decision: episode_end and exit
)

// Violation is one protocol violation of a runner.
type Violation struct {
	// Step is the decision step, or StepHello, StepEpisode, StepEnd.
	Step     int    `json:"step"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`
}

func (v Violation) String() string {
	at := "step " + strconv.Itoa(v.Step)
	switch v.Step {
	case StepHello:
		at = "hello"
	case StepEpisode:
		at = "episode"
	case StepEnd:
		at = "episode_end"
	}
	return fmt.Sprintf("%s %s %s: %s", at, v.Severity, v.Code, v.Detail)
}

// violate records a violation.
func (c *Controller) violate(step int, code, sev, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[code]++
	if len(c.violations) < maxViolations {
		c.violations = append(c.violations, Violation{Step: step, Code: code, Severity: sev, Detail: detail})
	}
}

// Violations returns the violations so far (at most 1000; Summary counts
// them all).
func (c *Controller) Violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// quote shows up to n bytes of b as a Go string.
func quote(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}
