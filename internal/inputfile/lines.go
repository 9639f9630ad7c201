package inputfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Lines calls fn with every line of r (the file at path, opened by the
// caller; what names it in errors: "run log") and its 1-based number,
// blank lines included, without its line terminator (\n or \r\n), until
// fn returns an error. A line longer than max bytes is an error naming
// path:line and the bound, as is fn's (wrapped as path:line: err): the
// memory one line can take is bounded by max, whatever the file holds.
func Lines(r io.Reader, path, what string, max int, fn func(no int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(256<<10, max)), max)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line longer than %d bytes, more than a run of the harness writes (is this a %s?)", path, n+1, max, what)
		}
		return fmt.Errorf("%s:%d: %w", path, n+1, err)
	}
	return nil
}

// errStop ends Lines early for ScanLines.
var errStop = errors.New("stop")

// ScanLines calls fn with each non-blank line of r (the file at path,
// opened by the caller; what names it in errors: "run log"), trimmed, until
// fn says stop. A line longer than max bytes is an error, as is fn's, both
// reported as path:line.
func ScanLines(r io.Reader, path, what string, max int, fn func(line []byte) (stop bool, err error)) error {
	err := Lines(r, path, what, max, func(_ int, line []byte) error {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return nil
		}
		stop, err := fn(line)
		if err == nil && stop {
			return errStop
		}
		return err
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
