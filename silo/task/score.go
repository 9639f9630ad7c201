package task

// Scoring: the S rule (Correct), the P rule of each level (Partial, with our
// two fixes), the published P rule (PartialPublished, for comparison with
// the paper) and a finer per-element score for dict and matrix answers
// (PartialFine). All take the gold and the submitted answer as JSON; an
// empty or nil answer means "no submission". None of them panics, whatever
// the answer bytes are.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// decodeAnswer parses answer JSON; ok is false for a missing or unparsable
// answer.
func decodeAnswer(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	v, err := pyvalue.ParseJSON(raw)
	if err != nil {
		return nil, false
	}
	return v, true
}

// Correct is the S rule: normalize(answer) == normalize(gold) with Python
// equality (1 == 1.0 == True). There is no float tolerance: the published
// engine has none ("53.60" passes, "53.599" fails).
func Correct(t *Task, expected, got json.RawMessage) bool {
	g, ok1 := decodeAnswer(expected)
	a, ok2 := decodeAnswer(got)
	if !ok1 || !ok2 {
		return false
	}
	return pyEq(normalize(a), normalize(g))
}

// Partial is the P rule of the task's level, as published, with our two
// fixes:
//
//   - Level III lists use a multiset-aware longest increasing subsequence:
//     the k-th occurrence of a value in the answer stands for the k-th
//     occurrence of that value in the gold, so a perfect III-21 segment with
//     repeated values scores 1 (published: below 1).
//   - Level III list-of-list answers (III-25, III-27, III-30) are scored with
//     each inner list as one element (published: TypeError, no results).
//     Answer elements that cannot match (unhashable in Python) are skipped
//     instead of crashing.
//
// Both answer and gold are normalised first, as for S.
func Partial(t *Task, expected, got json.RawMessage) float64 {
	q, _ := partial(t, expected, got, false)
	return q
}

// ErrPublishedCrash is PartialPublished's error where the published code
// raises TypeError (unhashable answer elements at Level III).
var ErrPublishedCrash = errors.New("the published P rule raises TypeError here (unhashable type)")

// ErrPublishedOverflow is PartialPublished's error where the published
// Level I rule, |a − g| ≤ 0.01·|g|, raises OverflowError: Python converts
// an int to a float for a subtraction with a float, or for 0.01·|g|, and
// an int beyond the largest float cannot be converted (an answer of
// 10^400 against I-07's float gold). A huge answer written as a JSON
// float (1e400) is a float infinity there and does not crash.
var ErrPublishedOverflow = errors.New("the published P rule raises OverflowError here (int too large to convert to float)")

// PartialPublished is the P rule exactly as published, for comparison with
// the paper's numbers: the Level III map keeps the last index of a repeated
// gold value, and unhashable values (lists, dicts) in the gold or the
// answer give ErrPublishedCrash, where the published evaluate() fails; at
// Level I an int too large for a float where Python converts it gives
// ErrPublishedOverflow.
func PartialPublished(t *Task, expected, got json.RawMessage) (float64, error) {
	return partial(t, expected, got, true)
}

func partial(t *Task, expected, got json.RawMessage, published bool) (float64, error) {
	g, ok1 := decodeAnswer(expected)
	a, ok2 := decodeAnswer(got)
	if !ok1 || !ok2 {
		return 0, nil
	}
	g, a = normalize(g), normalize(a)
	switch t.Level {
	case 1:
		if isNumber(g) && isNumber(a) {
			if published && pyOverflows(a, g) {
				return 0, ErrPublishedOverflow
			}
			return boolScore(withinOnePercent(a, g)), nil
		}
		return boolScore(pyEq(a, g)), nil
	case 2:
		gl, ok1 := g.(*pyvalue.List)
		al, ok2 := a.(*pyvalue.List)
		if !ok1 || !ok2 {
			return boolScore(pyEq(a, g)), nil
		}
		if len(gl.Items) == 0 {
			return boolScore(len(al.Items) == 0), nil
		}
		hits := 0
		for k := 0; k < len(gl.Items) && k < len(al.Items); k++ {
			if pyEq(al.Items[k], gl.Items[k]) {
				hits++
			}
		}
		return float64(hits) / float64(len(gl.Items)), nil
	default:
		gl, ok1 := g.(*pyvalue.List)
		al, ok2 := a.(*pyvalue.List)
		if !ok1 || !ok2 {
			return boolScore(pyEq(a, g)), nil
		}
		if len(gl.Items) == 0 {
			return boolScore(len(al.Items) == 0), nil
		}
		var seq []int
		if published {
			var err error
			if seq, err = publishedIndices(gl.Items, al.Items); err != nil {
				return 0, err
			}
		} else {
			seq = multisetIndices(gl.Items, al.Items)
		}
		return float64(lisStrict(seq)) / float64(len(gl.Items)), nil
	}
}

