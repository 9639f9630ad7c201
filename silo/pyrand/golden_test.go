package pyrand

// The golden data in testdata/golden.json come from CPython's own random
// module. To regenerate them (standard library only), from this directory:
//
//	python3 testdata/gen_golden.py > testdata/golden.json
//
// TestGoldenFileIsCurrent re-runs the script with every python3 it finds and
// fails if the checked-in file differs (apart from the "meta" entry, which
// names the interpreter). Without python3 that test is skipped, except in CI
// (environment variable CI set), where it fails.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/coordbench/coordbench/internal/testenv"
)

const goldenPath = "testdata/golden.json"

type goldenSeed struct {
	Seed          int64               `json:"seed"`
	State         []uint32            `json:"state"`
	Random        []float64           `json:"random"`
	GetRandBits   map[string][]uint64 `json:"getrandbits"`
	RandIntPM1000 []int               `json:"randint_pm1000"`
	RandInt0255   []int               `json:"randint_0_255"`
	RandRange1e6  []int               `json:"randrange_0_1e6"`
	Choice        map[string][]int    `json:"choice"`
	Shuffle37     []int               `json:"shuffle37"`
	Uniform0100   []float64           `json:"uniform_0_100"`
	Sample10010   []int               `json:"sample_100_10"`
	Sample1e620   []int               `json:"sample_1e6_20"`
	SampleThen    []json.RawMessage   `json:"sample_then_random"`
}

type golden struct {
	Meta        map[string]string   `json:"meta"`
	Seeds       []goldenSeed        `json:"seeds"`
	SampleSweep [][]json.RawMessage `json:"sample_sweep"`
	Interleaved struct {
		Seed  int64               `json:"seed"`
		Draws int                 `json:"draws"`
		Ops   [][]json.RawMessage `json:"ops"`
	} `json:"interleaved"`
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	if len(g.Seeds) != 6 {
		t.Fatalf("%s: %d seeds, want 6", goldenPath, len(g.Seeds))
	}
	return &g
}

// same reports bit-exact float equality.
func same(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestGoldenSeedState(t *testing.T) {
	g := loadGolden(t)
	for _, s := range g.Seeds {
		st := New(s.Seed).State()
		if !slices.Equal(st[:], s.State) {
			t.Errorf("seed %d: state after seeding differs from CPython getstate()", s.Seed)
		}
	}
}

func TestGoldenRandom(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		r := New(s.Seed)
		for i, want := range s.Random {
			if got := r.Random(); !same(got, want) {
				t.Fatalf("seed %d: random() #%d = %s, want %s", s.Seed, i, fmtFloat(got), fmtFloat(want))
			}
		}
	}
}

func TestGoldenGetRandBits(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		r := New(s.Seed) // one stream for all widths, in this order
		for _, k := range []int{1, 7, 32, 33, 53, 64} {
			want := s.GetRandBits[strconv.Itoa(k)]
			if len(want) != 20 {
				t.Fatalf("seed %d: golden has %d values for k=%d", s.Seed, len(want), k)
			}
			for i, w := range want {
				if got := r.GetRandBits(k); got != w {
					t.Fatalf("seed %d: getrandbits(%d) #%d = %d, want %d", s.Seed, k, i, got, w)
				}
			}
		}
	}
}

func TestGoldenRandIntRandRange(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		cases := []struct {
			name string
			want []int
			draw func(r *Random) int
		}{
			{"randint(-1000, 1000)", s.RandIntPM1000, func(r *Random) int { return r.RandInt(-1000, 1000) }},
			{"randint(0, 255)", s.RandInt0255, func(r *Random) int { return r.RandInt(0, 255) }},
			{"randrange(0, 10**6)", s.RandRange1e6, func(r *Random) int { return r.RandRange(0, 1_000_000) }},
		}
		for _, c := range cases {
			if len(c.want) == 0 {
				t.Fatalf("seed %d: no golden values for %s", s.Seed, c.name)
			}
			r := New(s.Seed)
			for i, w := range c.want {
				if got := c.draw(r); got != w {
					t.Fatalf("seed %d: %s #%d = %d, want %d", s.Seed, c.name, i, got, w)
				}
			}
		}
	}
}

func TestGoldenChoice(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		r := New(s.Seed) // one stream for all lengths, in this order
		for _, n := range []int{1, 2, 7, 1000} {
			want := s.Choice[strconv.Itoa(n)]
			if len(want) != 20 {
				t.Fatalf("seed %d: golden has %d choices for length %d", s.Seed, len(want), n)
			}
			for i, w := range want {
				if got := r.Choice(n); got != w {
					t.Fatalf("seed %d: choice(len %d) #%d = %d, want %d", s.Seed, n, i, got, w)
				}
			}
		}
	}
}

