package sweep

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyTree copies the directory src, of regular files and directories
// only, into dst (created if missing), at most max bytes of file content
// (max <= 0: no bound). Collect and a distributed sweep's stores copy
// case directories with it.
func CopyTree(src, dst string, max int64) error {
	return copyTree(src, dst, max, nil)
}

// copyTree is CopyTree; beforeCopy, if set, is called with each file's
// path just before the file is copied (the tests make a file grow there).
func copyTree(src, dst string, max int64, beforeCopy func(path string)) error {
	var total int64
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			left := int64(-1) // no bound
			if max > 0 {
				// The size seen now fails a tree that is too big early;
				// the bytes copied are what the bound holds to (a file
				// may grow while it is copied).
				fi, err := d.Info()
				if err != nil {
					return err
				}
				if total+fi.Size() > max {
					return fmt.Errorf("%s: more than %d bytes", src, max)
				}
				left = max - total
			}
			if beforeCopy != nil {
				beforeCopy(path)
			}
			n, err := copyFile(path, target, left)
			total += n
			if err == nil && left >= 0 && n > left {
				return fmt.Errorf("%s: more than %d bytes (%s grew while it was copied)", src, max, path)
			}
			return err
		}
		return fmt.Errorf("%s is not a regular file or a directory: a case directory holds only these", path)
	})
}

// copyFile copies src to dst, which must not exist, and returns the bytes
// copied. With limit >= 0 it copies at most limit+1 bytes: more than
// limit copied says that src holds more than limit.
func copyFile(src, dst string, limit int64) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	var r io.Reader = in
	if limit >= 0 {
		r = io.LimitReader(in, limit+1)
	}
	n, err := io.Copy(out, r)
	if err != nil {
		out.Close()
		return n, err
	}
	return n, out.Close()
}
