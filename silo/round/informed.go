package round

// Content-aware provenance: which shards' data an agent actually received.
// The flow-based set (proto's provenance, AgentResult.Seen) says whose
// messages reached an agent, directly or relayed; it is an upper bound. An
// agent is informed about shard j only when a content it read carries j's
// data. The rules, per task family, are in docs/silo-rounds.md ("Failure
// labels"); this file implements them.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/coordbench/coordbench/silo/pyvalue"
	"github.com/coordbench/coordbench/silo/task"
)

// decomposable reports whether a task's answer over a subset of the
// shards is a correct partial result that combines into the answer (max,
// count, any, xor, top-k): a content holding the answer over the shards of
// its author's provenance set carries those shards.
func decomposable(taskID string) bool {
	switch taskID {
	case "I-01", "I-02", "I-04", "I-05", "I-06", "I-09":
		return true
	}
	return false
}

// maxGroups bounds the bracketed groups of one content that are parsed as
// values (mentions), so a content of many unbalanced brackets stays linear.
const maxGroups = 256

// carrier decides what contents carry, with the instance's shards parsed
// once, the partial answers of decomposable tasks cached by shard set, and
// each distinct text tokenized once (a broadcast or file is read by many).
type carrier struct {
	in       *task.Instance
	items    []shardItems // per shard, parsed on first use
	sub      map[string]json.RawMessage
	sums     map[string]sumCount // I-07: sum and count by shard set
	contents map[string]*content
}

func newCarrier(in *task.Instance) *carrier {
	return &carrier{in: in, sub: map[string]json.RawMessage{}, sums: map[string]sumCount{}, contents: map[string]*content{}}
}

func (c *carrier) content(text string) *content {
	ct, ok := c.contents[text]
	if !ok {
		ct = newContent(text)
		c.contents[text] = ct
	}
	return ct
}

// carry marks in has (agent i's informed set so far, by shard) the shards
// whose data the content text carries, given author, the shards whose data
// its author had when it wrote it (sorted): a content carries no more.
func (c *carrier) carry(i int, text string, author []int, has []bool) {
	add := func(js []int) {
		for _, j := range js {
			has[j] = true
		}
	}
	if all(has, author) {
		return // nothing it could teach
	}
	deps := c.in.Deps[i]
	ct := c.content(text)
	for _, j := range author {
		if !has[j] && c.shard(j).in(ct) {
			has[j] = true
		}
	}
	// The recipient's own correct answer, from an author that had the data
	// of every shard it depends on.
	if !all(has, deps) && covers(author, deps) && ct.mentions(c.in.Task, c.in.Expected[i]) {
		add(deps)
	}
	// A correct partial result over the author's shards.
	if decomposable(c.in.Task.ID) && !all(has, author) {
		if sub, ok := c.partial(author); ok && ct.mentions(c.in.Task, sub) {
			add(author)
		}
	}
	// I-07 (mean): the sum and the count of the author's numbers.
	if c.in.Task.ID == "I-07" && !all(has, author) && c.sumCount(author).in(ct) {
		add(author)
	}
	// I-03 (vote): the tally of the author's votes.
	if c.in.Task.ID == "I-03" && !all(has, author) && c.tallied(author, ct) {
		add(author)
	}
	// A prefix task's carry: the last value of agent k's answer (prefix
	// sum, running hash) is the result over shards 0..k.
	if c.in.Task.DepKind == task.DepPrefix {
		for k := prefixLen(author) - 1; k >= 0 && !all(has, author[:k+1]); k-- {
			if last, ok := lastItem(c.in.Expected[k]); ok && ct.mentions(c.in.Task, last) {
				add(author[:k+1])
				break
			}
		}
	}
}

// prefixLen is the k such that seen (sorted) starts with 0..k-1.
func prefixLen(seen []int) int {
	k := 0
	for k < len(seen) && seen[k] == k {
		k++
	}
	return k
}

func all(has []bool, js []int) bool {
	for _, j := range js {
		if !has[j] {
			return false
		}
	}
	return true
}

