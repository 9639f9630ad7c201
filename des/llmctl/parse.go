package llmctl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Reply-parsing rules (--reply-parsing): how a model's reply becomes an
// action. The prompt is the same under both; only the reading differs.
const (
	// ParsingPublished accepts a reply when a legal integer action can be
	// read from it, as the DESBench paper does ("accepted only if it yields
	// a legal integer action from legal_actions"): the exact contract, JSON
	// with other keys, a bare integer, either inside a code fence, or an
	// action named in prose. See ParsePublished for the precise rule.
	ParsingPublished = "published"
	// ParsingStrict accepts only the exact contract {"action": n}
	// (ParseReply).
	ParsingStrict = "strict"
)

// replyParsings backs ReplyParsings.
var replyParsings = []string{ParsingPublished, ParsingStrict}

// ReplyParsings returns the rules, the default first.
func ReplyParsings() []string { return slices.Clone(replyParsings) }

// How an accepted reply was read: the audit's "parse" (AgentNote.Parse).
const (
	ParseExact         = "exact"          // exactly the contract {"action": n}: what strict accepts
	ParseJSON          = "json"           // one JSON object with an action key and other keys
	ParseBareInteger   = "bare_integer"   // one integer and nothing else
	ParseFencedJSON    = "fenced_json"    // one code fence holding a JSON object with an action key
	ParseFencedInteger = "fenced_integer" // one code fence holding one integer
	ParseInText        = "in_text"        // read from prose (an embedded object, "action 3", or the one legal index named)
)

// MaxReplyBytes bounds the reply that is read at all: a longer one is
// refused unread (the contract needs a dozen bytes).
const MaxReplyBytes = 64 << 10

// maxObjectTries bounds how many "{" of a prose reply are tried as the
// start of a JSON object, so a hostile reply costs linear time.
const maxObjectTries = 32

// ParseReplyWith reads raw under rule (ParsingStrict or ParsingPublished;
// "" is published): the action, how it was read (a Parse* constant), or
// why the reply is unusable. It never panics, whatever raw holds.
func ParseReplyWith(rule, raw string, legal []int) (action int, how string, err error) {
	if len(raw) > MaxReplyBytes {
		return 0, "", fmt.Errorf("reply too long (%d bytes, limit %d)", len(raw), MaxReplyBytes)
	}
	switch rule {
	case ParsingStrict:
		a, err := ParseReply(raw, legal)
		if err != nil {
			return 0, "", err
		}
		return a, ParseExact, nil
	case ParsingPublished, "":
		return ParsePublished(raw, legal)
	}
	return 0, "", checkReplyParsing(rule)
}

// checkReplyParsing says whether rule is one of ReplyParsings.
func checkReplyParsing(rule string) error {
	if !slices.Contains(replyParsings, rule) {
		return fmt.Errorf("unknown reply parsing %q (want published or strict)", rule)
	}
	return nil
}

// ParsePublished reads a legal integer action from raw, trying in order
// (surrounding whitespace never matters):
//
//  1. the exact contract (ParseReply): "exact";
//  2. the whole reply as one JSON value: an integer ("bare_integer"), or
//     an object with an "action" key ("json"), whose value must be an
//     integer literal in legal;
//  3. the whole reply as one code fence (``` with an optional language
//     tag) holding what step 2 accepts: "fenced_integer", "fenced_json";
//  4. otherwise, in the text ("in_text"): (a) the first JSON object that
//     has an "action" key (objects nest: the first "{" that opens one
//     wins); else (b) the first integer written right after the word
//     "action" ("action 3", "Action: 3", "action index 3", `"action": 3`);
//     else (c) the legal index the text names, if it names exactly one:
//     standalone integers only (not in "C05", "2.5", "-1", "3rd"), and
//     none if two different legal indices appear (ambiguous).
//
// The first step that finds a candidate decides: if that candidate is not
// an integer in legal, the reply is refused (no other number in it is
// tried instead). A JSON "action" may be an integer or a string holding
// exactly one ("3"); a fraction (2.0, 1e0), other strings and null are not
// integers (null counts as no action key). Replies over MaxReplyBytes are
// refused.
func ParsePublished(raw string, legal []int) (action int, how string, err error) {
	if len(raw) > MaxReplyBytes {
		return 0, "", fmt.Errorf("reply too long (%d bytes, limit %d)", len(raw), MaxReplyBytes)
	}
	if a, err := ParseReply(raw, legal); err == nil {
		return a, ParseExact, nil
	}
	s := strings.TrimSpace(raw)
	if s == "" {
		return 0, "", fmt.Errorf("empty reply")
	}
	if a, how, err, ok := wholeValue(s, legal); ok {
		return accepted(a, how, err)
	}
	if body, ok := fenceBody(s); ok {
		if a, how, err, ok := wholeValue(body, legal); ok {
			return accepted(a, fenced[how], err)
		}
	}
	a, err := inText(s, legal)
	return accepted(a, ParseInText, err)
}

