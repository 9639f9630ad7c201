package extctl

import (
	"maps"
	"slices"
	"testing"

	"github.com/coordbench/coordbench/internal/untrusted"
)

// maxMessage bounds what a violation or a note's error repeats of a
// reply, however long the reply (TestParseReplyEchoBounded's bound).
const maxMessage = 2000

// FuzzParseReply reads arbitrary lines as the reply to replyDecision:
// parseReply never panics; a stale line is only that (one VStale
// violation, no actions, no notes); any other line notes every active
// agent, once, with the raw reply cut at untrusted.MaxReply; actions
// are kept only for active agents, and a reply unusable as a whole
// (actions nil) carries an error violation saying why; every violation is
// at the decision's step with a known code, and what the messages repeat
// of the line is bounded. Seeds: testdata/fuzz/FuzzParseReply.
func FuzzParseReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		d := replyDecision()
		r := parseReply(d, line, 0)
		for _, v := range r.violations {
			if v.Step != d.Step || !slices.Contains(parseCodes, v.Code) || v.Detail == "" || len(v.Detail) > maxMessage {
				t.Fatalf("%q: violation %.200q (detail %d bytes): want step %d, a parse code and a bounded detail", line, v, len(v.Detail), d.Step)
			}
			if (v.Severity == SevWarning) != (v.Code == VBadNotes) {
				t.Fatalf("%q: violation %s with severity %s", line, v.Code, v.Severity)
			}
		}
		if r.stale {
			if len(r.violations) != 1 || r.violations[0].Code != VStale || r.actions != nil || r.notes != nil {
				t.Fatalf("%q: stale, with violations %v, actions %v, notes %v", line, r.violations, r.actions, r.notes)
			}
			return
		}
		ids := slices.Sorted(maps.Keys(d.ActiveAgents))
		if got := slices.Sorted(maps.Keys(r.notes)); !slices.Equal(got, ids) {
			t.Fatalf("%q: notes for %v, want %v", line, got, ids)
		}
		want := untrusted.Clip(string(line), untrusted.MaxReply)
		for id, n := range r.notes {
			if got := (untrusted.Cut{Text: n.Raw, Truncated: n.RawTruncated, Len: n.RawLen, SHA256: n.RawSHA256}); got != want || len(n.Error) > maxMessage {
				t.Fatalf("%q: %s's note keeps %d bytes of raw reply (cut %v) and an error of %d bytes; want the reply cut at %d bytes", line, id, len(n.Raw), n.RawTruncated, len(n.Error), untrusted.MaxReply)
			}
		}
		if r.actions == nil {
			if len(r.violations) == 0 || r.violations[0].Severity != SevError {
				t.Fatalf("%q: unusable reply with violations %v, want an error first", line, r.violations)
			}
			for id, n := range r.notes {
				if n.Error == "" {
					t.Fatalf("%q: unusable reply, but %s's note has no error", line, id)
				}
			}
			return
		}
		for id := range r.actions {
			if _, ok := d.ActiveAgents[id]; !ok {
				t.Fatalf("%q: an action for the inactive agent %q", line, id)
			}
		}
		for _, id := range ids {
			if _, ok := r.actions[id]; !ok && r.notes[id].Error == "" {
				t.Fatalf("%q: no action for %s and no error in its note", line, id)
			}
		}
	})
}
