package jetstream

import (
	"fmt"
	"regexp"
	"strings"
)

// Bucket is the key-value bucket that holds the experiments being served
// (key "exp.<id>": the Spec) and which one is current (key "current").
const Bucket = "coordbench_sweeps"

// ConsumerName is the durable pull consumer every worker shares: a
// work-queue stream allows one unfiltered consumer.
const ConsumerName = "workers"

// caseHeader carries the case id of a case message.
const caseHeader = "Coordbench-Case"

// Size bounds of what crosses NATS.
const (
	// MaxSpecSize bounds a Spec in the key-value bucket (the experiment
	// file is at most sweep.MaxFileSize).
	MaxSpecSize = 2 << 20
	// maxSmallMsg bounds case, result, event and permit messages.
	maxSmallMsg = 64 << 10
	// DefaultMaxCaseBytes bounds one case's stored artifacts.
	DefaultMaxCaseBytes = 256 << 20
	// maxCaseFiles bounds the files of one stored case.
	maxCaseFiles = 10_000
	// maxObjectName bounds an object name: a case id (caseIDRE), a dot
	// and a run id (runIDRE).
	maxObjectName = 255 + 1 + 32
	// maxClaimSize bounds a value of the claims bucket: an object name.
	maxClaimSize = 512
)

// names are the NATS names of one experiment.
type names struct{ id string }

var idRE = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

func namesOf(id string) (names, error) {
	if !idRE.MatchString(id) {
		return names{}, fmt.Errorf("experiment id %q: want hex digits", id)
	}
	return names{id: id}, nil
}

func (n names) short() string         { return n.id[:16] }
func (n names) caseStream() string    { return "CB_CASES_" + n.short() }
func (n names) caseSubject() string   { return "cb.case." + n.id }
func (n names) resultStream() string  { return "CB_RESULTS_" + n.short() }
func (n names) resultSubject() string { return "cb.result." + n.id }
func (n names) deadStream() string    { return "CB_DEAD_" + n.short() }
func (n names) objectBucket() string  { return "cb_cases_" + n.short() }
func (n names) claimBucket() string   { return "cb_claims_" + n.short() }
func (n names) eventSubject() string  { return "cb.event." + n.id }
func (n names) controlSubject() string {
	return "cb.control." + n.id
}
func (n names) permitSubject(verb string) string { return "cb.permit." + n.id + "." + verb }
func (n names) specKey() string                  { return "exp." + n.id }

// deadSubject is the server's advisory subject for a message of the case
// stream that reached MaxDeliver: the dead-letter subject.
func (n names) deadSubject() string {
	return "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + n.caseStream() + "." + ConsumerName
}

// caseIDRE is what a case id may look like: it names a directory and an
// object, so no separators and no leading dot.
var caseIDRE = regexp.MustCompile(`^[A-Za-z0-9_=+,@-][A-Za-z0-9._=+,@-]{0,254}$`)

// checkCaseID refuses a case id that could not safely name a directory.
func checkCaseID(id string) error {
	if !caseIDRE.MatchString(id) {
		return fmt.Errorf("case id %q: not a case id (letters, digits and ._=+,@- only)", id)
	}
	return nil
}

// claimKey is the key of case id's claim in the claims bucket: the id
// with every character but letters, digits, - and = written as _XX (its
// hex byte), so that any case id is a valid key (no '.', which separates
// subject tokens, nor the + , @ a key may not hold) and no two ids share
// a key.
func claimKey(id string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '=':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// EventSubject is the core NATS subject on which workers announce the
// cases they start (Event) for experiment id.
func EventSubject(id string) string { return names{id: id}.eventSubject() }
