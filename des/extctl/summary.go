package extctl

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
)

// Summary is what a controller.json records about an external runner.
type Summary struct {
	Command   string `json:"command"`
	Protocol  string `json:"protocol"`
	Runner    Ready  `json:"runner"`
	TimeoutMS int64  `json:"timeout_ms"`
	// Steps is the number of decision steps of the episode, Sent how
	// many went to the runner (none after it failed), Answered how many
	// it answered with a protocol line (usable or not).
	Steps    int     `json:"steps"`
	Sent     int     `json:"sent"`
	Answered int     `json:"answered"`
	Latency  Latency `json:"latency_ms"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
	// Counts is the number of violations by code.
	Counts     map[string]int `json:"violation_counts"`
	Violations []Violation    `json:"violations"`
	Failure    string         `json:"failure,omitempty"`
	// Proxy sums up the model calls made through the proxy, if any.
	Proxy *ProxyTotals `json:"llm_proxy,omitempty"`
}

// Summary sums up the runner's episode so far.
func (c *Controller) Summary() Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Summary{Command: c.cfg.Command, Protocol: Protocol, Runner: c.ready, TimeoutMS: c.cfg.Timeout.Milliseconds(),
		Steps: c.steps, Sent: c.sent, Answered: c.answered, Latency: LatencyOf(c.latencies), Counts: maps.Clone(c.counts),
		Violations: slices.Clone(c.violations)}
	for _, v := range c.violations {
		if v.Severity == SevError {
			s.Errors++
		} else {
			s.Warnings++
		}
	}
	if extra := sum(c.counts) - len(c.violations); extra > 0 { // beyond maxViolations
		s.Errors += extra
	}
	if s.Violations == nil {
		s.Violations = []Violation{}
	}
	if err := c.Failed(); err != nil {
		s.Failure = err.Error()
	}
	if p := c.cfg.Proxy; p != nil {
		t := p.Totals()
		s.Proxy = &t
	}
	return s
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteSummary writes s as indented JSON to path (controller.json).
func WriteSummary(path string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
