package task

// The 30 generators (draw order of the published generator, see
// docs/silo-tasks.md) and solvers (the gold answer from all shards).
//
// Floating-point code follows CPython's evaluation exactly: sums run left to
// right from 0 (built-in sum() up to CPython 3.11), x**2 is x*x, and every
// product is converted explicitly (float64(a*b)) so that the compiler cannot
// fuse it into a multiply-add (Go spec, "Arithmetic operators").

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/silo/pyrand"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

type rng = *pyrand.Random

// bounds is the published sharding rule: chunk = total // n; agent i gets
// [i*chunk, i*chunk+chunk), the last agent gets everything from (n-1)*chunk.
func bounds(total, n int) [][2]int {
	c := total / n
	b := make([][2]int, n)
	for i := range b {
		b[i] = [2]int{i * c, i*c + c}
	}
	b[n-1][1] = total
	return b
}

func splitAny[T any](xs []T, n int, conv func([]T) any) []any {
	out := make([]any, n)
	for i, b := range bounds(len(xs), n) {
		out[i] = conv(xs[b[0]:b[1]])
	}
	return out
}

func splitInts(xs []int, n int) []any {
	return splitAny(xs, n, func(s []int) any { return pyvalue.Ints(s) })
}
func splitFloats(xs []float64, n int) []any {
	return splitAny(xs, n, func(s []float64) any { return pyvalue.Floats(s) })
}
func splitStrings(xs []string, n int) []any {
	return splitAny(xs, n, func(s []string) any { return pyvalue.Strings(s) })
}