// fenced names the forms of step 2 inside a code fence.
var fenced = map[string]string{ParseBareInteger: ParseFencedInteger, ParseJSON: ParseFencedJSON}

// accepted is (a, how) or, on err, the refusal.
func accepted(a int, how string, err error) (int, string, error) {
	if err != nil {
		return 0, "", err
	}
	return a, how, nil
}

// wholeValue reads s (trimmed) as one integer or one JSON object with an
// action key; ok is false when s is neither, so the next step may try.
func wholeValue(s string, legal []int) (action int, how string, err error, ok bool) {
	if isDigits(strings.TrimPrefix(s, "-")) {
		a, err := legalIndex(s, legal)
		return a, ParseBareInteger, err, true
	}
	if !strings.HasPrefix(s, "{") {
		return 0, "", nil, false
	}
	lit, end, found := actionOf(s)
	if !found || end != len(s) {
		return 0, "", nil, false
	}
	a, err := actionValue(lit, legal)
	return a, ParseJSON, err, true
}

// actionOf decodes the JSON object at the start of s and returns its
// "action" value (matched as encoding/json matches struct fields, as the
// strict parser does) and where the object ends; found is false if no
// object starts there or it has no (non-null) action.
func actionOf(s string) (lit string, end int, found bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var r struct {
		Action json.RawMessage `json:"action"`
	}
	if err := dec.Decode(&r); err != nil {
		return "", 0, false
	}
	if len(r.Action) == 0 || string(r.Action) == "null" {
		return "", 0, false
	}
	return string(r.Action), int(dec.InputOffset()), true
}

// actionValue checks a JSON action value: an integer literal, or a
// string holding exactly one ("3"), in legal.
func actionValue(lit string, legal []int) (int, error) {
	n := lit
	var str string
	if strings.HasPrefix(lit, `"`) && json.Unmarshal([]byte(lit), &str) == nil {
		n = str
	}
	if !isDigits(strings.TrimPrefix(n, "-")) {
		return 0, fmt.Errorf("action %s is not an integer", clip(lit))
	}
	return legalIndex(n, legal)
}

// legalIndex returns the index an integer literal names, if it is legal.
func legalIndex(lit string, legal []int) (int, error) {
	n, err := strconv.ParseInt(lit, 10, 64)
	if err == nil {
		for _, i := range legal {
			if int64(i) == n {
				return i, nil
			}
		}
	}
	return 0, &IllegalIndexError{Lit: clip(lit), Index: n, Integer: err == nil}
}

// IllegalIndexError is a reply that names an index which is not a legal
// action: the controller adds why, when the payload says (an escalate
// not offered, coord.WithheldEscalation).
type IllegalIndexError struct {
	Lit     string // the index as the reply wrote it, clipped
	Index   int64  // its value, if Integer
	Integer bool
}

func (e *IllegalIndexError) Error() string { return "illegal action index " + e.Lit }

// fenceBody returns the content of s if s is exactly one code fence:
// ``` , an optional language tag line, the body, ```.
func fenceBody(s string) (string, bool) {
	const f = "```"
	if len(s) < 2*len(f) || !strings.HasPrefix(s, f) || !strings.HasSuffix(s, f) {
		return "", false
	}
	body := s[len(f) : len(s)-len(f)]
	if tag, rest, ok := strings.Cut(body, "\n"); ok && isTag(strings.TrimSpace(tag)) {
		body = rest
	}
	if strings.Contains(body, f) {
		return "", false
	}
	return strings.TrimSpace(body), true
}

// isTag reports whether s can be a fence's language tag ("json", "").
func isTag(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '-' && c != '+' && c != '.' {
			return false
		}
	}
	return true
}

