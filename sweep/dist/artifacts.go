package dist

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/suiterun"
	"github.com/coordbench/coordbench/sweep"
)

// Layout of a case's stored artifacts in the experiment directory: the
// case directory in the suite's cases directory, its response cache in
// CachesDir, a failed case's directory in failed/.
const (
	// CachesDir holds the per-case response caches that serve merges.
	CachesDir = "caches"
	// tar member names of a stored object.
	tarCase  = "case/"
	tarCache = "llm_cache.db"
)

// store is where finished cases go: a shared directory or the object store.
type store struct {
	spec     *Spec
	dir      string // experiment directory (shared file system), "" for object
	casesDir string // the suite's cases subdirectory name
	obj      jetstream.ObjectStore
}

// has reports whether case id is stored already.
func (s *store) has(ctx context.Context, id string) (bool, error) {
	if s.obj != nil {
		_, err := s.obj.GetInfo(ctx, id)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	fi, err := os.Stat(filepath.Join(s.dir, s.casesDir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && fi.IsDir(), err
}

// put stores the finished case id from caseDir, with its response cache
// (cache, if the file exists). In the shared directory the case
// directory is renamed into place, then the cache (copied beside its
// place before): a worker killed between the two leaves a case without
// its cache, whose replay from the merged cache then misses, saying so.
// A case stored meanwhile by another delivery is kept as it is, with its
// own cache, and stored reports false.
func (s *store) put(ctx context.Context, id, caseDir, cache, scratch string) (stored bool, err error) {
	hasCache := fileExists(cache)
	if s.obj != nil {
		if has, err := s.has(ctx, id); err != nil || has {
			return false, err
		}
		tarPath := filepath.Join(scratch, "case.tar")
		if err := writeTar(tarPath, caseDir, cache, hasCache, s.spec.MaxCaseBytes); err != nil {
			return false, err
		}
		f, err := os.Open(tarPath)
		if err != nil {
			return false, err
		}
		defer f.Close()
		_, err = s.obj.Put(ctx, jetstream.ObjectMeta{Name: id}, f)
		return err == nil, err
	}
	if fileExists(filepath.Join(s.dir, s.casesDir, id)) {
		return false, nil
	}
	// The cache is copied beside its place first and renamed into it only
	// if this delivery's case directory is the one kept: a delivery that
	// loses the race must not replace the kept case's replies with its own.
	staged, dst := "", filepath.Join(s.dir, CachesDir, id+".db")
	if hasCache {
		if staged, err = stage(cache, dst); err != nil {
			return false, err
		}
		defer os.Remove(staged) // a no-op once renamed
	}
	moved, err := moveDirIntoPlace(caseDir, filepath.Join(s.dir, s.casesDir), id, s.spec.MaxCaseBytes)
	if err != nil || !moved || staged == "" {
		return moved, err
	}
	return true, os.Rename(staged, dst)
}

// putFailed records a failed case in the shared directory's failed/ (its
// partial artifacts, if any, and error.txt). With the object store the
// error travels in the result and serve writes it.
func (s *store) putFailed(id, failedDir, msg string) error {
	if s.obj != nil {
		return nil
	}
	return writeFailed(s.dir, id, failedDir, msg, s.spec.MaxCaseBytes)
}

// writeFailed puts failed/<id>/ (a copy of failedDir, if it exists and
// is at most max bytes, and error.txt) into the experiment directory dir.
func writeFailed(dir, id, failedDir, msg string, max int64) error {
	base := filepath.Join(dir, suiterun.FailedDir)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(base, suiterun.TmpPrefix+id+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if failedDir != "" && fileExists(failedDir) {
		if err := sweep.CopyTree(failedDir, tmp, max); err != nil {
			// Keep the error alone rather than lose the outcome.
			os.RemoveAll(tmp)
			if err := os.Mkdir(tmp, 0o755); err != nil {
				return err
			}
			msg += " (its partial artifacts were not kept: " + err.Error() + ")"
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, suiterun.ErrorFile), []byte(msg+"\n"), 0o644); err != nil {
		return err
	}
	os.RemoveAll(filepath.Join(base, id))
	return os.Rename(tmp, filepath.Join(base, id))
}

// fetch downloads stored case id from the object store into the
// experiment directory dir (case directory and cache), unless the case
// directory is there already.
func (s *store) fetch(ctx context.Context, dir, id string) error {
	casesDir := filepath.Join(dir, s.casesDir)
	if fileExists(filepath.Join(casesDir, id)) {
		return nil
	}
	info, err := s.obj.GetInfo(ctx, id)
	if err != nil {
		return fmt.Errorf("case %s: object: %w", id, err)
	}
	if bound := tarBound(s.spec.MaxCaseBytes); int64(info.Size) > bound {
		return fmt.Errorf("case %s: object of %d bytes, more than the bound %d", id, info.Size, bound)
	}
	r, err := s.obj.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("case %s: object: %w", id, err)
	}
	defer r.Close()
	if err := os.MkdirAll(casesDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(casesDir, suiterun.TmpPrefix+id+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := readTar(io.LimitReader(r, tarBound(s.spec.MaxCaseBytes)+1), tmp, s.spec.MaxCaseBytes); err != nil {
		return fmt.Errorf("case %s: object: %w", id, err)
	}
	if c := filepath.Join(tmp, tarCache); fileExists(c) {
		if err := copyIntoPlace(c, filepath.Join(dir, CachesDir, id+".db")); err != nil {
			return err
		}
	}
	_, err = moveDirIntoPlace(filepath.Join(tmp, strings.TrimSuffix(tarCase, "/")), casesDir, id, s.spec.MaxCaseBytes)
	return err
}

// moveDirIntoPlace copies src (at most max bytes) into parent/<name>
// through a temporary directory and a rename; an existing parent/<name>
// is kept.
func moveDirIntoPlace(src, parent, name string, max int64) (moved bool, err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, err
	}
	dst := filepath.Join(parent, name)
	if fileExists(dst) {
		return false, nil
	}
	tmp, err := os.MkdirTemp(parent, suiterun.TmpPrefix+name+"-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if err := sweep.CopyTree(src, tmp, max); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if fileExists(dst) { // another delivery got there first
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// copyIntoPlace copies the file src to dst through a temporary file of
// its own (two deliveries of one case may copy at once) and a rename.
func copyIntoPlace(src, dst string) error {
	tmp, err := stage(src, dst)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// stage copies the file src to a temporary file beside dst and returns
// its name, for the caller to rename into place.
func stage(src, dst string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), suiterun.TmpPrefix+filepath.Base(dst)+"-")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(out.Name(), 0o644)
	}
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeTar writes to path a tar of caseDir (under case/) and, if
// withCache, the cache file; at most max bytes of content.
func writeTar(path, caseDir, cache string, withCache bool, max int64) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	var total int64
	entries := 0
	add := func(name, file string, fi fs.FileInfo) error {
		// The bounds readTar applies when the case is fetched: content
		// bytes and entries (tarBound allows for the tar's own framing).
		if entries++; entries > maxCaseFiles {
			return fmt.Errorf("the case has more than %d files and directories", maxCaseFiles)
		}
		if fi.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		if total += fi.Size(); total > max {
			return fmt.Errorf("the case's artifacts are more than %d bytes (raise --max-case-bytes)", max)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: fi.Size(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		in, err := os.Open(file)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.CopyN(tw, in, fi.Size())
		return err
	}
	err = filepath.WalkDir(caseDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(caseDir, p)
		if err != nil || rel == "." {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file or a directory", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return add(tarCase+filepath.ToSlash(rel), p, fi)
	})
	if err != nil {
		return err
	}
	if withCache {
		fi, err := os.Stat(cache)
		if err != nil {
			return err
		}
		if err := add(tarCache, cache, fi); err != nil {
			return err
		}
	}
	return tw.Close()
}

// tarBound bounds the tar of a case whose content is at most max bytes in
// at most maxCaseFiles entries: each entry adds a 512-byte header and at
// most 511 bytes of padding, and the archive ends with 1,024 zero bytes.
func tarBound(max int64) int64 { return max + int64(maxCaseFiles)*1024 + 1024 }

// readTar extracts a stored case into dir: only case/... files and
// directories and the cache file, with clean relative names, at most max
// bytes and maxCaseFiles entries.
func readTar(r io.Reader, dir string, max int64) error {
	tr := tar.NewReader(r)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n >= maxCaseFiles {
			return fmt.Errorf("more than %d entries", maxCaseFiles)
		}
		name := h.Name
		if name != tarCache && (!strings.HasPrefix(name, tarCase) || path.Clean(name) != strings.TrimSuffix(name, "/") ||
			strings.Contains(name, "..") || strings.Contains(name, "\\")) {
			return fmt.Errorf("unexpected entry %q", name)
		}
		target := filepath.Join(dir, filepath.FromSlash(path.Clean(name)))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if total += h.Size; h.Size < 0 || total > max {
				return fmt.Errorf("more than %d bytes", max)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.CopyN(out, tr, h.Size)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q is not a file or a directory", name)
		}
	}
}