// segments splits a global per-position answer by the shards' own lengths
// (agent i gets the positions of its own shard).
func segments[T any](xs []T, lens []int, conv func([]T) any) ([]any, error) {
	out := make([]any, len(lens))
	at := 0
	for i, l := range lens {
		if at+l > len(xs) {
			return nil, errors.New("shard lengths exceed the data")
		}
		out[i] = conv(xs[at : at+l])
		at += l
	}
	return out, nil
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func randInts(r rng, count, lo, hi int) []int {
	xs := make([]int, count)
	for i := range xs {
		xs[i] = r.RandInt(lo, hi)
	}
	return xs
}

func uniforms(r rng, count int, lo, hi float64) []float64 {
	xs := make([]float64, count)
	for i := range xs {
		xs[i] = r.Uniform(lo, hi)
	}
	return xs
}

func shuffle[T any](r rng, xs []T) {
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}

// pyRound is Python's round(x, nd) for floats: correctly rounded to nd
// decimals, ties to even on the exact binary value.
func pyRound(x float64, nd int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', nd, 64), 64)
	if f == 0 && math.Signbit(x) {
		return math.Copysign(0, -1)
	}
	return f
}

// pySum adds left to right from 0, as sum() does on CPython <= 3.11.
func pySum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func concatInts(shards []any) []int {
	var all []int
	for _, s := range shards {
		all = append(all, asInts(s)...)
	}
	return all
}

func concatFloats(shards []any) []float64 {
	var all []float64
	for _, s := range shards {
		all = append(all, asFloats(s)...)
	}
	return all
}

func concatStrings(shards []any) []string {
	var all []string
	for _, s := range shards {
		all = append(all, asStrings(s)...)
	}
	return all
}

func lens(shards []any) []int {
	out := make([]int, len(shards))
	for i, s := range shards {
		switch x := s.(type) {
		case *pyvalue.List:
			out[i] = len(x.Items)
		case string:
			out[i] = len(x)
		}
	}
	return out
}

var errNoData = errors.New("no data in any shard")

// ---------------------------------------------------------------- Level I

func genI01(r rng, n int) ([]any, any) { return splitInts(randInts(r, 20*n, -1000, 1000), n), nil }

func solveI01(n int, _ any, shards []any) ([]any, error) {
	all := concatInts(shards)
	if len(all) == 0 {
		return nil, errNoData
	}
	return repeat(int64(slices.Max(all)), n), nil
}

var words = []string{"apple", "banana", "cherry", "date", "elderberry", "fig", "grape"}

func genI02(r rng, n int) ([]any, any) {
	data := make([]string, 30*n)
	for i := range data {
		data[i] = words[r.Choice(len(words))]
	}
	for i := 0; i < len(data); i += 10 {
		data[i] = "apple"
	}
	return splitStrings(data, n), nil
}

func solveI02(n int, _ any, shards []any) ([]any, error) {
	c := 0
	for _, w := range concatStrings(shards) {
		if w == "apple" {
			c++
		}
	}
	return repeat(int64(c), n), nil
}

var candidates = []string{"Candidate_A", "Candidate_B", "Candidate_C", "Candidate_D"}

func genI03(r rng, n int) ([]any, any) {
	votes := make([]string, 25*n)
	for i := range votes {
		votes[i] = candidates[r.Choice(len(candidates))]
	}
	winner := candidates[r.Choice(len(candidates))]
	for i := 0; i < len(votes); i += 2 {
		votes[i] = winner
	}
	return splitStrings(votes, n), nil
}

func solveI03(n int, _ any, shards []any) ([]any, error) {
	count := map[string]int{}
	for _, v := range concatStrings(shards) {
		count[v]++
	}
	best := candidates[0]
	for _, c := range candidates[1:] {
		if count[c] > count[best] {
			best = c
		}
	}
	return repeat(best, n), nil
}

var logLines = []string{
	"INFO: System started",
	"DEBUG: Loading config",
	"WARNING: Low memory",
	"SUCCESS: Task completed",
	"TRACE: Function called",
}

const errorLine = "ERROR: Critical failure detected"

func genI04(r rng, n int) ([]any, any) {
	logs := make([]string, 15*n)
	for i := range logs {
		logs[i] = logLines[r.Choice(len(logLines))]
	}
	if hasError := r.Choice(2) == 0; hasError { // choice([True, False])
		logs[r.RandInt(0, len(logs)-1)] = errorLine
	}
	return splitStrings(logs, n), nil
}

func solveI04(n int, _ any, shards []any) ([]any, error) {
	found := false
	for _, l := range concatStrings(shards) {
		if strings.Contains(l, "ERROR") {
			found = true
		}
	}
	return repeat(found, n), nil
}

func genI05(r rng, n int) ([]any, any) { return splitInts(randInts(r, 30*n, 0, 1000), n), nil }

func solveI05(n int, _ any, shards []any) ([]any, error) {
	c := 0
	for _, x := range concatInts(shards) {
		if x >= 100 && x <= 500 {
			c++
		}
	}
	return repeat(int64(c), n), nil
}

func genI06(r rng, n int) ([]any, any) { return splitInts(randInts(r, 20*n, 0, 255), n), nil }

func solveI06(n int, _ any, shards []any) ([]any, error) {
	x := 0
	for _, v := range concatInts(shards) {
		x ^= v
	}
	return repeat(int64(x), n), nil
}

func genI07(r rng, n int) ([]any, any) { return splitFloats(uniforms(r, 25*n, 0, 100), n), nil }

func solveI07(n int, _ any, shards []any) ([]any, error) {
	all := concatFloats(shards)
	if len(all) == 0 {
		return nil, errNoData
	}
	return repeat(pyRound(pySum(all)/float64(len(all)), 2), n), nil
}

func genI08(r rng, n int) ([]any, any) {
	data := make([]int, 30*n)
	for i := range data {
		data[i] = r.Choice(15 * n) // choice(range(15n)) is the index itself
	}
	return splitInts(data, n), nil
}

func distinct(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

func solveI08(n int, _ any, shards []any) ([]any, error) {
	return repeat(int64(distinct(concatInts(shards))), n), nil
}

func genI09(r rng, n int) ([]any, any) { return splitInts(randInts(r, 30*n, 1, 1000), n), nil }

func solveI09(n int, _ any, shards []any) ([]any, error) {
	all := concatInts(shards)
	sort.Sort(sort.Reverse(sort.IntSlice(all)))
	if len(all) > 10 {
		all = all[:10]
	}
	return repeat(pyvalue.Ints(all), n), nil
}

func genI10(r rng, n int) ([]any, any) { return splitFloats(uniforms(r, 30*n, 0, 100), n), nil }

func solveI10(n int, _ any, shards []any) ([]any, error) {
	all := concatFloats(shards)
	if len(all) == 0 {
		return nil, errNoData
	}
	mean := pySum(all) / float64(len(all))
	sq := make([]float64, len(all))
	for i, x := range all {
		d := x - mean
		sq[i] = float64(d * d)
	}
	return repeat(pyRound(math.Sqrt(pySum(sq)/float64(len(all))), 2), n), nil
}

// ---------------------------------------------------------------- Level II

func genII11(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 50), n), nil }