func TestGoldenShuffle(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		x := make([]int, 37)
		for i := range x {
			x[i] = i
		}
		New(s.Seed).Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		if !slices.Equal(x, s.Shuffle37) {
			t.Errorf("seed %d: shuffle(range(37)) = %v, want %v", s.Seed, x, s.Shuffle37)
		}
	}
}

func TestGoldenUniform(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		r := New(s.Seed)
		for i, want := range s.Uniform0100 {
			if got := r.Uniform(0, 100); !same(got, want) {
				t.Fatalf("seed %d: uniform(0, 100) #%d = %s, want %s", s.Seed, i, fmtFloat(got), fmtFloat(want))
			}
		}
	}
}

func TestGoldenSample(t *testing.T) {
	for _, s := range loadGolden(t).Seeds {
		if got := New(s.Seed).Sample(100, 10); !slices.Equal(got, s.Sample10010) {
			t.Errorf("seed %d: sample(range(100), 10) = %v, want %v", s.Seed, got, s.Sample10010)
		}
		if got := New(s.Seed).Sample(1_000_000, 20); !slices.Equal(got, s.Sample1e620) {
			t.Errorf("seed %d: sample(range(10**6), 20) = %v, want %v", s.Seed, got, s.Sample1e620)
		}
		var wantSample []int
		var wantNext float64
		if len(s.SampleThen) != 2 || json.Unmarshal(s.SampleThen[0], &wantSample) != nil || json.Unmarshal(s.SampleThen[1], &wantNext) != nil {
			t.Fatalf("seed %d: malformed sample_then_random", s.Seed)
		}
		r := New(s.Seed)
		if got := r.Sample(100, 10); !slices.Equal(got, wantSample) {
			t.Errorf("seed %d: sample(range(100), 10) = %v, want %v", s.Seed, got, wantSample)
		}
		if got := r.Random(); !same(got, wantNext) {
			t.Errorf("seed %d: random() after sample = %s, want %s", s.Seed, fmtFloat(got), fmtFloat(wantNext))
		}
	}
}

// TestGoldenSampleSweep checks sample sizes on both sides of CPython's switch
// between the pool and the set method, all on one seed-42 stream.
func TestGoldenSampleSweep(t *testing.T) {
	g := loadGolden(t)
	if len(g.SampleSweep) < 100 {
		t.Fatalf("sample sweep has only %d cases", len(g.SampleSweep))
	}
	r := New(42)
	for i, c := range g.SampleSweep {
		var n, k int
		if len(c) != 3 || json.Unmarshal(c[0], &n) != nil || json.Unmarshal(c[1], &k) != nil {
			t.Fatalf("sample sweep case %d malformed", i)
		}
		if n < 0 { // end marker: the next random() after the sweep
			var want []float64
			if json.Unmarshal(c[2], &want) != nil || len(want) != 1 {
				t.Fatalf("sample sweep end marker malformed")
			}
			if got := r.Random(); !same(got, want[0]) {
				t.Fatalf("random() after sweep = %s, want %s", fmtFloat(got), fmtFloat(want[0]))
			}
			if i != len(g.SampleSweep)-1 {
				t.Fatalf("sample sweep end marker at %d of %d", i, len(g.SampleSweep))
			}
			return
		}
		var want []int
		if json.Unmarshal(c[2], &want) != nil {
			t.Fatalf("sample sweep case %d malformed", i)
		}
		if got := r.Sample(n, k); !slices.Equal(got, want) {
			t.Fatalf("case %d: sample(range(%d), %d) = %v, want %v", i, n, k, got, want)
		}
	}
	t.Fatal("sample sweep has no end marker")
}

