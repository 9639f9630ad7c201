package llmctl_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/llm"
)

// The published rule, reply by reply: what is taken, and how.
func TestParsePublished(t *testing.T) {
	legal := []int{0, 2, 3, 12}
	for _, tc := range []struct {
		raw  string
		want int
		how  string
	}{
		// 1. the exact contract
		{`{"action": 2}`, 2, "exact"},
		{" {\"action\":3}\n", 3, "exact"},
		// 2. one JSON value
		{`3`, 3, "bare_integer"},
		{"  12\n", 12, "bare_integer"},
		{`{"action": 2, "reason": "cell C05 is idle"}`, 2, "json"},
		{`{"reason": "option 3 is late", "action": 2}`, 2, "json"},
		{`{"action": "3"}`, 3, "json"},
		// 3. one code fence
		{"```json\n{\"action\": 2}\n```", 2, "fenced_json"},
		{"```\n{\"action\": 3, \"why\": \"fast\"}\n```", 3, "fenced_json"},
		{"```{\"action\": 0}```", 0, "fenced_json"},
		{"```\n12\n```", 12, "fenced_integer"},
		// 4a. the first JSON object with an action key
		{"Here is my answer:\n```json\n{\"action\": 2}\n```", 2, "in_text"},
		{`Option 3 is late, so {"action": 2}`, 2, "in_text"},
		{`{"action": 2} {"action": 3}`, 2, "in_text"},
		{`{"action": 3}}`, 3, "in_text"},
		{`{"decision": {"agent": "C05", "action": 12}}`, 12, "in_text"},
		{`{"note": "no action key here"} then {"action": 0}`, 0, "in_text"},
		// 4b. the first integer right after "action"
		{"I choose action 3.", 3, "in_text"},
		{"**Action:** 2 (option 3 is late)", 2, "in_text"},
		{"Best is action index 12; action 0 is worse.", 12, "in_text"},
		{`{"action": 2, "reason": "trunc`, 2, "in_text"},
		{`{'action': 3}`, 3, "in_text"},
		// 4c. the one legal index the text names
		{"I would pick 3.", 3, "in_text"},
		{"Cell C05 (option 2) is idle: 2.", 2, "in_text"},
		{"Of the 5 options, 3 is best.", 3, "in_text"},
		{"03", 3, "bare_integer"},
		{"pick 03 (that is, 3)", 3, "in_text"},
	} {
		got, how, err := llmctl.ParsePublished(tc.raw, legal)
		if err != nil || got != tc.want || how != tc.how {
			t.Errorf("%q: got %d %q %v, want %d %q", tc.raw, got, how, err, tc.want, tc.how)
		}
	}
}

// Replies the published rule refuses, and why.
func TestParsePublishedRefuses(t *testing.T) {
	legal := []int{0, 2, 3}
	for _, tc := range []struct{ raw, why string }{
		{"", "empty reply"},
		{" \n\t", "empty reply"},
		{"I would pick the second option because it is faster.", "no action index"},
		{`{"action": 9999}`, "illegal action index 9999"},
		{`9999`, "illegal action index 9999"},
		{`-1`, "illegal action index -1"},
		{`{"action": 1}`, "illegal action index 1"},
		{`{"action": 2.5}`, "not an integer"},
		{`{"action": 2.0}`, "not an integer"},
		{`{"action": 1e0}`, "not an integer"},
		{`{"action": "two"}`, "not an integer"},
		{`{"action": [2]}`, "not an integer"},
		{"```json\n{\"action\": 7}\n```", "illegal action index 7"},
		// the candidate decides: no falling back to another number
		{`{"action": 1, "else": 2}`, "illegal action index 1"},
		{"I choose action 1, or maybe 2.", "illegal action index 1"},
		{"action -2", "illegal action index -2"},
		{"Action 99999999999999999999999 please", "illegal action index"},
		// 4c: ambiguity and non-integers
		{"Option 0 is slow; I pick 2.", "ambiguous: the reply names several legal indices (0, 2)"},
		{"2 or 3", "ambiguous"},
		{"Take 2.5 units.", "no action index"},
		{"Cell C02 on area A3.", "no action index"},
		{"the 3rd one", "no action index"},
		{"-2", "illegal action index -2"},
		{"I choose 7.", "no legal action index in the reply (found 7)"},
		{strings.Repeat(" ", llmctl.MaxReplyBytes) + "2", "reply too long"},
	} {
		if got, how, err := llmctl.ParsePublished(tc.raw, legal); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%.60q: got %d %q %v, want an error with %q", tc.raw, got, how, err, tc.why)
		}
	}
}

