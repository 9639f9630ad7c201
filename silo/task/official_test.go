package task

// Parity with the published generator. testdata/official_golden.json comes
// from testdata/gen_official.py, our own Python re-implementation of the
// published draw order running on CPython's real random module. Regenerate
// (from silo/task):
//
//	python3 testdata/gen_official.py > testdata/official_golden.json
//
// TestGoldenFileIsCurrent re-runs the script and compares everything but
// "meta"; without python3 it is skipped (it fails in CI, where CI is set).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

const officialGoldenPath = "testdata/official_golden.json"

type fingerprint struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	N    int    `json:"n"`
	Seed string `json:"seed"`
	Data string `json:"data"`
	Gold string `json:"gold"`
	Repr string `json:"repr"`
}

type fullInstance struct {
	ID       string            `json:"id"`
	Shards   []json.RawMessage `json:"shards"`
	Expected []json.RawMessage `json:"expected"`
	Params   json.RawMessage   `json:"params"`
	Reprs    []string          `json:"reprs"`
}

type officialGolden struct {
	Meta     map[string]string `json:"meta"`
	Official []fingerprint     `json:"official"`
	Seeded   []fingerprint     `json:"seeded"`
	Full     []fullInstance    `json:"full"`
}

func loadOfficialGolden(t *testing.T) *officialGolden {
	t.Helper()
	data, err := os.ReadFile(officialGoldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var g officialGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", officialGoldenPath, err)
	}
	return &g
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func joinRaw(rs []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func fingerprintOf(in *Instance) fingerprint {
	params := []byte("null")
	if in.Params != nil {
		params = in.Params
	}
	gold := append(append(append([]byte{'['}, joinRaw(in.Expected)...), ','), params...)
	gold = append(gold, ']')
	reprs := make([]string, in.N)
	for i := range reprs {
		reprs[i] = in.ShardText(i)
	}
	return fingerprint{
		Data: sha(joinRaw(in.Shards)),
		Gold: sha(gold),
		Repr: sha(pyvalue.Canon(pyvalue.Strings(reprs))),
	}
}

func compareFingerprint(t *testing.T, what string, got, want fingerprint) {
	t.Helper()
	if got.Data != want.Data {
		t.Errorf("%s: shards differ from the Python generator", what)
	}
	if got.Gold != want.Gold {
		t.Errorf("%s: gold answers (or parameters) differ from the Python generator", what)
	}
	if got.Repr != want.Repr {
		t.Errorf("%s: Python str() of the shards differs", what)
	}
}

// TestOfficialMatchesPython checks all 180 official instances, in stream
// order, against CPython.
func TestOfficialMatchesPython(t *testing.T) {
	g := loadOfficialGolden(t)
	if len(g.Official) != 30*len(officialCounts) {
		t.Fatalf("golden has %d official instances, want %d", len(g.Official), 30*len(officialCounts))
	}
	k := 0
	for _, n := range officialCounts {
		for _, task := range All() {
			want := g.Official[k]
			k++
			if want.ID != officialKey(task.ID, n) {
				t.Fatalf("golden entry %d is %s, want %s (stream order)", k-1, want.ID, officialKey(task.ID, n))
			}
			in, err := Official(task.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			compareFingerprint(t, want.ID, fingerprintOf(in), want)
		}
	}
}

func TestSeededMatchesPython(t *testing.T) {
	g := loadOfficialGolden(t)
	if len(g.Seeded) == 0 {
		t.Fatal("no seeded fingerprints")
	}
	for _, want := range g.Seeded {
		seed, err := strconv.ParseUint(want.Seed, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		in, err := Seeded(want.Task, want.N, seed)
		if err != nil {
			t.Fatal(err)
		}
		compareFingerprint(t, want.Task+" n="+strconv.Itoa(want.N)+" seed="+want.Seed, fingerprintOf(in), want)
	}
}

// TestOfficialFullInstances compares a few small instances value by value,
// which makes a failure readable.
func TestOfficialFullInstances(t *testing.T) {
	g := loadOfficialGolden(t)
	if len(g.Full) == 0 {
		t.Fatal("no full instances")
	}
	for _, f := range g.Full {
		id, ns, _ := strings.Cut(f.ID, "_n")
		n, _ := strconv.Atoi(ns)
		in, err := Official(id, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if got, want := string(in.Shards[i]), string(mustRecanon(t, f.Shards[i])); got != want {
				t.Errorf("%s agent %d shard:\n got %s\nwant %s", f.ID, i, got, want)
			}
			if got, want := string(in.Expected[i]), string(mustRecanon(t, f.Expected[i])); got != want {
				t.Errorf("%s agent %d gold:\n got %s\nwant %s", f.ID, i, got, want)
			}
			if got := in.ShardText(i); got != f.Reprs[i] {
				t.Errorf("%s agent %d str(shard):\n got %s\nwant %s", f.ID, i, got, f.Reprs[i])
			}
			if !strings.Contains(in.Prompt(i, true), f.Reprs[i]) {
				t.Errorf("%s agent %d: prompt does not show str(shard)", f.ID, i)
			}
		}
		if string(f.Params) != "null" {
			if got, want := string(in.Params), string(mustRecanon(t, f.Params)); got != want {
				t.Errorf("%s params:\n got %s\nwant %s", f.ID, got, want)
			}
		}
	}
}

func mustRecanon(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	c, err := recanon(raw)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGoldenFileIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3 (a few seconds)")
	}
	py := testenv.LookPath(t, "python3")
	out, err := exec.Command(py, "testdata/gen_official.py").Output()
	if err != nil {
		t.Fatalf("gen_official.py: %v", err)
	}
	var fresh, checked map[string]json.RawMessage
	if err := json.Unmarshal(out, &fresh); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(officialGoldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &checked); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"official", "seeded", "full"} {
		if !bytes.Equal(fresh[k], checked[k]) {
			t.Errorf("%s: section %q differs from what gen_official.py prints now; regenerate it", officialGoldenPath, k)
		}
	}
}
