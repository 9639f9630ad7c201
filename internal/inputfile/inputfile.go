// Package inputfile holds the rules both benchmarks apply to a
// user-supplied input file (an instance file, a task file), so that they
// hold the same everywhere: Read reads only a regular file (a symlink is
// followed to one), refuses a FIFO or device without blocking on it, and
// caps the size; ScanLines reads a JSONL log line by line within a line
// bound; Items bounds the values a parser would hold, before
// parsing; ControlChar finds the characters names must not contain.
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Read returns the contents of the regular file at path, of at most max
// bytes. what names the file's role in errors ("instance file").
func Read(path, what string, max int64) ([]byte, error) {
	f, err := open(path, what, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may still grow while it is read: never read past the cap.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(path, what, int64(len(data)), max)
	}
	return data, nil
}

// Open opens the regular file at path for reading as a stream (a JSONL
// log), refusing a FIFO or device without blocking on it; the caller
// bounds what it reads (its lines, its records). The error wraps the
// file system's (errors.Is(err, fs.ErrNotExist) for a missing file).
func Open(path, what string) (*os.File, error) { return open(path, what, math.MaxInt64) }

// OpenMax is Open for a file of at most max bytes: a larger one is
// refused before it is read.
func OpenMax(path, what string, max int64) (*os.File, error) { return open(path, what, max) }

func open(path, what string, max int64) (*os.File, error) {
	// Stat first, so that a FIFO is never opened (opening one for reading
	// blocks until a writer appears).
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if err := check(path, what, st, max); err != nil {
		return nil, err
	}
	// The file may have been swapped since the Stat: open without
	// blocking and check what was actually opened.
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if err := check(path, what, st, max); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func check(path, what string, st fs.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file (it is %s); give the path of a plain file", what, path, kind(st.Mode()))
	}
	if st.Size() > max {
		return tooLarge(path, what, st.Size(), max)
	}
	return nil
}

func tooLarge(path, what string, size, max int64) error {
	return fmt.Errorf("%s %s is larger than the limit of %d bytes (at least %d bytes)", what, path, max, size)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a plain file: " + m.Type().String()
	}
}

// ControlChar finds the first character of s that must not appear in a
// name or id read from an input file: a control character (terminal
// escape sequences start with one), an invisible format character (such
// as a bidirectional override) or an invalid UTF-8 byte. With text, s is
// free text where newlines and tabs are allowed and format characters
// (such as the joiners of emoji) are too.
func ControlChar(s string, text bool) (rune, bool) {
	for _, r := range s {
		switch {
		case text && (r == '\n' || r == '\t'):
		case unicode.IsControl(r), r == utf8.RuneError, !text && unicode.Is(unicode.Cf, r):
			return r, true
		}
	}
	return 0, false
}

// Items bounds the number of values (keys, values, list entries) of a
// YAML or JSON document from above, without parsing it: every value
// follows one of the bytes it counts. A parser holds every value in
// memory (a YAML node tree takes about 200 bytes a value), so a reader
// bounds Items before parsing: a few megabytes of one-character list
// items would otherwise take gigabytes.
func Items(data []byte) int {
	n := 1
	for _, c := range data {
		switch c {
		case ',', '-', ':', '[', '{', '\n', '?', '*', '&', '!':
			n++
		}
	}
	return n
}

// Error locates a fault in an input file: the file, the line of the
// offending key (0 if unknown), the field path ("" for the whole file)
// and what is wrong, as file:line: field "x": msg.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}