func solveII11(n int, _ any, shards []any) ([]any, error) {
	all := concatInts(shards)
	acc := 0
	for i, x := range all {
		acc += x
		all[i] = acc
	}
	return segments(all, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
}

func genII12(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 100), n), nil }

func solveII12(n int, _ any, shards []any) ([]any, error) {
	a := concatInts(shards)
	out := []float64{}
	for j := 0; j+2 < len(a); j++ {
		out = append(out, pyRound(float64(a[j]+a[j+1]+a[j+2])/3, 2))
	}
	return repeat(pyvalue.Floats(out), n), nil
}

func genII13(r rng, n int) ([]any, any) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	s := make([]byte, 15*n)
	for i := range s {
		s[i] = letters[r.Choice(len(letters))]
	}
	pos := r.RandInt(0, len(s)-7)
	copy(s[pos:], "racecar")
	return splitAny([]byte(s), n, func(b []byte) any { return string(b) }), nil
}

func concatText(shards []any) string {
	var b strings.Builder
	for _, s := range shards {
		b.WriteString(s.(string))
	}
	return b.String()
}

// longestPalindrome is Manacher's algorithm over code points.
func longestPalindrome(s string) int {
	rs := []rune(s)
	t := make([]rune, 0, 2*len(rs)+1)
	t = append(t, 0)
	for _, c := range rs {
		t = append(t, c, 0) // 0 separates (never in the data)
	}
	p := make([]int, len(t))
	c, right, best := 0, 0, 0
	for i := range t {
		if i < right {
			p[i] = min(right-i, p[2*c-i])
		}
		for i-p[i]-1 >= 0 && i+p[i]+1 < len(t) && t[i-p[i]-1] == t[i+p[i]+1] {
			p[i]++
		}
		if i+p[i] > right {
			c, right = i, i+p[i]
		}
		best = max(best, p[i])
	}
	return best
}

func solveII13(n int, _ any, shards []any) ([]any, error) {
	return repeat(int64(longestPalindrome(concatText(shards))), n), nil
}

func genII14(r rng, n int) ([]any, any) { return splitInts(randInts(r, 10*n, 0, 1), n), nil }

// lifeSteps is the number of synchronous steps of II-14.
const lifeSteps = 5

