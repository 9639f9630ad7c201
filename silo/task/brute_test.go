package task

// Independent checks of every instance's gold answers and shard split.
// The code here is deliberately separate from gen.go and simpler: it decodes
// the shards with encoding/json and recomputes each answer by brute force.

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// testNs and seedsFor give the seeded instances checked for every task.
var testNs = []int{1, 2, 5, 10, 20, 50, 100}

func seedsFor(n int) []uint64 {
	if n >= 50 {
		return []uint64{1, 2}
	}
	return []uint64{1, 2, 3, 4, 5, 6}
}

func dec[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s as %T: %v", truncate(raw), v, err)
	}
	return v
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func decAll[T any](t *testing.T, raws []json.RawMessage) []T {
	t.Helper()
	out := make([]T, len(raws))
	for i, r := range raws {
		out[i] = dec[T](t, r)
	}
	return out
}

func flat[T any](xs [][]T) []T {
	var out []T
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

func round2(x float64, nd int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', nd, 64), 64)
	return f
}

func naiveSum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// chunkLens is the expected shard sizes under the published rule.
func chunkLens(total, n int) []int {
	c := total / n
	out := make([]int, n)
	for i := range out {
		out[i] = c
	}
	out[n-1] = total - (n-1)*c
	return out
}

func checkChunks(t *testing.T, what string, got []int, total int) {
	t.Helper()
	if want := chunkLens(total, len(got)); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: shard sizes %v, want %v (chunk rule, remainder to the last agent)", what, got, want)
	}
}

func sizes[T any](xs [][]T) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = len(x)
	}
	return out
}

type node struct {
	ID   int `json:"id"`
	Next int `json:"next"`
}

type jobRec struct {
	ID       int `json:"id"`
	Duration int `json:"duration"`
}

type cfShard struct {
	Users map[string][]float64 `json:"users"`
	Items map[string][]float64 `json:"items"`
}

type mmShard struct {
	Type        string  `json:"type"`
	ARows       [][]int `json:"A_rows"`
	ARowIndices []int   `json:"A_row_indices"`
	B           [][]int `json:"B_matrix"`
}

type lbGold struct {
	Variance float64 `json:"variance"`
	MaxLoad  int     `json:"max_load"`
	MinLoad  int     `json:"min_load"`
}

