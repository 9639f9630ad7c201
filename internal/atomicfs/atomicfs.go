// Package atomicfs writes the outputs of resumable suites so that a
// reader (or a resumed run) never sees a partial file or directory: files
// go through a temporary name and a rename, a case directory is built
// under a temporary name and renamed into place when complete, and the
// temporaries a killed run left behind are removed at the next start.
// Every temporary name starts with the caller's prefix.
package atomicfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLocked is LockDir's refusal of a directory another process holds.
var ErrLocked = errors.New("is in use by another running suite")

// WriteFile writes data to path through a temporary file in the same
// directory (named prefix+base+"-*") and a rename.
func WriteFile(path, prefix string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), prefix+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// MoveIntoPlace renames the complete directory tmp to final, replacing an
// older final: the old one is first renamed to a temporary name in parent
// (removed by RemoveTemps if we die before removing it), so final is at
// every moment absent, old and complete, or new and complete.
func MoveIntoPlace(tmp, final, parent, prefix string) error {
	if _, err := os.Lstat(final); err == nil {
		old, err := os.MkdirTemp(parent, prefix+"old-")
		if err != nil {
			return err
		}
		if err := os.Remove(old); err != nil {
			return err
		}
		if err := os.Rename(final, old); err != nil {
			return err
		}
		defer os.RemoveAll(old)
	}
	return os.Rename(tmp, final)
}

// RemoveTemps deletes what a killed run left in dir: entries named prefix*.
func RemoveTemps(dir, prefix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// MarshalLine encodes plain data as indented JSON ending in a newline.
func MarshalLine(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // plain data (structs, maps, slices of such): cannot fail
	}
	return append(b, '\n')
}

// AppendLine appends line and a newline to the file at path (made if
// missing) in one write, so that a reader sees whole lines but for a
// last one cut short by a killed process.
func AppendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
