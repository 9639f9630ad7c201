package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's example lines that need no server run as written, from a
// directory that holds the repository's examples/ (issue 14: the
// my_plant.yaml line failed on a fresh clone).
func TestReadmeInstanceFileLine(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		args := strings.Fields(line)
		if len(args) > 2 && args[0] == "./coordbench" && args[1] == "des" && strings.Contains(line, "--instance ") {
			lines = append(lines, args[1:])
		}
	}
	if len(lines) < 2 {
		t.Fatalf("found %d des lines with --instance in README.md", len(lines))
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, args := range lines {
		if out, err := run(t, args...); err != nil {
			t.Errorf("README: ./coordbench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