// multisetIndices maps each answer element to a gold position: the k-th
// answer occurrence of a value takes the k-th gold position holding an
// equal value; elements with no such position left are dropped.
func multisetIndices(gold, ans []any) []int {
	var keys eqKeys
	positions := map[string][]int{}
	for j, gv := range gold {
		k := keys.key(gv)
		positions[k] = append(positions[k], j)
	}
	used := map[string]int{}
	var seq []int
	for _, av := range ans {
		k := keys.key(av)
		if u := used[k]; u < len(positions[k]) {
			seq = append(seq, positions[k][u])
			used[k] = u + 1
		}
	}
	return seq
}

// publishedIndices is {v: i for i, v in enumerate(gold)} and the lookup of
// each answer element, with Python's hashing rules.
func publishedIndices(gold, ans []any) ([]int, error) {
	var keys eqKeys
	last := map[string]int{}
	for j, gv := range gold {
		if !hashable(gv) {
			return nil, ErrPublishedCrash
		}
		last[keys.key(gv)] = j
	}
	var seq []int
	for _, av := range ans {
		if !hashable(av) {
			return nil, ErrPublishedCrash
		}
		if j, ok := last[keys.key(av)]; ok {
			seq = append(seq, j)
		}
	}
	return seq, nil
}

// eqKeys gives the keys of one comparison: the keys of two values it gave
// are equal exactly when pyEq holds between them. It owns the numbering
// of NaNs (each NaN key is new, as NaN equals nothing), so a comparison
// keys its values with one eqKeys and shares it with no other.
type eqKeys struct{ nans uint64 }

// key returns v's key: numbers by exact value (1, 1.0 and True share a
// key), NaN never equal to anything, dicts independent of key order.
func (e *eqKeys) key(v any) string {
	var b strings.Builder
	e.write(&b, v)
	return b.String()
}

func (e *eqKeys) write(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("N")
	case bool:
		if x {
			b.WriteString("#1")
		} else {
			b.WriteString("#0")
		}
	case int64:
		b.WriteString("#" + strconv.FormatInt(x, 10))
	case *big.Int:
		b.WriteString("#" + x.String())
	case float64:
		switch {
		case math.IsNaN(x):
			e.nans++
			fmt.Fprintf(b, "nan%d", e.nans)
		case math.IsInf(x, 0) || x != math.Trunc(x):
			b.WriteString("#" + pyvalue.FloatRepr(x))
		default:
			i, _ := new(big.Float).SetFloat64(x).Int(nil)
			b.WriteString("#" + i.String())
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case *pyvalue.List:
		open, close := "[", "]"
		if x.Tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for _, it := range x.Items {
			e.write(b, it)
			b.WriteByte(',')
		}
		b.WriteString(close)
	case *pyvalue.Dict:
		entries := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			entries[i] = e.key(k) + ":" + e.key(x.Vals[i])
		}
		sort.Strings(entries)
		b.WriteString("{" + strings.Join(entries, ",") + "}")
	default:
		fmt.Fprintf(b, "?%p", v)
	}
}

func hashable(v any) bool {
	switch v.(type) {
	case *pyvalue.List, *pyvalue.Dict:
		return false
	}
	return true
}

// lisStrict is the length of the longest strictly increasing subsequence
// (patience sorting with bisect_left).
func lisStrict(seq []int) int {
	var tails []int
	for _, x := range seq {
		i := sort.SearchInts(tails, x)
		if i == len(tails) {
			tails = append(tails, x)
		} else {
			tails[i] = x
		}
	}
	return len(tails)
}