// TestGoldenInterleaved replays one long mixed stream (seed 42, never
// reseeded, about 10,000 draws), so that a drift anywhere shows up.
func TestGoldenInterleaved(t *testing.T) {
	g := loadGolden(t)
	in := g.Interleaved
	if in.Draws < 10000 || len(in.Ops) == 0 {
		t.Fatalf("interleaved sequence too short: %d draws, %d ops", in.Draws, len(in.Ops))
	}
	if strconv.IntSize < 64 {
		t.Skip("the interleaved sequence uses int64 arguments; int is narrower on this platform")
	}
	r := New(in.Seed)
	seen := map[string]int{}
	for i, op := range in.Ops {
		var name string
		if len(op) == 0 || json.Unmarshal(op[0], &name) != nil {
			t.Fatalf("op %d malformed", i)
		}
		seen[name]++
		arg := func(j int, v any) {
			t.Helper()
			if j >= len(op) {
				t.Fatalf("op %d (%s): missing field %d", i, name, j)
			}
			if err := json.Unmarshal(op[j], v); err != nil {
				t.Fatalf("op %d (%s) field %d: %v", i, name, j, err)
			}
		}
		fail := func(got, want any) {
			t.Helper()
			t.Fatalf("op %d %s: got %v, want %v", i, name, got, want)
		}
		switch name {
		case "random":
			var want float64
			arg(1, &want)
			if got := r.Random(); !same(got, want) {
				fail(fmtFloat(got), fmtFloat(want))
			}
		case "getrandbits":
			var k int
			var want uint64
			arg(1, &k)
			arg(2, &want)
			if got := r.GetRandBits(k); got != want {
				fail(got, want)
			}
		case "randint", "randrange":
			var a, b, want int
			arg(1, &a)
			arg(2, &b)
			arg(3, &want)
			var got int
			if name == "randint" {
				got = r.RandInt(a, b)
			} else {
				got = r.RandRange(a, b)
			}
			if got != want {
				fail(got, want)
			}
		case "choice":
			var n, want int
			arg(1, &n)
			arg(2, &want)
			if got := r.Choice(n); got != want {
				fail(got, want)
			}
		case "shuffle":
			var n int
			var want []int
			arg(1, &n)
			arg(2, &want)
			x := make([]int, n)
			for i := range x {
				x[i] = i
			}
			r.Shuffle(n, func(i, j int) { x[i], x[j] = x[j], x[i] })
			if !slices.Equal(x, want) {
				fail(x, want)
			}
		case "uniform":
			var a, b, want float64
			arg(1, &a)
			arg(2, &b)
			arg(3, &want)
			if got := r.Uniform(a, b); !same(got, want) {
				fail(fmtFloat(got), fmtFloat(want))
			}
		case "sample":
			var n, k int
			var want []int
			arg(1, &n)
			arg(2, &k)
			arg(3, &want)
			if got := r.Sample(n, k); !slices.Equal(got, want) {
				fail(got, want)
			}
		default:
			t.Fatalf("op %d: unknown operation %q", i, name)
		}
	}
	for _, name := range []string{"random", "getrandbits", "randint", "randrange", "choice", "shuffle", "uniform", "sample"} {
		if seen[name] == 0 {
			t.Errorf("interleaved sequence never exercises %s", name)
		}
	}
}

// TestGoldenFileIsCurrent re-runs gen_golden.py with each python3 found (the
// one on PATH and /usr/bin/python3) and checks that testdata/golden.json is
// what it prints, ignoring "meta".
func TestGoldenFileIsCurrent(t *testing.T) {
	var pythons []string
	if p, err := exec.LookPath("python3"); err == nil {
		pythons = append(pythons, p)
	}
	if p := "/usr/bin/python3"; fileExists(p) && !slices.Contains(pythons, p) {
		pythons = append(pythons, p)
	}
	if len(pythons) == 0 {
		testenv.Missing(t, "python3 not found; cannot verify that testdata/golden.json is current")
	}
	checked, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	want := withoutMeta(t, checked)
	script := filepath.Join("testdata", "gen_golden.py")
	for _, py := range pythons {
		cmd := exec.Command(py, script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%s %s: %v\n%s", py, script, err, stderr.Bytes())
			continue
		}
		var meta struct {
			Meta map[string]string `json:"meta"`
		}
		_ = json.Unmarshal(out, &meta)
		got := withoutMeta(t, out)
		if len(got) != len(want) {
			t.Errorf("%s (Python %s): output has sections %v, checked-in file has %v", py, meta.Meta["python"], keys(got), keys(want))
			continue
		}
		for k, w := range want {
			if !bytes.Equal(got[k], w) {
				t.Errorf("%s (Python %s): section %q differs from %s; regenerate with: python3 testdata/gen_golden.py > testdata/golden.json",
					py, meta.Meta["python"], k, goldenPath)
			}
		}
		t.Logf("%s (%s %s): golden data current", py, meta.Meta["implementation"], meta.Meta["python"])
	}
}

func withoutMeta(t *testing.T, data []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("golden JSON: %v", err)
	}
	delete(m, "meta")
	return m
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
