//go:build unix

// Package inputfiletest makes the files every reader of user input files
// (package inputfile) must refuse, for the tests of those readers.
package inputfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Refused creates, in a new temporary directory, a FIFO with no writer
// (opening it would block), a symlink to /dev/zero (reading it would never
// end) and a sparse file of max+1 bytes, each named with ext (".yaml"). It
// returns each path with a part of the error its reader must give.
func Refused(t testing.TB, ext string, max int64) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo"+ext)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	zero := filepath.Join(dir, "zero"+ext)
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big"+ext)
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, max+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	return map[string]string{fifo: "named pipe (FIFO)", zero: "character device", big: "larger than the limit"}
}