// PartialFine is a finer score for dict and matrix answers, reported
// separately from P:
//
//   - dict (II-18, III-24, III-28, III-29): matching entries ÷ the number of
//     distinct keys in gold and answer together; an entry matches when the
//     answer has the gold's key with an equal value (values compared as S
//     compares dict values, without normalisation).
//   - matrix (III-25, III-27, III-30): matching cells ÷ the number of cell
//     positions in gold and answer together; cell [r][c] matches when both
//     have it and the values are equal after normalisation. A row that is a
//     list on one side only counts as unmatched positions (at least one).
//
// Both are 1 exactly when the answer is S-correct. For every other output
// type PartialFine equals Partial.
func PartialFine(t *Task, expected, got json.RawMessage) float64 {
	if t.Output != OutDict && t.Output != OutMatrix {
		return Partial(t, expected, got)
	}
	g, ok1 := decodeAnswer(expected)
	a, ok2 := decodeAnswer(got)
	if !ok1 || !ok2 {
		return 0
	}
	g, a = normalize(g), normalize(a)
	switch gv := g.(type) {
	case *pyvalue.Dict:
		av, ok := a.(*pyvalue.Dict)
		if !ok {
			return 0
		}
		keys := len(gv.Keys)
		hits := 0
		for i, k := range gv.Keys {
			if x, ok := av.Get(k.(string)); ok && pyEq(x, gv.Vals[i]) {
				hits++
			}
		}
		for _, k := range av.Keys {
			if _, ok := gv.Get(k.(string)); !ok {
				keys++
			}
		}
		if keys == 0 {
			return 1
		}
		return float64(hits) / float64(keys)
	case *pyvalue.List:
		av, ok := a.(*pyvalue.List)
		if !ok {
			return 0
		}
		positions, hits := 0, 0
		rows := max(len(gv.Items), len(av.Items))
		for r := 0; r < rows; r++ {
			var grow, arow []any
			gIsList, aIsList := false, false
			if r < len(gv.Items) {
				if l, ok := gv.Items[r].(*pyvalue.List); ok {
					grow, gIsList = l.Items, true
				}
			}
			if r < len(av.Items) {
				if l, ok := av.Items[r].(*pyvalue.List); ok {
					arow, aIsList = l.Items, true
				}
			}
			switch {
			case gIsList && aIsList:
				positions += max(len(grow), len(arow))
				for c := 0; c < len(grow) && c < len(arow); c++ {
					if pyEq(arow[c], grow[c]) {
						hits++
					}
				}
			case gIsList:
				positions += max(len(grow), 1)
				if r < len(av.Items) && len(grow) == 0 {
					positions++ // an empty gold row against a non-list
				}
			case aIsList:
				positions += max(len(arow), 1)
			default: // neither row is a list: one position, compared whole
				positions++
				if r < len(gv.Items) && r < len(av.Items) && pyEq(av.Items[r], gv.Items[r]) {
					hits++
				}
			}
		}
		if positions == 0 {
			return 1
		}
		return float64(hits) / float64(positions)
	}
	return boolScore(pyEq(a, g))
}

func boolScore(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------- normalize

// normalize is the published normalisation: strings are stripped and tried
// as int(), then float(), then (if they start with [ or {) json.loads,
// normalised again; lists are normalised element by element; everything
// else, dicts included, is left as it is.
func normalize(v any) any {
	switch x := v.(type) {
	case string:
		return normalizeString(x)
	case *pyvalue.List:
		out := &pyvalue.List{Items: make([]any, len(x.Items)), Tuple: x.Tuple}
		for i, it := range x.Items {
			out.Items[i] = normalize(it)
		}
		return out
	}
	return v
}

func normalizeString(s string) any {
	s = pyStrip(s)
	if v, ok := pyInt(s); ok {
		return v
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
		if v, err := pyvalue.ParseJSON([]byte(s)); err == nil {
			return normalize(v)
		}
	}
	return s
}

// pyIsSpace is str.isspace for one character.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// asciiDigits maps Unicode decimal digits to ASCII, as int() and float()
// accept them; other characters are kept.
func asciiDigits(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r > 0x7f && unicode.Is(unicode.Nd, r) {
			// Decimal digits come in contiguous runs of ten starting at 0.
			lo := r
			for unicode.Is(unicode.Nd, lo-1) {
				lo--
			}
			b.WriteByte(byte('0' + (r-lo)%10))
			continue
		}
		if r > 0x7f && pyIsSpace(r) {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > 0x7f {
			return false
		}
	}
	return true
}

var (
	pyIntRe   = regexp.MustCompile(`^[+-]?[0-9](?:_?[0-9])*$`)
	pyFloatRe = regexp.MustCompile(`^[+-]?(?:(?:[0-9](?:_?[0-9])*)(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$`)
	pyInfRe   = regexp.MustCompile(`(?i)^[+-]?(?:inf|infinity|nan)$`)
)

// maxIntDigits is CPython's limit for int() on strings (sys.int_info).
const maxIntDigits = 4300

// pyInt is int(s) for a stripped s.
func pyInt(s string) (any, bool) {
	s = asciiDigits(s)
	if !pyIntRe.MatchString(s) {
		return nil, false
	}
	s = strings.ReplaceAll(s, "_", "")
	if d := strings.TrimLeft(s, "+-"); len(d) > maxIntDigits {
		return nil, false
	}
	s = strings.TrimPrefix(s, "+")
	return pyvalue.ParseInt(s), true
}

// pyFloat is float(s) for a stripped s.
func pyFloat(s string) (float64, bool) {
	s = asciiDigits(s)
	if pyInfRe.MatchString(s) {
		neg := strings.HasPrefix(s, "-")
		body := strings.ToLower(strings.TrimLeft(s, "+-"))
		if body == "nan" {
			return math.NaN(), true
		}
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if !pyFloatRe.MatchString(s) {
		return 0, false
	}
	f, err := pyvalue.ParseFloat(strings.ReplaceAll(s, "_", ""))
	return f, err == nil
}

// ---------------------------------------------------------------- equality

func isNumber(v any) bool {
	switch v.(type) {
	case bool, int64, *big.Int, float64:
		return true
	}
	return false
}

// toBig returns an integer value (bool, int64, *big.Int) as *big.Int.
func toBig(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case int64:
		return big.NewInt(x), true
	case *big.Int:
		return x, true
	}
	return nil, false
}

// numEq is Python's == between numbers: exact, also between int and float.
func numEq(a, b any) bool {
	ai, aInt := toBig(a)
	bi, bInt := toBig(b)
	switch {
	case aInt && bInt:
		return ai.Cmp(bi) == 0
	case aInt:
		return intFloatEq(ai, b.(float64))
	case bInt:
		return intFloatEq(bi, a.(float64))
	default:
		return a.(float64) == b.(float64)
	}
}

func intFloatEq(i *big.Int, f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return false
	}
	fi, _ := new(big.Float).SetFloat64(f).Int(nil)
	return fi.Cmp(i) == 0
}

