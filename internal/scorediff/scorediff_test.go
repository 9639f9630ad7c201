package scorediff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONChanges: nested values, arrays, keys added and dropped.
func TestJSONChanges(t *testing.T) {
	old := `{"a": 1, "v": {"x": 2, "gone": true}, "l": [1, 2], "s": "p"}`
	new := `{"a": 1, "v": {"x": 3}, "l": [1, 5], "s": "q", "add": null}`
	got, err := JSONChanges("c", "f.json", []byte(old), []byte(new))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.Metric+" "+c.Old+" "+c.New)
	}
	want := []string{"v.x 2 3", "l[1] 2 5", `s "p" "q"`, "add (absent) null", "v.gone true (absent)"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("changes %q, want %q", lines, want)
	}
	if _, err := JSONChanges("c", "f.json", []byte("{"), []byte(new)); err == nil {
		t.Error("malformed JSON: no error")
	}
	if err := KeysKept("f.json", []byte(old), []byte(new)); err == nil || !strings.Contains(err.Error(), "v.gone") {
		t.Errorf("KeysKept: %v", err)
	}
}

// TestCSVChanges: rows matched by their key columns, cells by column.
func TestCSVChanges(t *testing.T) {
	old := "k1,k2,m,n\na,b,1,2\nc,d,3,4\n"
	new := "k1,k2,m,n\nc,d,3,5\na,b,1,2\n"
	got, err := CSVChanges("aggregate", "agg.csv", 2, []byte(old), []byte(new))
	if err != nil || len(got) != 1 || got[0].Case != "aggregate c/d" || got[0].Metric != "n" || got[0].Old != "4" || got[0].New != "5" {
		t.Errorf("%+v %v", got, err)
	}
}

// TestApply: changed files are replaced and their old versions backed
// up, a new file is written without a backup, unchanged ones are left
// alone; a file changed on disk since it was read stops everything; an
// earlier backup is never overwritten.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "cases", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "cases", "x", "m.json"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, "same.csv"), []byte("same"), 0o644)
	files := []File{{Rel: "cases/x/m.json", Old: []byte("old"), New: []byte("new")},
		{Rel: "same.csv", Old: []byte("same"), New: []byte("same")}, {Rel: "added.csv", New: []byte("added")}}
	rep := &Report{}
	if err := Apply(dir, files, rep); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string { b, _ := os.ReadFile(filepath.Join(dir, rel)); return string(b) }
	if read("cases/x/m.json") != "new" || read("added.csv") != "added" || read(BackupDir+"/cases/x/m.json") != "old" || read(ReportFile) == "" {
		t.Errorf("files after Apply: %q %q %q", read("cases/x/m.json"), read("added.csv"), read(BackupDir+"/cases/x/m.json"))
	}
	if _, err := os.Stat(filepath.Join(dir, BackupDir, "added.csv")); err == nil {
		t.Error("a backup of a file that did not exist")
	}
	if len(rep.Written) != 2 || rep.Backup != BackupDir {
		t.Errorf("report: %+v", rep)
	}
	if err := Apply(dir, files, &Report{}); err == nil || !strings.Contains(err.Error(), "earlier rescore") {
		t.Errorf("over an earlier backup: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, BackupDir))
	stale := []File{{Rel: "cases/x/m.json", Old: []byte("what was read"), New: []byte("newer")}}
	if err := Apply(dir, stale, &Report{}); err == nil || !strings.Contains(err.Error(), "changed while it was rescored") {
		t.Errorf("a file changed meanwhile: %v", err)
	}
	if read("cases/x/m.json") != "new" {
		t.Error("a file changed meanwhile was replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, BackupDir)); err == nil {
		t.Error("a backup made although nothing was written")
	}
}
