package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// Bounds on what the export reads: run directories are written by
// coordbench, but they are files on disk, and a damaged or foreign one
// must give an error, not exhaust memory.
const (
	// MaxFileBytes bounds each file read whole or line by line.
	MaxFileBytes = 256 << 20
	// MaxLineBytes bounds one line of a JSONL file.
	MaxLineBytes = 16 << 20
	// MaxRuns bounds the runs of one suite directory.
	MaxRuns = 1_000_000
)

// readJSON decodes the JSON file at path (of at most MaxFileBytes) into v.
func readJSON(path string, v any) error {
	data, err := inputfile.Read(path, filepath.Base(path), MaxFileBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: not the JSON coordbench writes: %w", path, err)
	}
	return nil
}

// scanJSONL calls fn with every non-empty line of the JSONL file at path
// and its 1-based number; fn's error is returned naming the line.
func scanJSONL(path string, fn func(line []byte, no int) error) error {
	f, err := inputfile.OpenMax(path, filepath.Base(path), MaxFileBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	no := 0
	for sc.Scan() {
		no++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(line, no); err != nil {
			return fmt.Errorf("%s line %d: %w", path, no, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s line %d: longer than %d bytes", path, no+1, MaxLineBytes)
		}
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// exists tells whether path exists (any kind of file).
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}