// bruteCheck recomputes in's golds independently and checks the split.
func bruteCheck(t *testing.T, in *Instance) {
	t.Helper()
	n := in.N
	what := fmt.Sprintf("%s n=%d %s seed=%d", in.Task.ID, n, in.Mode, in.Seed)
	if len(in.Shards) != n || len(in.Expected) != n || len(in.Deps) != n {
		t.Fatalf("%s: %d shards, %d golds, %d deps", what, len(in.Shards), len(in.Expected), len(in.Deps))
	}
	// global answers: every agent's gold is the same
	if !in.Task.Segmented {
		for i := 1; i < n; i++ {
			if string(in.Expected[i]) != string(in.Expected[0]) {
				t.Fatalf("%s: global task but agent %d's gold differs", what, i)
			}
		}
	}
	same := func(want any, gotRaw json.RawMessage, agent int) {
		t.Helper()
		got := reflect.New(reflect.TypeOf(want)).Interface()
		if err := json.Unmarshal(gotRaw, got); err != nil {
			t.Fatalf("%s agent %d: gold %s: %v", what, agent, truncate(gotRaw), err)
		}
		if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, want) {
			t.Errorf("%s agent %d: gold %v, brute force %v", what, agent, truncate(gotRaw), want)
		}
	}
	global := func(want any) {
		t.Helper()
		same(want, in.Expected[0], 0)
	}
	perAgent := func(want [][]int) {
		t.Helper()
		for i := range want {
			same(want[i], in.Expected[i], i)
		}
	}

	switch in.Task.ID {
	case "I-01", "I-05", "I-06", "I-08", "I-09":
		sh := decAll[[]int](t, in.Shards)
		per := map[string]int{"I-01": 20, "I-05": 30, "I-06": 20, "I-08": 30, "I-09": 30}[in.Task.ID]
		checkChunks(t, what, sizes(sh), per*n)
		all := flat(sh)
		switch in.Task.ID {
		case "I-01":
			m := math.MinInt
			for _, x := range all {
				if x > m {
					m = x
				}
				if x < -1000 || x > 1000 {
					t.Fatalf("%s: value %d out of range", what, x)
				}
			}
			global(m)
		case "I-05":
			c := 0
			for _, x := range all {
				if 100 <= x && x <= 500 {
					c++
				}
			}
			global(c)
		case "I-06":
			x := 0
			for _, v := range all {
				x ^= v
			}
			global(x)
		case "I-08":
			seen := map[int]bool{}
			for _, v := range all {
				if v < 0 || v >= 15*n {
					t.Fatalf("%s: value %d outside range(15N)", what, v)
				}
				seen[v] = true
			}
			global(len(seen))
		case "I-09":
			s := append([]int(nil), all...)
			sort.Slice(s, func(a, b int) bool { return s[a] > s[b] })
			global(s[:10])
		}
	case "I-02", "I-03", "I-04":
		sh := decAll[[]string](t, in.Shards)
		per := map[string]int{"I-02": 30, "I-03": 25, "I-04": 15}[in.Task.ID]
		checkChunks(t, what, sizes(sh), per*n)
		all := flat(sh)
		switch in.Task.ID {
		case "I-02":
			c := 0
			for i, w := range all {
				if i%10 == 0 && w != "apple" {
					t.Fatalf("%s: position %d not planted", what, i)
				}
				if w == "apple" {
					c++
				}
			}
			global(c)
		case "I-03":
			cnt := map[string]int{}
			for _, v := range all {
				cnt[v]++
			}
			names := []string{"Candidate_A", "Candidate_B", "Candidate_C", "Candidate_D"}
			best := ""
			for _, c := range names {
				if best == "" || cnt[c] > cnt[best] {
					best = c
				}
			}
			if 2*cnt[best] < len(all) {
				t.Errorf("%s: winner holds less than half the votes", what)
			}
			global(best)
		case "I-04":
			errs := 0
			for _, l := range all {
				if strings.Contains(l, "ERROR") {
					errs++
				}
			}
			if errs > 1 {
				t.Fatalf("%s: %d error lines", what, errs)
			}
			global(errs == 1)
		}
	case "I-07", "I-10":
		sh := decAll[[]float64](t, in.Shards)
		per := map[string]int{"I-07": 25, "I-10": 30}[in.Task.ID]
		checkChunks(t, what, sizes(sh), per*n)
		all := flat(sh)
		mean := naiveSum(all) / float64(len(all))
		if in.Task.ID == "I-07" {
			global(round2(mean, 2))
		} else {
			v := 0.0
			for _, x := range all {
				v += float64((x - mean) * (x - mean))
			}
			global(round2(math.Sqrt(v/float64(len(all))), 2))
		}

	case "II-11", "II-12", "II-14", "II-16", "II-17", "II-19":
		sh := decAll[[]int](t, in.Shards)
		per := map[string]int{"II-11": 15, "II-12": 15, "II-14": 10, "II-16": 10, "II-17": 15, "II-19": 15}[in.Task.ID]
		checkChunks(t, what, sizes(sh), per*n)
		a := flat(sh)
		switch in.Task.ID {
		case "II-11":
			var want [][]int
			pos := 0
			for _, s := range sh {
				var seg []int
				for range s {
					sum := 0
					for k := 0; k <= pos; k++ {
						sum += a[k]
					}
					seg = append(seg, sum)
					pos++
				}
				want = append(want, seg)
			}
			perAgent(want)
		case "II-12":
			want := make([]float64, 0)
			for j := 1; j+1 < len(a); j++ { // centred windows
				want = append(want, round2(float64(a[j-1]+a[j]+a[j+1])/3, 2))
			}
			global(want)
		case "II-14":
			cells := append([]int(nil), a...)
			for step := 0; step < 5; step++ {
				padded := append(append([]int{0}, cells...), 0)
				for i := range cells {
					if padded[i]+padded[i+1]+padded[i+2] == 1 {
						cells[i] = 1
					} else {
						cells[i] = 0
					}
				}
			}
			var want [][]int
			for i, l := range sizes(sh) {
				start := i * sizes(sh)[0]
				want = append(want, cells[start:start+l])
			}
			perAgent(want)
		case "II-16":
			w := 0
			for i := range a {
				lm, rm := 0, 0
				for k := 0; k <= i; k++ {
					lm = max(lm, a[k])
				}
				for k := i; k < len(a); k++ {
					rm = max(rm, a[k])
				}
				w += min(lm, rm) - a[i]
			}
			global(w)
		case "II-17":
			want := make([]int, 0)
			for j := 1; j < len(a); j++ {
				want = append(want, a[j]-a[j-1])
			}
			global(want)
		case "II-19":
			if !sort.IntsAreSorted(a) {
				t.Fatalf("%s: data not sorted", what)
			}
			seen := map[int]bool{}
			var want []int
			for _, x := range a {
				if !seen[x] {
					seen[x] = true
					want = append(want, x)
				}
			}
			global(want)
		}
	case "II-13", "II-15":
		sh := decAll[string](t, in.Shards)
		lens := make([]int, n)
		for i, s := range sh {
			lens[i] = len(s)
		}
		per := map[string]int{"II-13": 15, "II-15": 20}[in.Task.ID]
		checkChunks(t, what, lens, per*n)
		s := strings.Join(sh, "")
		if in.Task.ID == "II-13" {
			if !strings.Contains(s, "racecar") {
				t.Fatalf("%s: racecar not planted", what)
			}
			best := 0
			for c := 0; c < len(s); c++ {
				for _, w := range [][2]int{{c, c}, {c, c + 1}} {
					lo, hi := w[0], w[1]
					for lo >= 0 && hi < len(s) && s[lo] == s[hi] {
						lo--
						hi++
					}
					best = max(best, hi-lo-1)
				}
			}
			global(best)
		} else {
			c, at := 0, 0
			for {
				ia := strings.IndexByte(s[at:], 'A')
				if ia < 0 {
					break
				}
				ib := strings.IndexByte(s[at+ia:], 'B')
				if ib < 0 {
					break
				}
				ic := strings.IndexByte(s[at+ia+ib:], 'C')
				if ic < 0 {
					break
				}
				c++
				at += ia + ib + ic + 1
			}
			if c < 1 {
				t.Errorf("%s: planted patterns not found", what)
			}
			global(c)
		}
	case "II-18":
		sh := decAll[[]node](t, in.Shards)
		checkChunks(t, what, sizes(sh), 8*n)
		all := flat(sh)
		next := map[int]int{}
		isNext := map[int]bool{}
		for _, r := range all {
			next[r.ID] = r.Next
			isNext[r.Next] = true
		}
		if len(next) != 8*n {
			t.Fatalf("%s: %d distinct nodes", what, len(next))
		}
		want := map[string]int{}
		for id := range next {
			// rank = number of predecessors: walk from every other node? Walk from the head.
			head := -1
			for k := range next {
				if !isNext[k] {
					head = k
				}
			}
			r := 0
			for x := head; x != id; x = next[x] {
				r++
			}
			want[strconv.Itoa(id)] = r
		}
		global(want)
	case "II-20":
		sh := decAll[[]string](t, in.Shards)
		checkChunks(t, what, sizes(sh), 5*n)
		var want [][]int
		h := 0
		for i, s := range sh {
			var seg []int
			for k, b := range s {
				if b != fmt.Sprintf("Block_%d_Data", 5*i+k) {
					t.Fatalf("%s: block %q", what, b)
				}
				sum := 0
				for _, c := range []byte(b) {
					sum += int(c)
				}
				h = (sum%10000 ^ h) % 10000
				seg = append(seg, h)
			}
			want = append(want, seg)
		}
		if n == 2 && !reflect.DeepEqual(want, [][]int{{1107, 7, 1106, 4, 1107}, {11, 1106, 8, 1107, 15}}) {
			t.Errorf("II-20 n=2: %v, want the design notes' check value", want)
		}
		perAgent(want)

	case "III-21", "III-22", "III-26":
		sh := decAll[[]int](t, in.Shards)
		per := map[string]int{"III-21": 20, "III-22": 25, "III-26": 30}[in.Task.ID]
		checkChunks(t, what, sizes(sh), per*n)
		all := flat(sh)
		s := append([]int(nil), all...)
		sort.Ints(s)
		switch in.Task.ID {
		case "III-21":
			var want [][]int
			for i := 0; i < n; i++ {
				want = append(want, s[20*i:20*i+20])
			}
			perAgent(want)
		case "III-22":
			global(s[len(s)/2])
		case "III-26":
			d := 0
			for i := range s {
				if i == 0 || s[i] != s[i-1] {
					d++
				}
			}
			global(d)
		}
	case "III-23", "III-24", "III-28":
		sh := decAll[[][2]int](t, in.Shards)
		all := flat(sh)
		checkChunks(t, what, sizes(sh), len(all))
		m := map[string]int{"III-23": 10, "III-24": 8, "III-28": 8}[in.Task.ID] * n
		for _, e := range all {
			if e[0] == e[1] || e[0] < 0 || e[1] < 0 || e[0] >= m || e[1] >= m {
				t.Fatalf("%s: bad edge %v", what, e)
			}
		}
		switch in.Task.ID {
		case "III-23":
			adj := make([][]int, m)
			for _, e := range all {
				adj[e[0]] = append(adj[e[0]], e[1])
				adj[e[1]] = append(adj[e[1]], e[0])
			}
			seen := make([]bool, m)
			comps := 0
			var dfs func(int)
			dfs = func(x int) {
				seen[x] = true
				for _, y := range adj[x] {
					if !seen[y] {
						dfs(y)
					}
				}
			}
			for x := 0; x < m; x++ {
				if !seen[x] {
					comps++
					dfs(x)
				}
			}
			global(comps)
		case "III-24":
			und := map[[2]int]bool{}
			for _, e := range all {
				k := [2]int{min(e[0], e[1]), max(e[0], e[1])}
				if und[k] {
					t.Fatalf("%s: duplicate edge %v", what, e)
				}
				und[k] = true
			}
			dist := make([]int, m)
			for i := range dist {
				dist[i] = math.MaxInt32
			}
			dist[0] = 0
			for changed := true; changed; { // Bellman-Ford relaxation
				changed = false
				for _, e := range all {
					for _, uv := range [][2]int{{e[0], e[1]}, {e[1], e[0]}} {
						if dist[uv[0]] != math.MaxInt32 && dist[uv[0]]+1 < dist[uv[1]] {
							dist[uv[1]] = dist[uv[0]] + 1
							changed = true
						}
					}
				}
			}
			want := map[string]int{}
			for i, d := range dist {
				if d == math.MaxInt32 {
					d = -1
				}
				want[strconv.Itoa(i)] = d
			}
			global(want)
		case "III-28":
			out := make([]int, m)
			has := map[[2]int]bool{}
			for _, e := range all {
				if has[e] {
					t.Fatalf("%s: duplicate edge %v", what, e)
				}
				has[e] = true
				out[e[0]]++
			}
			d := 0.85
			want := map[string]float64{}
			for v := 0; v < m; v++ {
				r := (1 - d) / float64(m)
				for u := 0; u < m; u++ {
					if has[[2]int{u, v}] {
						r += d * (1 / float64(m)) / float64(out[u])
					}
				}
				want[strconv.Itoa(v)] = round2(r, 6)
			}
			global(want)
		}
	case "III-25":
		sh := decAll[[][2]float64](t, in.Shards)
		checkChunks(t, what, sizes(sh), 20*n)
		cents := dec[[][2]float64](t, in.Params)
		if len(cents) != 3 {
			t.Fatalf("%s: %d centroids", what, len(cents))
		}
		var sx, sy [3][]float64
		for _, p := range flat(sh) {
			best := 0
			for k := 1; k < 3; k++ {
				dk := math.Hypot(p[0]-cents[k][0], p[1]-cents[k][1])
				db := math.Hypot(p[0]-cents[best][0], p[1]-cents[best][1])
				if dk < db {
					best = k
				}
			}
			sx[best] = append(sx[best], p[0])
			sy[best] = append(sy[best], p[1])
		}
		want := make([][2]float64, 3)
		for k := range want {
			if len(sx[k]) == 0 {
				want[k] = [2]float64{round2(cents[k][0], 2), round2(cents[k][1], 2)}
			} else {
				want[k] = [2]float64{round2(naiveSum(sx[k])/float64(len(sx[k])), 2), round2(naiveSum(sy[k])/float64(len(sy[k])), 2)}
			}
		}
		global(want)
	case "III-27":
		sh := decAll[cfShard](t, in.Shards)
		users, items := map[int][]float64{}, map[int][]float64{}
		var per []int
		for _, s := range sh {
			per = append(per, len(s.Users)+len(s.Items))
			for k, v := range s.Users {
				id, _ := strconv.Atoi(k)
				users[id] = v
			}
			for k, v := range s.Items {
				id, _ := strconv.Atoi(k)
				items[id] = v
			}
		}
		checkChunks(t, what, per, 6*n)
		if len(users) != 3*n || len(items) != 3*n {
			t.Fatalf("%s: %d users, %d items", what, len(users), len(items))
		}
		score := func(u, i int) float64 {
			s := 0.0
			for k := 0; k < 5; k++ {
				s += float64(users[u][k] * items[i][k])
			}
			return round2(s, 4)
		}
		var want [][3]float64
		taken := map[[2]int]bool{}
		for len(want) < 3 {
			bu, bi := -1, -1
			for u := 0; u < 3*n; u++ {
				for i := 0; i < 3*n; i++ {
					if taken[[2]int{u, i}] {
						continue
					}
					if bu < 0 || score(u, i) > score(bu, bi) {
						bu, bi = u, i
					}
				}
			}
			taken[[2]int{bu, bi}] = true
			want = append(want, [3]float64{float64(bu), float64(bi), score(bu, bi)})
		}
		global(want)
	case "III-29":
		sh := decAll[[]jobRec](t, in.Shards)
		all := flat(sh)
		if len(all) != 20*n {
			t.Fatalf("%s: %d tasks", what, len(all))
		}
		if n > 1 {
			for _, j := range sh[0] {
				if j.ID%10 != 0 {
					t.Errorf("%s: agent 0 holds light task %d", what, j.ID)
				}
			}
			if len(sh[0]) != 2*n {
				t.Errorf("%s: agent 0 holds %d tasks, want %d", what, len(sh[0]), 2*n)
			}
			checkChunks(t, what, sizes(sh[1:]), 18*n)
		}
		total := 0
		for _, j := range all {
			total += j.Duration
		}
		sort.Slice(all, func(a, b int) bool {
			if all[a].Duration != all[b].Duration {
				return all[a].Duration > all[b].Duration
			}
			return all[a].ID < all[b].ID
		})
		loads := make([]int, n)
		for _, j := range all {
			k := 0
			for i := 1; i < n; i++ {
				if loads[i] < loads[k] {
					k = i
				}
			}
			loads[k] += j.Duration
		}
		avg := float64(total) / float64(n)
		v := 0.0
		lo, hi := loads[0], loads[0]
		for _, l := range loads {
			v += float64((float64(l) - avg) * (float64(l) - avg))
			lo, hi = min(lo, l), max(hi, l)
		}
		global(lbGold{Variance: round2(v/float64(n), 2), MaxLoad: hi, MinLoad: lo})
	case "III-30":
		sh := decAll[mmShard](t, in.Shards)
		b := sh[0].B
		c := make([][]int, n)
		for i, s := range sh {
			if s.Type != "rows_and_full_B" || len(s.ARows) != 1 || !reflect.DeepEqual(s.ARowIndices, []int{i}) || !reflect.DeepEqual(s.B, b) {
				t.Fatalf("%s: shard %d malformed", what, i)
			}
			c[i] = make([]int, n)
			for j := 0; j < n; j++ {
				for k := 0; k < n; k++ {
					c[i][j] += s.ARows[0][k] * b[k][j]
				}
			}
		}
		global(c)
	default:
		t.Fatalf("no brute force for %s", in.Task.ID)
	}
}

func TestBruteForceSeeded(t *testing.T) {
	for _, task := range All() {
		for _, n := range testNs {
			for _, seed := range seedsFor(n) {
				in, err := Seeded(task.ID, n, seed)
				if err != nil {
					t.Fatal(err)
				}
				bruteCheck(t, in)
			}
		}
	}
}

func TestBruteForceOfficial(t *testing.T) {
	for _, n := range officialCounts {
		for _, task := range All() {
			in, err := Official(task.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			bruteCheck(t, in)
		}
	}
}