// partial is the task's answer over the shards in set (ascending), or
// false if the solver does not accept that subset.
func (c *carrier) partial(set []int) (json.RawMessage, bool) {
	key := fmt.Sprint(set)
	if v, ok := c.sub[key]; ok {
		return v, v != nil
	}
	shards := make([]json.RawMessage, len(set))
	for k, j := range set {
		shards[k] = c.in.Shards[j]
	}
	golds, err := task.Solve(c.in.Task, shards, c.in.Params)
	var v json.RawMessage
	if err == nil && len(golds) > 0 {
		v = golds[0]
	}
	c.sub[key] = v
	return v, v != nil
}

// sumCount is the sum of the numbers of a set of shards (I-07) and how
// many numbers there are.
type sumCount struct {
	sum   float64
	count int
}

// sumCount is the sum and count of the numbers of the shards in set
// (ascending), summed in shard order.
func (c *carrier) sumCount(set []int) sumCount {
	key := fmt.Sprint(set)
	if v, ok := c.sums[key]; ok {
		return v
	}
	var v sumCount
	for _, j := range set {
		for _, x := range c.shard(j).floats {
			v.sum += x
			v.count++
		}
	}
	c.sums[key] = v
	return v
}

// in reports whether the content states both the count (an integer token)
// and the sum (a number token equal to it as floats are matched: Python's
// repr, or rounded to the token's decimals, at least 2).
func (v sumCount) in(ct *content) bool {
	if v.count == 0 || ct.ints[strconv.Itoa(v.count)] == 0 {
		return false
	}
	for _, f := range floatForms(v.sum, ct.decimals) {
		if ct.nums[f] > 0 {
			return true
		}
	}
	return false
}

// tallied reports whether the content states the tally of the votes of the
// shards in set: every candidate voted for, each followed (after at most
// four quotes, spaces, colons or equals signs) by its number of votes, as
// in {"Candidate_A": 3} or Candidate_A: 3.
func (c *carrier) tallied(set []int, ct *content) bool {
	tally := map[string]int{}
	for _, j := range set {
		for v, k := range c.shard(j).strs {
			tally[v] += k
		}
	}
	for v, k := range tally {
		if !countAfter(ct.text, v, strconv.Itoa(k)) {
			return false
		}
	}
	return len(tally) > 0
}

// countAfter reports whether some occurrence of name in text is followed,
// after at most four separators, by the number n (and no further digit).
// An empty name (a task file may hold an empty vote) is never found.
func countAfter(text, name, n string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		k := strings.Index(text[i:], name)
		if k < 0 {
			return false
		}
		rest := text[i+k+len(name):]
		skip := 0
		for skip < len(rest) && skip < 4 && strings.IndexByte(`"' :=`, rest[skip]) >= 0 {
			skip++
		}
		rest = rest[skip:]
		if strings.HasPrefix(rest, n) && (len(rest) == len(n) || rest[len(n)] < '0' || rest[len(n)] > '9') {
			return true
		}
		i += k + len(name)
	}
}

// lastItem is the last element of a list answer.
func lastItem(raw json.RawMessage) (json.RawMessage, bool) {
	var xs []json.RawMessage
	if json.Unmarshal(raw, &xs) != nil || len(xs) == 0 {
		return nil, false
	}
	return xs[len(xs)-1], true
}

// shardItems are the data items of one shard: its numbers and its strings,
// each with its multiplicity.
type shardItems struct {
	ints   map[string]int // integer text → count
	floats []float64
	strs   map[string]int
}

func (c *carrier) shard(j int) *shardItems {
	if c.items == nil {
		c.items = make([]shardItems, c.in.N)
	}
	it := &c.items[j]
	if it.ints == nil {
		it.ints, it.strs = map[string]int{}, map[string]int{}
		if v, err := pyvalue.ParseJSON(c.in.Shards[j]); err == nil {
			it.collect(dataPart(c.in.Task.ID, v))
		}
	}
	return it
}

// dataPart is the part of a shard that is the agent's own data: III-30's
// shard also holds the full matrix B, which every agent has.
func dataPart(taskID string, v any) any {
	if d, ok := v.(*pyvalue.Dict); ok && taskID == "III-30" {
		if rows, ok := d.Get("A_rows"); ok {
			return rows
		}
	}
	return v
}

