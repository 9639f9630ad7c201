package atomicfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAtomicOutputs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.csv")
	if err := WriteFile(p, ".tmp-", []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, ".tmp-", []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "b\n" {
		t.Errorf("content %q", b)
	}
	// A case directory replaces an older one, and leftovers are cleaned.
	final := filepath.Join(dir, "case")
	for i, content := range []string{"old", "new"} {
		tmp, _ := os.MkdirTemp(dir, ".tmp-case-")
		os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644)
		if err := MoveIntoPlace(tmp, final, dir, ".tmp-"); err != nil {
			t.Fatal(i, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(final, "f")); string(b) != "new" {
		t.Errorf("case holds %q", b)
	}
	os.MkdirAll(filepath.Join(dir, ".tmp-stale"), 0o755)
	if err := RemoveTemps(dir, ".tmp-"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left %d entries, want summary.csv and case", len(ents))
	}
	var v map[string]int
	os.WriteFile(filepath.Join(dir, "x.json"), MarshalLine(map[string]int{"n": 3}), 0o644)
	if err := ReadJSON(filepath.Join(dir, "x.json"), &v); err != nil || v["n"] != 3 {
		t.Errorf("round trip: %v %v", v, err)
	}
}
