package jetstream

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/sweep"
)

// Result is what a worker reports of one case, after storing it.
type Result struct {
	Case   string `json:"case"`
	Worker string `json:"worker"`
	// Status is StatusDone or StatusFailed.
	Status string `json:"status"`
	// Err is a failed case's error.
	Err string `json:"err,omitempty"`
	// Kept: the case was stored already (by an earlier delivery) and was
	// not run again.
	Kept bool `json:"kept,omitempty"`
	// Delivery is which delivery of the case message this was (1 first).
	Delivery uint64 `json:"delivery"`
	// Attempt is the usage of a run that did not give the case's result
	// (it failed, was handed back, or another delivery's was kept), for
	// the experiment's ledger of discarded attempts.
	Attempt *sweep.Attempt `json:"attempt,omitempty"`
	// Object, on a case handed back after storing it in the object store
	// failed, names the object of its run when the worker could not tell
	// whether its claim had been written: if the case's claim names it,
	// the run was kept and Attempt is not recorded.
	Object string `json:"object,omitempty"`
}

// Case outcomes.
const (
	StatusDone   = "done"
	StatusFailed = "failed"
	StatusDead   = "dead_letter"
	// StatusReturned: the worker handed the case back (NAK) after a run
	// that spent model calls; the result only carries its Attempt.
	StatusReturned = "returned"
)

// Event is a worker's notice that it started a case (core NATS, best
// effort: for progress, `sweep status`, and tests that kill the worker).
type Event struct {
	Kind     string `json:"kind"` // "start"
	Case     string `json:"case"`
	Worker   string `json:"worker"`
	PID      int    `json:"pid"`
	Delivery uint64 `json:"delivery"`
}

// control is the coordinator's broadcast to workers.
type control struct {
	Kind string `json:"kind"` // "done": every case has an outcome; workers exit
}

// DeadCase is a dead-lettered case, one line of dead_letter.jsonl.
type DeadCase struct {
	Case       string `json:"case"`
	Deliveries uint64 `json:"deliveries"`
	StreamSeq  uint64 `json:"stream_seq"`
}

// advisory is the server's max-deliveries advisory.
type advisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// decode reads a small JSON message into v, refusing oversized ones.
func decode(data []byte, v any) error {
	if len(data) > maxSmallMsg {
		return fmt.Errorf("message of %d bytes: more than %d", len(data), maxSmallMsg)
	}
	return json.NewDecoder(bytes.NewReader(data)).Decode(v)
}

// encode is v as JSON (of strings and numbers: cannot fail), cut to the
// small-message bound by the callers' fields (errors are truncated).
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	c := untrusted.Clip(s, n)
	if !c.Truncated {
		return s
	}
	return c.Text + "…"
}

// Bounds on the text a worker reports (anyone who can publish on the NATS
// server can send a result or an event).
const (
	maxWorkerName = 200
	maxErrText    = 4000
	maxWorkers    = 1000 // distinct worker names kept for the status
)

// peerText is text from a peer as serve keeps and prints it: at most n
// bytes (on a UTF-8 boundary), with terminal control characters made
// harmless.
func peerText(s string, n int) string { return untrusted.Printable(truncate(s, n)) }
