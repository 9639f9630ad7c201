package extctl

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// replyDecision is step 3 with two active agents: the plant (actions 0
// and 2 legal, 1 masked) and a cell (0 and 1 legal).
func replyDecision() *coord.Decision {
	return &coord.Decision{Step: 3, ActiveAgents: map[string]*coord.View{
		"plant":   {AgentID: "plant", Kind: "route", LegalActions: []int{0, 2}, ActionMask: []bool{true, false, true}},
		"cell:c1": {AgentID: "cell:c1", Kind: "bid", LegalActions: []int{0, 1}, ActionMask: []bool{true, true}},
	}}
}

// parseCodes are the violation codes parseReply can report; the other
// codes come from the process (fault_test.go drives them with a runner).
var parseCodes = []string{VInvalidJSON, VBadReply, VStale, VUnknownAgent, VMissingAgent, VNotInt, VIllegal, VBadNotes}

// Every reply rule, without a process: the codes (in order), the actions
// kept, and which agents' notes carry an error.
func TestParseReply(t *testing.T) {
	both := map[string]int{"plant": 2, "cell:c1": 1}
	all := []string{"cell:c1", "plant"}
	long := `{"actions":` + strings.Repeat(" ", untrusted.MaxReply)
	cases := []struct {
		name    string
		line    string
		codes   []string
		actions map[string]int // nil: the reply is unusable as a whole
		failed  []string       // agents whose note has an Error
		stale   bool
	}{
		{name: "valid", line: `{"step":3,"actions":{"plant":2,"cell:c1":1}}`, actions: both},
		{name: "typed", line: `{"type":"actions","step":3,"actions":{"plant":2,"cell:c1":1}}`, actions: both},
		{name: "no step", line: `{"actions":{"plant":2,"cell:c1":1}}`, actions: both},
		{name: "null step", line: `{"step":null,"actions":{"plant":2,"cell:c1":1}}`, actions: both},
		{name: "invalid JSON", line: `{"actions":{"plant":2`, codes: []string{VInvalidJSON}, failed: all},
		{name: "not an object", line: `[1,2]`, codes: []string{VInvalidJSON}, failed: all},
		{name: "long", line: long, codes: []string{VInvalidJSON}, failed: all},
		{name: "other type", line: `{"type":"ready"}`, codes: []string{VBadReply}, failed: all},
		{name: "type not a string", line: `{"type":1,"actions":{"plant":2,"cell:c1":1}}`, codes: []string{VBadReply}, failed: all},
		{name: "step not an integer", line: `{"step":"3","actions":{"plant":2,"cell:c1":1}}`, codes: []string{VBadReply}, failed: all},
		{name: "later step", line: `{"step":4,"actions":{"plant":2,"cell:c1":1}}`, codes: []string{VBadReply}, failed: all},
		{name: "stale", line: `{"step":2,"actions":{"plant":0}}`, codes: []string{VStale}, stale: true},
		{name: "no actions", line: `{"step":3}`, codes: []string{VBadReply}, failed: all},
		{name: "null actions", line: `{"actions":null}`, codes: []string{VBadReply}, failed: all},
		{name: "actions not an object", line: `{"actions":[2,1]}`, codes: []string{VBadReply}, failed: all},
		{name: "unknown agent", line: `{"actions":{"plant":2,"cell:c1":1,"area:a1":0}}`, codes: []string{VUnknownAgent}, failed: all},
		{name: "unknown agents", line: `{"actions":{"area:a2":0,"area:a1":0}}`, codes: []string{VUnknownAgent}, failed: all},
		{name: "missing agent", line: `{"actions":{"plant":2}}`, codes: []string{VMissingAgent},
			actions: map[string]int{"plant": 2}, failed: []string{"cell:c1"}},
		{name: "empty actions", line: `{"actions":{}}`, codes: []string{VMissingAgent, VMissingAgent}, actions: map[string]int{}, failed: all},
		{name: "string action", line: `{"actions":{"plant":"2","cell:c1":1}}`, codes: []string{VNotInt},
			actions: map[string]int{"cell:c1": 1}, failed: []string{"plant"}},
		{name: "fractional action", line: `{"actions":{"plant":2,"cell:c1":0.5}}`, codes: []string{VNotInt},
			actions: map[string]int{"plant": 2}, failed: []string{"cell:c1"}},
		{name: "masked action", line: `{"actions":{"plant":1,"cell:c1":1}}`, codes: []string{VIllegal},
			actions: map[string]int{"plant": 1, "cell:c1": 1}},
		{name: "out of range", line: `{"actions":{"plant":2,"cell:c1":-1}}`, codes: []string{VIllegal},
			actions: map[string]int{"plant": 2, "cell:c1": -1}},
		{name: "malformed notes", line: `{"actions":{"plant":2,"cell:c1":1},"notes":[1]}`, codes: []string{VBadNotes}, actions: both},
		{name: "notes for an inactive agent", line: `{"actions":{"plant":2,"cell:c1":1},"notes":{"area:a1":{"calls":1}}}`,
			codes: []string{VBadNotes}, actions: both},
		{name: "negative counts in notes", line: `{"actions":{"plant":2,"cell:c1":1},"notes":{"plant":{"calls":-329,"prompt_tokens":5}}}`,
			codes: []string{VBadNotes}, actions: both},
		{name: "notes first", line: `{"actions":{"plant":2},"notes":{"area:a1":{}}}`, codes: []string{VBadNotes, VMissingAgent},
			actions: map[string]int{"plant": 2}, failed: []string{"cell:c1"}},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := parseReply(replyDecision(), []byte(tc.line), 1500*time.Microsecond)
			var codes []string
			for _, v := range r.violations {
				codes = append(codes, v.Code)
				seen[v.Code] = true
				if v.Step != 3 || v.Detail == "" {
					t.Errorf("violation %+v: want step 3 and a detail", v)
				}
				sev := SevError
				if v.Code == VBadNotes {
					sev = SevWarning
				}
				if v.Severity != sev {
					t.Errorf("violation %+v: severity %s, want %s", v, v.Severity, sev)
				}
			}
			if !slices.Equal(codes, tc.codes) {
				t.Errorf("codes %v, want %v", codes, tc.codes)
			}
			if r.stale != tc.stale {
				t.Errorf("stale %v, want %v", r.stale, tc.stale)
			}
			if !reflect.DeepEqual(r.actions, tc.actions) {
				t.Errorf("actions %v, want %v", r.actions, tc.actions)
			}
			if tc.stale {
				if r.notes != nil {
					t.Errorf("a stale reply noted %v", r.notes)
				}
				return
			}
			if got := slices.Sorted(maps.Keys(r.notes)); !slices.Equal(got, []string{"cell:c1", "plant"}) {
				t.Fatalf("notes for %v, want every active agent", got)
			}
			want := untrusted.Clip(tc.line, untrusted.MaxReply)
			var failed []string
			for _, id := range slices.Sorted(maps.Keys(r.notes)) {
				n := r.notes[id]
				if n.Error != "" {
					failed = append(failed, id)
				}
				if n.LatencyMS != 1.5 {
					t.Errorf("%s: latency %v ms, want 1.5", id, n.LatencyMS)
				}
				if got := (untrusted.Cut{Text: n.Raw, Truncated: n.RawTruncated, Len: n.RawLen, SHA256: n.RawSHA256}); got != want {
					t.Errorf("%s: raw %.60q (len %d, cut %v), want the reply (cut at %d bytes)", id, n.Raw, n.RawLen, n.RawTruncated, untrusted.MaxReply)
				}
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("notes with an error: %v, want %v", failed, tc.failed)
			}
		})
	}
	for _, code := range parseCodes {
		if !seen[code] {
			t.Errorf("no case reports %s", code)
		}
	}
}

