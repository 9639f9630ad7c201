package jetstream

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestTarRoundTrip(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "case")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "a.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(src, "sub", "b.txt"), []byte("bee"), 0o644)
	cache := filepath.Join(tmp, "c.db")
	os.WriteFile(cache, []byte("sqlite"), 0o644)
	tf := filepath.Join(tmp, "x.tar")
	if err := writeTar(tf, src, cache, true, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := writeTar(filepath.Join(tmp, "small.tar"), src, cache, true, 4); err == nil {
		t.Error("a case above the bound must be refused")
	}
	f, _ := os.Open(tf)
	defer f.Close()
	dst := filepath.Join(tmp, "out")
	if err := readTar(f, dst, 1<<20); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"case/a.json": "{}\n", "case/sub/b.txt": "bee", tarCache: "sqlite"} {
		if b, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", p, b, err)
		}
	}
}

// readTar refuses entries outside the case, links and oversized content.
func TestReadTarRefuses(t *testing.T) {
	for name, h := range map[string]*tar.Header{
		"escape":  {Name: "case/../../evil", Typeflag: tar.TypeReg, Size: 1},
		"abs":     {Name: "/etc/evil", Typeflag: tar.TypeReg, Size: 1},
		"other":   {Name: "evil.txt", Typeflag: tar.TypeReg, Size: 1},
		"symlink": {Name: "case/l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"big":     {Name: "case/big", Typeflag: tar.TypeReg, Size: 100},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(h)
		tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		tw.Close()
		if err := readTar(&buf, t.TempDir(), 10); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A case exactly at the content bound is stored and fetched back: the
// tar's own framing is allowed for (tarBound), so a case that could be
// stored can always be read.
func TestTarAtTheBound(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "case")
	os.MkdirAll(src, 0o755)
	const max = 3000
	for i, n := range []int{1000, 1000, 999} {
		os.WriteFile(filepath.Join(src, string(rune('a'+i))), bytes.Repeat([]byte("x"), n), 0o644)
	}
	os.WriteFile(filepath.Join(tmp, "c.db"), []byte("s"), 0o644)
	tf := filepath.Join(tmp, "x.tar")
	if err := writeTar(tf, src, filepath.Join(tmp, "c.db"), true, max); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(tf)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= max || fi.Size() > tarBound(max) {
		t.Fatalf("tar of %d content bytes is %d bytes; want more than %d (framing) and at most tarBound %d", max, fi.Size(), max, tarBound(max))
	}
	f, _ := os.Open(tf)
	defer f.Close()
	if err := readTar(f, filepath.Join(tmp, "out"), max); err != nil {
		t.Fatalf("a stored case at the bound could not be read back: %v", err)
	}
}

// Text a peer reports is kept bounded, cut on a UTF-8 boundary, with
// terminal controls made harmless.
func TestPeerText(t *testing.T) {
	got := peerText("w\x1b[2Jé"+string(bytes.Repeat([]byte("x"), 300)), 5)
	if bytes.ContainsRune([]byte(got), 0x1b) || len(got) > 5+len("…")+len("␛") {
		t.Errorf("peerText = %q", got)
	}
	if peerText("plain", 10) != "plain" {
		t.Error("plain text changed")
	}
}

// The status keeps at most maxWorkers worker names, however many a
// publisher invents; names already kept stay.
func TestWorkerNamesBounded(t *testing.T) {
	c := &coordinator{workers: map[string]bool{}}
	for i := 0; i < 3*maxWorkers; i++ {
		c.addWorker(fmt.Sprintf("w%d", i))
	}
	c.addWorker("w0")
	if len(c.workers) != maxWorkers || !c.workers["w0"] || !c.workersCut {
		t.Errorf("%d worker names kept (cut %v), want %d with w0", len(c.workers), c.workersCut, maxWorkers)
	}
}