// The two rules side by side: strict takes only "exact", published takes
// every form, and an unknown rule is an error.
func TestParseReplyWith(t *testing.T) {
	legal := []int{1, 4}
	for raw, how := range map[string]string{
		`{"action": 4}`:                     "exact",
		"```json\n{\"action\": 4}\n```":     "fenced_json",
		`{"action": 4, "reason": "faster"}`: "json",
		"4":                                 "bare_integer",
		"I choose action 4.":                "in_text",
	} {
		a, h, err := llmctl.ParseReplyWith(llmctl.ParsingPublished, raw, legal)
		if err != nil || a != 4 || h != how {
			t.Errorf("published %q: %d %q %v, want 4 %q", raw, a, h, err, how)
		}
		a, h, err = llmctl.ParseReplyWith(llmctl.ParsingStrict, raw, legal)
		if how == "exact" && (err != nil || a != 4 || h != "exact") || how != "exact" && err == nil {
			t.Errorf("strict %q: %d %q %v", raw, a, h, err)
		}
	}
	if _, _, err := llmctl.ParseReplyWith("lenient", "4", legal); err == nil {
		t.Error("an unknown rule was accepted")
	}
}

// Hostile replies at the size bound are read (in linear time) without
// panicking.
func TestParseHostileReplies(t *testing.T) {
	n := llmctl.MaxReplyBytes
	for _, raw := range []string{
		strings.Repeat("{", n),
		strings.Repeat(`{"a":`, n/5),
		strings.Repeat(`{"a":[`, n/6),
		strings.Repeat("```", n/3),
		strings.Repeat("action ", n/7),
		strings.Repeat("9", n),
		strings.Repeat("1 ", n/2),
		distinctNumbers(n), // each one illegal and new: collecting them must stay linear
		strings.Repeat("\xff", n),
	} {
		for _, rule := range llmctl.ReplyParsings() {
			if a, _, err := llmctl.ParseReplyWith(rule, raw, []int{0, 1}); err == nil && a != 1 {
				t.Errorf("%s: %.20q... read as %d", rule, raw, a)
			}
		}
	}
}

// distinctNumbers is about n bytes of distinct integers, none of them 0 or 1.
func distinctNumbers(n int) string {
	var b strings.Builder
	for i := 10000; b.Len() < n-8; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	return b.String()
}

type noClient struct{}

func (noClient) Complete(context.Context, []llm.Message) (*llm.Response, error) {
	return nil, errors.New("no model")
}

func TestSetReplyParsing(t *testing.T) {
	c, err := llmctl.New("graph", map[string]llmctl.Model{"": {Name: "m", Client: noClient{}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.ReplyParsing() != llmctl.ParsingPublished {
		t.Errorf("default rule %q", c.ReplyParsing())
	}
	if err := c.SetReplyParsing("strict"); err != nil || c.ReplyParsing() != "strict" {
		t.Errorf("strict: %v, %q", err, c.ReplyParsing())
	}
	if err := c.SetReplyParsing("loose"); err == nil {
		t.Error("an unknown rule was accepted")
	}
}

// checkReplyParsing holds for any reply: no panic; an accepted action is
// legal; strict accepts exactly what published reads as "exact", with the
// same action; how is one of the documented forms.
func checkReplyParsing(t *testing.T, raw string) {
	legal := []int{0, 1, 2, 7}
	sa, sh, serr := llmctl.ParseReplyWith(llmctl.ParsingStrict, raw, legal)
	pa, ph, perr := llmctl.ParseReplyWith(llmctl.ParsingPublished, raw, legal)
	if serr == nil && (!slices.Contains(legal, sa) || sh != llmctl.ParseExact) {
		t.Fatalf("strict accepted %q as %d %q", raw, sa, sh)
	}
	if perr == nil && !slices.Contains(legal, pa) {
		t.Fatalf("published accepted %q as %d", raw, pa)
	}
	if (serr == nil) != (perr == nil && ph == llmctl.ParseExact) || serr == nil && sa != pa {
		t.Fatalf("%q: strict %d %v, published %d %q %v", raw, sa, serr, pa, ph, perr)
	}
	if perr == nil && !slices.Contains([]string{"exact", "json", "bare_integer", "fenced_json", "fenced_integer", "in_text"}, ph) {
		t.Fatalf("%q: parse %q", raw, ph)
	}
	if perr != nil && (ph != "" || len(perr.Error()) > 200) {
		t.Fatalf("%q: refused with parse %q and a %d-byte error", raw, ph, len(perr.Error()))
	}
}