// pyEq is Python's == on the values this package handles.
func pyEq(a, b any) bool {
	if isNumber(a) && isNumber(b) {
		return numEq(a, b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *pyvalue.List:
		y, ok := b.(*pyvalue.List)
		if !ok || x.Tuple != y.Tuple || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !pyEq(x.Items[i], y.Items[i]) {
				return false
			}
		}
		return true
	case *pyvalue.Dict:
		y, ok := b.(*pyvalue.Dict)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			j := dictIndex(y, k)
			if j < 0 || !pyEq(x.Vals[i], y.Vals[j]) {
				return false
			}
		}
		return true
	}
	return false
}

func dictIndex(d *pyvalue.Dict, k any) int {
	if ks, ok := k.(string); ok {
		return d.Find(ks)
	}
	for j, k2 := range d.Keys {
		if isNumber(k) && isNumber(k2) {
			if numEq(k, k2) {
				return j
			}
		} else if pyEq(k, k2) {
			return j
		}
	}
	return -1
}

// withinOnePercent is the Level I numeric rule: gold 0 needs an answer equal
// to 0; otherwise |a - g| <= 0.01 * |g|, evaluated as Python does (exactly
// for two ints, in floating point as soon as one side is a float). Where
// Python would raise OverflowError (an int too large for a float), the
// answer scores 0.
func withinOnePercent(a, g any) bool {
	if numEq(a, g) { // also where Python would overflow or compare inf - inf
		return true
	}
	if numEq(g, int64(0)) {
		return numEq(a, int64(0))
	}
	ai, aInt := toBig(a)
	gi, gInt := toBig(g)
	if aInt && gInt {
		diff := new(big.Int).Sub(ai, gi)
		diff.Abs(diff)
		gf, acc := new(big.Float).SetInt(new(big.Int).Abs(gi)).Float64()
		if math.IsInf(gf, 0) && acc != big.Exact {
			return false
		}
		tol := float64(0.01 * gf)
		return new(big.Float).SetInt(diff).Cmp(big.NewFloat(tol)) <= 0
	}
	af, ok1 := toFloat(a)
	gf, ok2 := toFloat(g)
	if !ok1 || !ok2 {
		return false
	}
	return math.Abs(af-gf) <= float64(0.01*math.Abs(gf))
}

// toFloat is Python's int-to-float conversion (correctly rounded); false
// where Python raises OverflowError.
// pyOverflows reports whether the published Level I rule raises
// OverflowError for answer a and gold g (both numbers): after its gold-0
// branch (a comparison, exact in Python), a − g converts the int to a
// float when the other is a float, and 0.01·|g| converts an int gold.
func pyOverflows(a, g any) bool {
	if numEq(g, int64(0)) {
		return false
	}
	ai, aInt := toBig(a)
	gi, gInt := toBig(g)
	return aInt && !gInt && tooLargeForFloat(ai) || gInt && tooLargeForFloat(gi)
}

// tooLargeForFloat reports whether Python's float(x) raises OverflowError:
// x rounded to the nearest float (ties to even, as Python rounds) is
// beyond the largest one.
func tooLargeForFloat(x *big.Int) bool {
	f, _ := new(big.Float).SetInt(x).Float64()
	return math.IsInf(f, 0)
}

func toFloat(v any) (float64, bool) {
	if f, ok := v.(float64); ok {
		return f, true
	}
	i, _ := toBig(v)
	f, _ := new(big.Float).SetInt(i).Float64()
	if math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