func solveII14(n int, _ any, shards []any) ([]any, error) {
	cur := concatInts(shards)
	for step := 0; step < lifeSteps; step++ {
		next := make([]int, len(cur))
		for i := range cur {
			sum := cur[i]
			if i > 0 {
				sum += cur[i-1]
			}
			if i+1 < len(cur) {
				sum += cur[i+1]
			}
			if sum == 1 {
				next[i] = 1
			}
		}
		cur = next
	}
	return segments(cur, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
}

func genII15(r rng, n int) ([]any, any) {
	const alphabet = "ABCDXYZ"
	d := make([]byte, 20*n)
	for i := range d {
		d[i] = alphabet[r.Choice(len(alphabet))]
	}
	for k := 0; k < 2; k++ {
		pos := r.RandInt(0, len(d)-15)
		d[pos] = 'A'
		d[pos+r.RandInt(1, 5)] = 'B'
		d[pos+r.RandInt(6, 10)] = 'C'
	}
	return splitAny(d, n, func(b []byte) any { return string(b) }), nil
}

func solveII15(n int, _ any, shards []any) ([]any, error) {
	count, state := 0, 0
	for _, ch := range concatText(shards) {
		switch {
		case state == 0 && ch == 'A':
			state = 1
		case state == 1 && ch == 'B':
			state = 2
		case state == 2 && ch == 'C':
			count++
			state = 0
		}
	}
	return repeat(int64(count), n), nil
}

func genII16(r rng, n int) ([]any, any) {
	h := randInts(r, 10*n, 0, 10)
	for i := 1; i < len(h)-1; i += 5 {
		h[i] = r.RandInt(0, 3)
	}
	return splitInts(h, n), nil
}

func solveII16(n int, _ any, shards []any) ([]any, error) {
	h := concatInts(shards)
	left := make([]int, len(h))
	right := make([]int, len(h))
	for i := range h {
		left[i] = h[i]
		if i > 0 {
			left[i] = max(left[i-1], h[i])
		}
	}
	for i := len(h) - 1; i >= 0; i-- {
		right[i] = h[i]
		if i+1 < len(h) {
			right[i] = max(right[i+1], h[i])
		}
	}
	water := 0
	for i := range h {
		water += min(left[i], right[i]) - h[i]
	}
	return repeat(int64(water), n), nil
}

func genII17(r rng, n int) ([]any, any) { return splitInts(randInts(r, 15*n, 1, 100), n), nil }

func solveII17(n int, _ any, shards []any) ([]any, error) {
	a := concatInts(shards)
	d := []int{}
	for j := 0; j+1 < len(a); j++ {
		d = append(d, a[j+1]-a[j])
	}
	return repeat(pyvalue.Ints(d), n), nil
}

func genII18(r rng, n int) ([]any, any) {
	m := 8 * n
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	shuffle(r, order) // chain order, head first
	next := make([]int, m)
	for k, node := range order {
		next[node] = -1
		if k+1 < m {
			next[node] = order[k+1]
		}
	}
	holder := make([]int, m) // records in id order, then shuffled
	for i := range holder {
		holder[i] = i
	}
	shuffle(r, holder)
	return splitAny(holder, n, func(ids []int) any {
		l := &pyvalue.List{}
		for _, id := range ids {
			l.Items = append(l.Items, &pyvalue.Dict{Keys: []any{"id", "next"}, Vals: []any{int64(id), int64(next[id])}})
		}
		return l
	}), nil
}

func solveII18(n int, _ any, shards []any) ([]any, error) {
	next := map[int]int{}
	var ids []int
	for _, s := range shards {
		for _, rec := range asItems(s) {
			id, nx := int(field(rec, "id").(int64)), int(field(rec, "next").(int64))
			if _, dup := next[id]; dup {
				return nil, fmt.Errorf("node %d appears twice", id)
			}
			next[id] = nx
			ids = append(ids, id)
		}
	}
	pointed := map[int]bool{}
	for _, nx := range next {
		if nx != -1 {
			if _, ok := next[nx]; !ok {
				return nil, fmt.Errorf("next %d is not a node", nx)
			}
			pointed[nx] = true
		}
	}
	head := -1
	for _, id := range ids {
		if !pointed[id] {
			if head != -1 {
				return nil, errors.New("records do not form one list (several heads)")
			}
			head = id
		}
	}
	if head == -1 {
		return nil, errors.New("records do not form one list (no head)")
	}
	gold := &pyvalue.Dict{}
	for node, rank := head, 0; node != -1; node, rank = next[node], rank+1 {
		if rank >= len(ids) {
			return nil, errors.New("records do not form one list (cycle)")
		}
		gold.Keys = append(gold.Keys, strconv.Itoa(node))
		gold.Vals = append(gold.Vals, int64(rank))
	}
	if len(gold.Keys) != len(ids) {
		return nil, errors.New("records do not form one list (unreachable nodes)")
	}
	return repeat(gold, n), nil
}

func genII19(r rng, n int) ([]any, any) {
	a := randInts(r, 15*n, 1, 50)
	sort.Ints(a)
	return splitInts(a, n), nil
}

func solveII19(n int, _ any, shards []any) ([]any, error) {
	a := concatInts(shards)
	sort.Ints(a)
	return repeat(pyvalue.Ints(slices.Compact(a)), n), nil
}

func genII20(_ rng, n int) ([]any, any) {
	blocks := make([]string, 5*n)
	for i := range blocks {
		blocks[i] = fmt.Sprintf("Block_%d_Data", i)
	}
	return splitStrings(blocks, n), nil
}

func solveII20(n int, _ any, shards []any) ([]any, error) {
	blocks := concatStrings(shards)
	hashes := make([]int, len(blocks))
	h := 0
	for i, b := range blocks {
		sum := 0
		for _, c := range b {
			sum += int(c)
		}
		h = ((sum % 10000) ^ h) % 10000
		hashes[i] = h
	}
	return segments(hashes, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
}

// ---------------------------------------------------------------- Level III

func genIII21(r rng, n int) ([]any, any) {
	a := randInts(r, 20*n, 1, 1000)
	shuffle(r, a)
	return splitInts(a, n), nil
}

func solveIII21(n int, _ any, shards []any) ([]any, error) {
	a := concatInts(shards)
	sort.Ints(a)
	return segments(a, lens(shards), func(s []int) any { return pyvalue.Ints(s) })
}

func genIII22(r rng, n int) ([]any, any) {
	a := randInts(r, 25*n, 1, 1000)
	shuffle(r, a)
	return splitInts(a, n), nil
}

func solveIII22(n int, _ any, shards []any) ([]any, error) {
	a := concatInts(shards)
	if len(a) == 0 {
		return nil, errNoData
	}
	sort.Ints(a)
	return repeat(int64(a[len(a)/2]), n), nil
}

type edge struct{ u, v int }

func splitEdges(edges []edge, n int) []any {
	return splitAny(edges, n, func(es []edge) any {
		l := &pyvalue.List{Items: make([]any, len(es))}
		for i, e := range es {
			l.Items[i] = pyvalue.TupleOf(int64(e.u), int64(e.v))
		}
		return l
	})
}

func concatEdges(shards []any, nodes int) ([]edge, error) {
	var out []edge
	for _, s := range shards {
		for _, it := range asItems(s) {
			t := asItems(it)
			e := edge{int(t[0].(int64)), int(t[1].(int64))}
			if e.u < 0 || e.u >= nodes || e.v < 0 || e.v >= nodes {
				return nil, fmt.Errorf("edge (%d, %d) outside nodes 0..%d", e.u, e.v, nodes-1)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func genIII23(r rng, n int) ([]any, any) {
	m := 10 * n
	var edges []edge
	for k := 0; k < 20*n; k++ {
		u := r.RandInt(0, m-1)
		v := r.RandInt(0, m-1)
		if u != v {
			edges = append(edges, edge{u, v})
		}
	}
	shuffle(r, edges)
	return splitEdges(edges, n), nil
}

func solveIII23(n int, _ any, shards []any) ([]any, error) {
	m := 10 * n
	edges, err := concatEdges(shards, m)
	if err != nil {
		return nil, err
	}
	parent := make([]int, m)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	comps := m
	for _, e := range edges {
		a, b := find(e.u), find(e.v)
		if a != b {
			parent[a] = b
			comps--
		}
	}
	return repeat(int64(comps), n), nil
}

func genIII24(r rng, n int) ([]any, any) {
	m := 8 * n
	adj := make([]map[int]bool, m)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	var edges []edge
	for k := 0; k < 16*n; k++ {
		u := r.RandInt(0, m-1)
		v := r.RandInt(0, m-1)
		if u != v && !adj[u][v] {
			adj[u][v], adj[v][u] = true, true
			edges = append(edges, edge{u, v})
		}
	}
	shuffle(r, edges)
	return splitEdges(edges, n), nil
}

func solveIII24(n int, _ any, shards []any) ([]any, error) {
	m := 8 * n
	edges, err := concatEdges(shards, m)
	if err != nil {
		return nil, err
	}
	adj := make([][]int, m)
	for _, e := range edges {
		adj[e.u] = append(adj[e.u], e.v)
		adj[e.v] = append(adj[e.v], e.u)
	}
	dist := make([]int, m)
	for i := range dist {
		dist[i] = -1
	}
	dist[0] = 0
	queue := []int{0}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range adj[x] {
			if dist[y] < 0 {
				dist[y] = dist[x] + 1
				queue = append(queue, y)
			}
		}
	}
	gold := &pyvalue.Dict{}
	for i, d := range dist {
		gold.Keys = append(gold.Keys, strconv.Itoa(i))
		gold.Vals = append(gold.Vals, int64(d))
	}
	return repeat(gold, n), nil
}

// K-means: K initial centroids.
const kmeansK = 3

func genIII25(r rng, n int) ([]any, any) {
	pts := make([][2]float64, 20*n)
	for i := range pts {
		x := r.Uniform(0, 100)
		pts[i] = [2]float64{x, r.Uniform(0, 100)}
	}
	cents := &pyvalue.List{}
	for k := 0; k < kmeansK; k++ {
		x := r.Uniform(0, 100)
		cents.Items = append(cents.Items, pyvalue.TupleOf(x, r.Uniform(0, 100)))
	}
	shuffle(r, pts)
	return splitAny(pts, n, func(ps [][2]float64) any {
		l := &pyvalue.List{Items: make([]any, len(ps))}
		for i, p := range ps {
			l.Items[i] = pyvalue.TupleOf(p[0], p[1])
		}
		return l
	}), cents
}

// paramsShapeIII25 is the shape of III-25's parameters: the initial centroids.
var paramsShapeIII25 = shList(shTuple(shFloat, shFloat))

func solveIII25(n int, params any, shards []any) ([]any, error) {
	if params == nil {
		return nil, errors.New("III-25 needs its parameters (the initial centroids)")
	}
	cl := asItems(params)
	if len(cl) != kmeansK {
		return nil, fmt.Errorf("III-25 needs %d initial centroids, got %d", kmeansK, len(cl))
	}
	cents := make([][2]float64, kmeansK)
	for k, c := range cl {
		xy := asFloats(c)
		cents[k] = [2]float64{xy[0], xy[1]}
	}
	var xs, ys [kmeansK][]float64
	for _, s := range shards {
		for _, it := range asItems(s) {
			p := asFloats(it)
			best, bestD := 0, 0.0
			for k, c := range cents {
				dx, dy := p[0]-c[0], p[1]-c[1]
				d := float64(dx*dx) + float64(dy*dy)
				if k == 0 || d < bestD {
					best, bestD = k, d
				}
			}
			xs[best] = append(xs[best], p[0])
			ys[best] = append(ys[best], p[1])
		}
	}
	gold := &pyvalue.List{}
	for k := range cents {
		if len(xs[k]) == 0 {
			gold.Items = append(gold.Items, pyvalue.TupleOf(pyRound(cents[k][0], 2), pyRound(cents[k][1], 2)))
			continue
		}
		l := float64(len(xs[k]))
		gold.Items = append(gold.Items, pyvalue.TupleOf(pyRound(pySum(xs[k])/l, 2), pyRound(pySum(ys[k])/l, 2)))
	}
	return repeat(gold, n), nil
}

func genIII26(r rng, n int) ([]any, any) {
	a := make([]int, 30*n)
	for i := range a {
		a[i] = r.Choice(15 * n)
	}
	shuffle(r, a)
	return splitInts(a, n), nil
}

func solveIII26(n int, _ any, shards []any) ([]any, error) {
	return repeat(int64(distinct(concatInts(shards))), n), nil
}

// Collaborative filtering: vector dimension and number of top pairs.
const (
	cfDim  = 5
	cfTopK = 3
)

func genIII27(r rng, n int) ([]any, any) {
	draw := func() [][]float64 {
		vs := make([][]float64, 3*n)
		for i := range vs {
			vs[i] = uniforms(r, cfDim, 0, 1)
		}
		return vs
	}
	users := draw()
	items := draw()
	type rec struct {
		user bool
		id   int
	}
	recs := make([]rec, 0, 6*n)
	for i := range users {
		recs = append(recs, rec{true, i})
	}
	for j := range items {
		recs = append(recs, rec{false, j})
	}
	shuffle(r, recs)
	return splitAny(recs, n, func(rs []rec) any {
		u, it := &pyvalue.Dict{}, &pyvalue.Dict{}
		for _, x := range rs {
			if x.user {
				u.Set(int64(x.id), pyvalue.Floats(users[x.id]))
			} else {
				it.Set(int64(x.id), pyvalue.Floats(items[x.id]))
			}
		}
		return &pyvalue.Dict{Keys: []any{"users", "items"}, Vals: []any{u, it}}
	}), nil
}

func solveIII27(n int, _ any, shards []any) ([]any, error) {
	users, items := map[int][]float64{}, map[int][]float64{}
	collect := func(dst map[int][]float64, d any) error {
		dd := d.(*pyvalue.Dict)
		for i, k := range dd.Keys {
			id := int(k.(int64))
			if _, dup := dst[id]; dup {
				return fmt.Errorf("id %d appears twice", id)
			}
			dst[id] = asFloats(dd.Vals[i])
		}
		return nil
	}
	for _, s := range shards {
		if err := collect(users, field(s, "users")); err != nil {
			return nil, err
		}
		if err := collect(items, field(s, "items")); err != nil {
			return nil, err
		}
	}
	uids := sortedKeys(users)
	iids := sortedKeys(items)
	type score struct {
		u, i int
		s    float64
	}
	scores := make([]score, 0, len(uids)*len(iids))
	for _, u := range uids {
		for _, i := range iids {
			a, b := users[u], items[i]
			if len(a) != len(b) {
				return nil, fmt.Errorf("user %d and item %d have different dimensions", u, i)
			}
			dot := 0.0
			for k := range a {
				dot += float64(a[k] * b[k])
			}
			scores = append(scores, score{u, i, pyRound(dot, 4)})
		}
	}
	slices.SortStableFunc(scores, func(x, y score) int { return cmp.Compare(y.s, x.s) })
	gold := &pyvalue.List{}
	for _, s := range scores[:min(cfTopK, len(scores))] {
		gold.Items = append(gold.Items, pyvalue.TupleOf(int64(s.u), int64(s.i), s.s))
	}
	return repeat(gold, n), nil
}

func sortedKeys(m map[int][]float64) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func genIII28(r rng, n int) ([]any, any) {
	m := 8 * n
	out := make([][]int, m)
	var edges []edge
	for k := 0; k < 16*n; k++ {
		u := r.RandInt(0, m-1)
		v := r.RandInt(0, m-1)
		if u != v && !slices.Contains(out[u], v) {
			out[u] = append(out[u], v)
			edges = append(edges, edge{u, v})
		}
	}
	shuffle(r, edges)
	return splitEdges(edges, n), nil
}

// pageRankDamping is a variable, not a constant, so that 1 - d is computed
// in float64 as Python does (0.15000000000000002), not exactly.
var pageRankDamping = 0.85

func solveIII28(n int, _ any, shards []any) ([]any, error) {
	m := 8 * n
	edges, err := concatEdges(shards, m)
	if err != nil {
		return nil, err
	}
	out := make([][]int, m)
	for _, e := range edges {
		out[e.u] = append(out[e.u], e.v)
	}
	d := pageRankDamping
	rank := make([]float64, m)
	for v := range rank {
		rank[v] = (1 - d) / float64(m)
	}
	for u := 0; u < m; u++ {
		if len(out[u]) == 0 {
			continue
		}
		share := float64(d*(1/float64(m))) / float64(len(out[u]))
		for _, v := range out[u] {
			rank[v] += share
		}
	}
	gold := &pyvalue.Dict{}
	for v, x := range rank {
		gold.Keys = append(gold.Keys, strconv.Itoa(v))
		gold.Vals = append(gold.Vals, pyRound(x, 6))
	}
	return repeat(gold, n), nil
}

type job struct{ id, dur int }

func genIII29(r rng, n int) ([]any, any) {
	jobs := make([]job, 20*n)
	for i := range jobs {
		if i%10 == 0 {
			jobs[i] = job{i, r.RandInt(50, 100)}
		} else {
			jobs[i] = job{i, r.RandInt(1, 10)}
		}
	}
	var heavy, light []job
	for _, j := range jobs {
		if j.id%10 == 0 {
			heavy = append(heavy, j)
		} else {
			light = append(light, j)
		}
	}
	conv := func(js []job) any {
		l := &pyvalue.List{Items: make([]any, len(js))}
		for i, j := range js {
			l.Items[i] = &pyvalue.Dict{Keys: []any{"id", "duration"}, Vals: []any{int64(j.id), int64(j.dur)}}
		}
		return l
	}
	if n == 1 { // our extension: the published code divides by n - 1
		return []any{conv(append(heavy, light...))}, nil
	}
	return append([]any{conv(heavy)}, splitAny(light, n-1, conv)...), nil
}

func solveIII29(n int, _ any, shards []any) ([]any, error) {
	var jobs []job
	total := 0
	for _, s := range shards {
		for _, rec := range asItems(s) {
			j := job{int(field(rec, "id").(int64)), int(field(rec, "duration").(int64))}
			jobs = append(jobs, j)
			total += j.dur
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].id < jobs[b].id })
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].dur > jobs[b].dur })
	loads := make([]int, n)
	for _, j := range jobs {
		k := 0
		for i := range loads {
			if loads[i] < loads[k] {
				k = i
			}
		}
		loads[k] += j.dur
	}
	avg := float64(total) / float64(n)
	sq := make([]float64, n)
	for i, l := range loads {
		dv := float64(l) - avg
		sq[i] = float64(dv * dv)
	}
	gold := &pyvalue.Dict{
		Keys: []any{"variance", "max_load", "min_load"},
		Vals: []any{pyRound(pySum(sq)/float64(n), 2), int64(slices.Max(loads)), int64(slices.Min(loads))},
	}
	return repeat(gold, n), nil
}

func genIII30(r rng, n int) ([]any, any) {
	draw := func() [][]int {
		m := make([][]int, n)
		for i := range m {
			m[i] = randInts(r, n, 1, 10)
		}
		return m
	}
	a := draw()
	b := draw()
	bl := &pyvalue.List{Items: make([]any, n)}
	for i := range b {
		bl.Items[i] = pyvalue.Ints(b[i])
	}
	shards := make([]any, n)
	for i := range shards {
		shards[i] = &pyvalue.Dict{
			Keys: []any{"type", "A_rows", "A_row_indices", "B_matrix"},
			Vals: []any{"rows_and_full_B", pyvalue.ListOf(pyvalue.Ints(a[i])), pyvalue.ListOf(int64(i)), bl},
		}
	}
	return shards, nil
}

func solveIII30(n int, _ any, shards []any) ([]any, error) {
	rows := make([][]int, n)
	var b [][]int
	for si, s := range shards {
		sb := make([][]int, 0, n)
		for _, row := range asItems(field(s, "B_matrix")) {
			sb = append(sb, asInts(row))
		}
		if len(sb) != n {
			return nil, fmt.Errorf("shard %d: B has %d rows, want %d", si, len(sb), n)
		}
		for _, row := range sb {
			if len(row) != n {
				return nil, fmt.Errorf("shard %d: B row of length %d, want %d", si, len(row), n)
			}
		}
		if b == nil {
			b = sb
		}
		idx := asInts(field(s, "A_row_indices"))
		ar := asItems(field(s, "A_rows"))
		if len(idx) != len(ar) {
			return nil, fmt.Errorf("shard %d: %d A rows but %d row indices", si, len(ar), len(idx))
		}
		for k, i := range idx {
			row := asInts(ar[k])
			if i < 0 || i >= n || rows[i] != nil || len(row) != n {
				return nil, fmt.Errorf("shard %d: bad A row %d", si, i)
			}
			rows[i] = row
		}
	}
	c := &pyvalue.List{Items: make([]any, n)}
	for i := range rows {
		if rows[i] == nil {
			return nil, fmt.Errorf("row %d of A is in no shard", i)
		}
		out := make([]int, n)
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				out[j] += rows[i][k] * b[k][j]
			}
		}
		c.Items[i] = pyvalue.Ints(out)
	}
	return repeat(c, n), nil
}