// actionWord finds "action" followed by an integer: separators, an
// optional "index"/"idx"/"number", separators, then the digits.
var actionWord = regexp.MustCompile(`(?i)\baction\b[\s"'*:=#]*(?:(?:index|idx|number)\b[\s"'*:=#]*)?(-?[0-9]+)`)

// inText applies step 4 of ParsePublished to s.
func inText(s string, legal []int) (int, error) {
	// (a) the first JSON object with an action key.
	tries := 0
	for i := 0; i < len(s) && tries < maxObjectTries; i++ {
		if s[i] != '{' {
			continue
		}
		if rest := strings.TrimLeft(s[i+1:], " \t\r\n"); !strings.HasPrefix(rest, `"`) {
			continue // not an object with keys: not worth a decode
		}
		tries++
		if lit, _, found := actionOf(s[i:]); found {
			return actionValue(lit, legal)
		}
	}
	// (b) the first integer right after the word "action".
	for _, m := range actionWord.FindAllStringSubmatchIndex(s, -1) {
		if lo, hi := m[2], m[3]; standaloneEnd(s, hi) {
			return legalIndex(s[lo:hi], legal)
		}
	}
	// (c) the one legal index the text names.
	var found, other []string
	for _, lit := range integers(s) {
		if _, err := legalIndex(lit, legal); err != nil {
			if len(other) <= maxQuoted { // only the message quotes them: a reply of distinct numbers stays linear
				other = appendNew(other, lit)
			}
		} else {
			found = appendNew(found, noLeadingZeros(lit)) // "03" and "3" name one index
		}
	}
	switch {
	case len(found) == 1:
		return legalIndex(found[0], legal)
	case len(found) > 1:
		return 0, fmt.Errorf("ambiguous: the reply names several legal indices (%s)", strings.Join(clipList(found), ", "))
	case len(other) > 0:
		return 0, fmt.Errorf("no legal action index in the reply (found %s)", strings.Join(clipList(other), ", "))
	}
	return 0, fmt.Errorf("no action index in the reply")
}

// noLeadingZeros cuts the leading zeros of a digit string ("007" → "7").
func noLeadingZeros(d string) string {
	if d = strings.TrimLeft(d, "0"); d == "" {
		return "0"
	}
	return d
}

// integers lists the standalone non-negative integer literals of s, in
// order: digit runs that are not part of a word ("C05", "x2", "3rd"), a
// decimal ("2.5") or a negative number ("-1").
func integers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if (i == 0 || !isWordByte(s[i-1]) && s[i-1] != '.' && s[i-1] != '-') && standaloneEnd(s, j) {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

// standaloneEnd reports whether a digit run ending at j ends a number:
// no word byte follows, nor a decimal point with a digit.
func standaloneEnd(s string, j int) bool {
	if j == len(s) {
		return true
	}
	if isWordByte(s[j]) {
		return false
	}
	return s[j] != '.' || j+1 == len(s) || !isDigit(s[j+1])
}

// isWordByte: ASCII letters, digits, '_', and every non-ASCII byte (so a
// digit next to a non-ASCII letter is part of a word).
func isWordByte(c byte) bool {
	return isDigit(c) || c == '_' || c >= 0x80 || (c|0x20) >= 'a' && (c|0x20) <= 'z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isDigits reports whether s is a non-empty run of digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// appendNew appends v to l unless l holds it.
func appendNew(l []string, v string) []string {
	if slices.Contains(l, v) {
		return l
	}
	return append(l, v)
}

// maxQuoted is how many numbers an error message quotes (clipList).
const maxQuoted = 5

// clipList bounds a list of numbers quoted in an error message.
func clipList(l []string) []string {
	out := make([]string, 0, maxQuoted+1)
	for i, v := range l {
		if i == maxQuoted {
			out = append(out, "…")
			break
		}
		out = append(out, clip(v))
	}
	return out
}

// SetReplyParsing sets how the controller reads replies (ParsingPublished,
// the default, or ParsingStrict).
func (c *Controller) SetReplyParsing(rule string) error {
	if err := checkReplyParsing(rule); err != nil {
		return err
	}
	c.parsing = rule
	return nil
}

// ReplyParsing names the rule the controller reads replies under
// (recorded in manifests as reply_parsing).
func (c *Controller) ReplyParsing() string {
	if c.parsing == "" {
		return ParsingPublished
	}
	return c.parsing
}
