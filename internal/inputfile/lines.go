package inputfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ScanLines calls fn with each non-blank line of r (the file at path,
// opened by the caller; what names it in errors: "run log"), trimmed, until
// fn says stop. A line longer than max bytes is an error, as is fn's, both
// reported as path:line.
func ScanLines(r io.Reader, path, what string, max int, fn func(line []byte) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(256<<10, max)), max)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		stop, err := fn(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if stop {
			return nil
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
