// Package difftest holds what the rescore tests of both benchmarks
// share: a directory's files read whole, and the check of a scorer pin
// (a hash of what the current scorer gives a stored run, tied to the
// scorer version).
package difftest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Snapshot reads every file under dir, by path relative to dir (the
// lock file of a suite left out).
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Pin is a pin file: the scorer version and the hash of the scored
// values of the pinned run under it.
type Pin struct {
	Scorer string `json:"scorer"`
	Scored string `json:"scored_sha256"`
}

// WritePin writes the pin file.
func WritePin(t testing.TB, path string, p Pin) {
	t.Helper()
	b, _ := json.MarshalIndent(p, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CheckPin fails when got, the hash of what the current scorer
// (version) gives the pinned run, differs from the pin in path while the
// version stays (what changed: changes), or when the version moved and
// the pin was not updated. constant names the version's constant, doc
// where the rule is written.
func CheckPin(t testing.TB, path, version, got, constant, doc string, changes any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want Pin
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	switch {
	case got != want.Scored && version == want.Scorer:
		t.Fatalf("the scored values of the pinned run changed, but the scorer version is still %s:\n"+
			"a change to what a metric means or how it is computed must bump %s (%s),\n"+
			"then set %s to {\"scorer\": <the new version>, \"scored_sha256\": %q}.\nThe changes:\n%v",
			want.Scorer, constant, doc, path, got, changes)
	case version != want.Scorer:
		t.Fatalf("the scorer version is now %s, %s pins %s: set it to {\"scorer\": %q, \"scored_sha256\": %q}",
			version, path, want.Scorer, version, got)
	}
}
