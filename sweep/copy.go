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
			if max > 0 {
				fi, err := d.Info()
				if err != nil {
					return err
				}
				if total += fi.Size(); total > max {
					return fmt.Errorf("%s: more than %d bytes", src, max)
				}
			}
			return CopyFile(path, target)
		}
		return fmt.Errorf("%s is not a regular file or a directory: a case directory holds only these", path)
	})
}

// CopyFile copies the regular file src to dst, which must not exist.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