// The runner's own notes reach the agents' audit notes.
func TestParseReplyNotes(t *testing.T) {
	r := parseReply(replyDecision(), []byte(`{"actions":{"plant":2,"cell:c1":1},
		"notes":{"plant":{"model":"m1","prompt_tokens":12,"completion_tokens":3,"prompt_cached_tokens":8,"calls":2,"cached":true}}}`), time.Millisecond)
	want := coord.AgentNote{Model: "m1", PromptTokens: 12, CompletionTokens: 3, PromptCachedTokens: 8, Calls: 2, Cached: true, LatencyMS: 1}
	got := r.notes["plant"]
	got.Raw = ""
	if got != want {
		t.Errorf("plant note %+v, want %+v", got, want)
	}
	// A runner's prompt-cache hits are kept within [0, prompt_tokens].
	for cached, want := range map[string]int64{"-4": 0, "13": 12, "99999999999": 12} {
		r := parseReply(replyDecision(), []byte(`{"actions":{"plant":2,"cell:c1":1},
			"notes":{"plant":{"prompt_tokens":12,"prompt_cached_tokens":`+cached+`}}}`), 0)
		if got := r.notes["plant"].PromptCachedTokens; got != want {
			t.Errorf("prompt_cached_tokens %s: noted %d, want %d", cached, got, want)
		}
	}
	if n := r.notes["cell:c1"]; n.Model != "" || n.Calls != 0 || n.Error != "" {
		t.Errorf("cell note %+v, want none of the plant's", n)
	}
	// Counts no model call gives are not noted: they would lower (or
	// overflow) the run's usage and its cost.
	for _, bad := range []string{`"calls":-329`, `"prompt_tokens":-1`, `"completion_tokens":-7`, `"calls":1,"prompt_tokens":99999999999999999`} {
		r := parseReply(replyDecision(), []byte(`{"actions":{"plant":2,"cell:c1":1},"notes":{"plant":{"model":"m1","completion_tokens":3,`+bad+`}}}`), 0)
		if n := r.notes["plant"]; n.Calls != 0 || n.PromptTokens != 0 || n.CompletionTokens != 0 || n.Model != "" {
			t.Errorf("%s: noted %+v, want the note ignored", bad, n)
		}
		if len(r.violations) != 1 || r.violations[0].Code != VBadNotes || !strings.Contains(r.violations[0].Detail, "plant ignored") {
			t.Errorf("%s: violations %+v, want one bad_notes for plant", bad, r.violations)
		}
	}
}

// What a message repeats of a reply is bounded, however long the reply:
// the message goes into every agent's note and into the violations.
func TestParseReplyEchoBounded(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	many := `{"actions":{`
	for i := range 50 {
		many += `"` + big[:i+1] + `":0,`
	}
	many += `"plant":2}}`
	for _, line := range []string{
		`{"type":"` + big + `","actions":{}}`,
		`{"step":"` + big + `","actions":{}}`,
		`{"actions":{"` + big + `":0}}`,
		many,
		`{"actions":{"plant":2,"cell:c1":1},"notes":{"` + big + `":{}}}`,
	} {
		r := parseReply(replyDecision(), []byte(line), 0)
		if len(r.violations) == 0 {
			t.Fatalf("%.40s…: no violation", line)
		}
		for _, v := range r.violations {
			if len(v.Detail) > 2000 {
				t.Errorf("%.40s…: a violation detail of %d bytes", line, len(v.Detail))
			}
		}
		for id, n := range r.notes {
			if len(n.Error) > 2000 {
				t.Errorf("%.40s…: %s's note error of %d bytes", line, id, len(n.Error))
			}
		}
	}
}