// collect gathers the leaves of v: numbers, strings, and dict keys that are
// integers (III-27's user and item ids); other dict keys are field names.
func (it *shardItems) collect(v any) {
	switch x := v.(type) {
	case int64:
		it.ints[strconv.FormatInt(x, 10)]++
	case *big.Int:
		it.ints[x.String()]++
	case float64:
		it.floats = append(it.floats, x)
	case string:
		it.strs[x]++
	case *pyvalue.List:
		for _, e := range x.Items {
			it.collect(e)
		}
	case *pyvalue.Dict:
		for k, key := range x.Keys {
			if s, ok := key.(string); ok {
				if _, err := strconv.ParseInt(s, 10, 64); err == nil {
					it.ints[s]++
				}
			}
			it.collect(x.Vals[k])
		}
	}
}

// in reports whether the content holds every item of the shard, with
// multiplicity: integers as number tokens; floats as number tokens equal
// to the float, or to it rounded to the token's decimals (at least 2); and
// strings as substrings of the text.
func (it *shardItems) in(ct *content) bool {
	for s, n := range it.ints {
		if ct.ints[s] < n {
			return false
		}
	}
	for s, n := range it.strs {
		if strings.Count(ct.text, s) < n && (len(s) < minSqueezed || strings.Count(ct.squeezed(), squeeze(s)) < n) {
			return false
		}
	}
	if len(it.floats) == 0 {
		return true
	}
	left := make(map[string]int, len(ct.nums))
	for k, v := range ct.nums {
		left[k] = v
	}
	for _, x := range it.floats {
		matched := false
		for _, cand := range floatForms(x, ct.decimals) {
			if left[cand] > 0 {
				left[cand]--
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

// floatForms are the texts a float may be written as: Python's repr, and
// the value rounded to each number of decimals (>= 2) the content uses.
func floatForms(x float64, decimals []int) []string {
	out := []string{pyvalue.FloatRepr(x)}
	for _, d := range decimals {
		out = append(out, strconv.FormatFloat(x, 'f', d, 64))
	}
	return out
}

// minSqueezed is the shortest string item that may also be found with
// separators removed (squeeze): II-13's 15 letters sent one by one ("a b
// c", "['a', 'b']"). Shorter strings (words, votes) are matched as they are:
// squeezed, they would turn up across word boundaries by chance.
const minSqueezed = 8

// squeeze keeps the letters and digits of s.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// content is one text an agent read, tokenized once.
type content struct {
	text     string
	sq       *string        // squeeze(text), on first use
	ints     map[string]int // integer tokens (canonical text) → count
	nums     map[string]int // every number token's text → count
	decimals []int          // the numbers of decimals (>= 2) that tokens use
	values   []any          // values parsed from the text (lazily)
	parsed   bool
}

var numberRE = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`)

func newContent(text string) *content {
	ct := &content{text: text, ints: map[string]int{}, nums: map[string]int{}}
	for _, tok := range numberRE.FindAllString(text, -1) {
		ct.nums[tok]++
		if !strings.ContainsAny(tok, ".eE") {
			if b, ok := new(big.Int).SetString(tok, 10); ok {
				ct.ints[b.String()]++
			}
			continue
		}
		if dot := strings.IndexByte(tok, '.'); dot >= 0 && !strings.ContainsAny(tok, "eE") {
			if d := len(tok) - dot - 1; d >= 2 && !slices.Contains(ct.decimals, d) {
				ct.decimals = append(ct.decimals, d)
			}
		}
	}
	slices.Sort(ct.decimals)
	return ct
}

func (ct *content) squeezed() string {
	if ct.sq == nil {
		s := squeeze(ct.text)
		ct.sq = &s
	}
	return *ct.sq
}

// mentions reports whether the content states the value want (JSON): a
// number as a number token equal to it, a bool as the word true or false, a
// string as a substring, a list or dict as a value parsed from the text
// (JSON or a Python literal, the whole text or a bracketed part of it, at
// any depth) that equals it by the S rule.
func (ct *content) mentions(t *task.Task, want json.RawMessage) bool {
	w, err := pyvalue.ParseJSON(want)
	if err != nil {
		return false
	}
	switch x := w.(type) {
	case bool:
		word := "false"
		if x {
			word = "true"
		}
		return wordIn(strings.ToLower(ct.text), word)
	case string:
		return x != "" && strings.Contains(ct.text, x)
	case int64, *big.Int, float64:
		for tok := range ct.nums {
			if numEqual(tok, x) {
				return true
			}
		}
		return false
	case *pyvalue.List, *pyvalue.Dict:
		for _, v := range ct.parse() {
			if containsValue(t, v, w, want) {
				return true
			}
		}
	}
	return false
}

func wordIn(text, word string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], word)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(word)
		if (k == 0 || !isLetter(text[k-1])) && (end == len(text) || !isLetter(text[end])) {
			return true
		}
		i = k + 1
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// numEqual compares a number token with a number by Python equality.
func numEqual(tok string, x any) bool {
	if !strings.ContainsAny(tok, ".eE") {
		b, ok := new(big.Int).SetString(tok, 10)
		if !ok {
			return false
		}
		switch y := x.(type) {
		case int64:
			return b.IsInt64() && b.Int64() == y
		case *big.Int:
			return b.Cmp(y) == 0
		case float64:
			f, _ := new(big.Float).SetInt(b).Float64()
			return f == y && b.IsInt64()
		}
		return false
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return false
	}
	switch y := x.(type) {
	case int64:
		return f == float64(y)
	case float64:
		return f == y
	}
	return false
}

// containsValue reports whether v or one of its elements (at any depth) is
// a container equal to want (w parsed) by the S rule.
func containsValue(t *task.Task, v, w any, want json.RawMessage) bool {
	elems, ok := elements(v)
	if !ok {
		return false
	}
	if we, ok := elements(w); ok && len(we) == len(elems) && sameKind(v, w) && task.Correct(t, want, pyvalue.Canon(v)) {
		return true
	}
	for _, e := range elems {
		if containsValue(t, e, w, want) {
			return true
		}
	}
	return false
}

// elements are a list's items or a dict's values; false for a scalar.
func elements(v any) ([]any, bool) {
	switch x := v.(type) {
	case *pyvalue.List:
		return x.Items, true
	case *pyvalue.Dict:
		return x.Vals, true
	}
	return nil, false
}

// sameKind reports whether two containers are both lists or both dicts.
func sameKind(a, b any) bool {
	_, la := a.(*pyvalue.List)
	_, lb := b.(*pyvalue.List)
	return la == lb
}

// parse returns the values in the text: the whole text as JSON or a Python
// literal, else each outermost bracketed group that parses as one.
func (ct *content) parse() []any {
	if ct.parsed {
		return ct.values
	}
	ct.parsed = true
	if v, ok := parseValue(ct.text); ok {
		ct.values = []any{v}
		return ct.values
	}
	ends := bracketPairs(ct.text)
	tried := 0
	for i := 0; i < len(ct.text) && tried < maxGroups; i++ {
		end, ok := ends[i]
		if !ok {
			continue
		}
		tried++
		if v, ok := parseValue(ct.text[i : end+1]); ok {
			ct.values = append(ct.values, v)
			i = end
		}
	}
	return ct.values
}

func parseValue(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '[' && s[0] != '{') {
		return nil, false
	}
	if v, err := pyvalue.ParseJSON([]byte(s)); err == nil {
		return v, true
	}
	raw, err := pyvalue.ParseLiteral(s)
	if err != nil {
		return nil, false
	}
	v, err := pyvalue.ParseJSON(raw)
	return v, err == nil
}

// bracketPairs maps the offset of each '[' or '{' to that of its matching
// close, in one pass (a mismatched close clears the stack).
func bracketPairs(s string) map[int]int {
	out := map[int]int{}
	var stack []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			stack = append(stack, i)
		case ']', '}':
			open := byte('[')
			if s[i] == '}' {
				open = '{'
			}
			if n := len(stack); n > 0 && s[stack[n-1]] == open {
				out[stack[n-1]] = i
				stack = stack[:n-1]
			} else {
				stack = stack[:0]
			}
		}
	}
	return out
}
