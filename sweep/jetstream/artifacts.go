package jetstream

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
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

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
//
// In the object store each finished delivery of a case uploads its run
// as an object of a name of its own (the case id, ".", a run id), then
// claims the case with a create-only-if-absent key in the claims bucket
// (claimKey(id) → the object's name). Exactly one delivery's claim is
// written; every other finished delivery deletes its own object and
// reports the case not stored (a duplicate run, whose usage the worker
// reports). The claim is what has and fetch read, so serve downloads the
// kept run's object, with the kept run's response cache, whatever order
// the deliveries finished in. An object of an earlier version of
// coordbench, named by the bare case id and without a claim, still
// counts as the stored case.
type store struct {
	spec     *Spec
	dir      string // experiment directory (shared file system), "" for object
	casesDir string // the suite's cases subdirectory name
	obj      jetstream.ObjectStore
	claims   jetstream.KeyValue // with obj: the claims bucket
	// finished, if set, reports whether the experiment directory (dir,
	// or fetch's) holds case id finished, as serve's summary counts it
	// (sweep.Suite.CaseFinished). A case directory there that is not (an
	// earlier version's, a torn one) is stale: it is not the stored case,
	// and is replaced. Nil: any case directory there is the stored case.
	finished func(id string) bool
}

// stored reports whether the case directory of id in the cases
// directory casesDir is there and finished.
func (s *store) stored(casesDir, id string) bool {
	return fileExists(filepath.Join(casesDir, id)) && (s.finished == nil || s.finished(id))
}

// setAside removes the stale case directory dir: renamed out of the way
// first, so that no reader meets it half removed, and so that of two
// deliveries that both found it stale, one moves it and the other finds
// it gone.
func setAside(dir string) error {
	tmp := filepath.Join(filepath.Dir(dir), suiterun.TmpPrefix+"stale-"+filepath.Base(dir)+"-"+nuid.Next())
	if err := os.Rename(dir, tmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(tmp)
}

// metaCase is the metadata key, on each object this version stores,
// naming the case the object holds (an earlier version's objects have
// none).
const metaCase = "coordbench-case"

// runIDRE is what the run part of an object name may look like (a
// nuid: 22 letters and digits).
var runIDRE = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// checkObjectName refuses an object name that is not one of case id's
// runs: a claim comes from whoever can publish on the NATS server, and
// must not make serve download another case's object as this one.
func checkObjectName(id, name string) error {
	if run, ok := strings.CutPrefix(name, id+"."); !ok || !runIDRE.MatchString(run) {
		return fmt.Errorf("it names object %q, not a run of case %s", peerText(name, maxObjectName), id)
	}
	return nil
}

// has reports whether case id is stored already. In the object store, a
// claimed case is stored, even if its claim turns out not to name a
// usable object (a second claim could not be written anyway; fetch says
// what is wrong with it).
func (s *store) has(ctx context.Context, id string) (bool, error) {
	if s.obj != nil {
		_, err := s.claims.Get(ctx, claimKey(id))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return false, err
		}
		return s.hasLegacy(ctx, id)
	}
	fi, err := os.Stat(filepath.Join(s.dir, s.casesDir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || !fi.IsDir() {
		return false, err
	}
	return s.finished == nil || s.finished(id), nil
}

// hasLegacy reports whether the object store holds case id as an earlier
// version stored it: an object named by the bare case id, without this
// version's metadata (an object of this version named so is another
// case's run, whose id and run id read as this id).
func (s *store) hasLegacy(ctx context.Context, id string) (bool, error) {
	info, err := s.obj.GetInfo(ctx, id)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, ours := info.Metadata[metaCase]
	return !ours, nil
}

// object is the name of the object holding stored case id: the one its
// claim names, or else an earlier version's object named by the id.
func (s *store) object(ctx context.Context, id string) (string, error) {
	e, err := s.claims.Get(ctx, claimKey(id))
	if err == nil {
		name := string(e.Value())
		if err := checkObjectName(id, name); err != nil {
			return "", badStored(fmt.Errorf("its claim (key %s of bucket %s): %w", claimKey(id), e.Bucket(), err))
		}
		return name, nil
	}
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", err
	}
	if legacy, err := s.hasLegacy(ctx, id); err != nil {
		return "", err
	} else if !legacy {
		return "", badStored(errors.New("not stored: no claim, and no object of an earlier version"))
	}
	return id, nil
}

// put stores the finished case id from caseDir, with its response cache
// (cache, if the file exists). In the shared directory the case
// directory is renamed into place, then the cache (copied beside its
// place before): a worker killed between the two leaves a case without
// its cache, whose replay from the merged cache then misses, saying so.
// In the object store the case is uploaded and claimed (see store). A
// case stored meanwhile by another delivery is kept as it is, with its
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
		return s.putObject(ctx, id, tarPath)
	}
	if dst := filepath.Join(s.dir, s.casesDir, id); fileExists(dst) {
		if s.stored(filepath.Join(s.dir, s.casesDir), id) {
			return false, nil
		}
		if err := setAside(dst); err != nil {
			return false, fmt.Errorf("removing the stale case directory %s: %w", dst, err)
		}
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

// putObject uploads the tar of a run of case id as an object of its own
// and claims the case for it. A worker killed between the two leaves an
// object no claim names: another delivery stores the case, and serve
// deletes the object once a claim names another (prune).
func (s *store) putObject(ctx context.Context, id, tarPath string) (bool, error) {
	f, err := os.Open(tarPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	name := id + "." + nuid.Next()
	if _, err := s.obj.Put(ctx, jetstream.ObjectMeta{Name: name, Metadata: map[string]string{metaCase: id}}, f); err != nil {
		return false, err
	}
	return s.claim(ctx, id, name)
}

// claimTries bounds the attempts to learn whether a claim was written.
const claimTries = 4

// claim claims case id for the object name, unless another delivery's
// object is claimed already: then it deletes its own object and reports
// false. An object is deleted only once a claim is seen naming another:
// after an error that leaves unknown whether the claim was written, it
// asks again (a second Create of its own claim fails as a claim that
// exists, which then names this object), and if it still cannot tell it
// keeps the object and returns the error.
func (s *store) claim(ctx context.Context, id, name string) (bool, error) {
	key := claimKey(id)
	var err error
	for try := range claimTries {
		if try > 0 {
			select {
			case <-ctx.Done(): // an earlier try's claim may have been written
				return false, &claimUnknownError{id: id, object: name, err: ctx.Err()}
			case <-time.After(time.Duration(try) * 250 * time.Millisecond):
			}
		}
		if _, err = s.claims.Create(ctx, key, []byte(name)); err == nil {
			return true, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			continue
		}
		var e jetstream.KeyValueEntry
		if e, err = s.claims.Get(ctx, key); err != nil {
			continue
		}
		if string(e.Value()) == name {
			return true, nil // an earlier try of this delivery's was written
		}
		// Another delivery's run is kept. An object that cannot be deleted
		// now is an orphan serve deletes at the end (prune).
		s.obj.Delete(ctx, name)
		return false, nil
	}
	return false, &claimUnknownError{id: id, object: name, err: err}
}

// badStoredError is a stored case that cannot be fetched for what is
// stored (its claim, its object's name, metadata or size, its tar), not
// for a failure to reach the store: serving again would meet it again.
type badStoredError struct{ err error }

func badStored(err error) error { return &badStoredError{err} }

func (e *badStoredError) Error() string { return e.err.Error() }

func (e *badStoredError) Unwrap() error { return e.err }

// claimUnknownError is a claim that may or may not have been written:
// its object is kept, and the worker hands the case back naming it
// (Result.Object), so that serve does not count as discarded a run that
// was kept after all.
type claimUnknownError struct {
	id, object string
	err        error
}

func (e *claimUnknownError) Error() string {
	return fmt.Sprintf("claiming case %s for its object %s: %v", e.id, e.object, e.err)
}

func (e *claimUnknownError) Unwrap() error { return e.err }

// claimed reports whether case id's claim names the object name.
func (s *store) claimed(ctx context.Context, id, name string) (bool, error) {
	e, err := s.claims.Get(ctx, claimKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return string(e.Value()) == name, nil
}

// prune deletes the objects of the cases ids that lost to another run's
// claim but were left behind (their worker was stopped between upload
// and claim, or could not delete its object), and reports how many. An
// object of a case no claim names yet is kept: a worker may be about to
// claim it. Earlier versions' objects (named by a case id) are kept.
func (s *store) prune(ctx context.Context, ids []string) (int, error) {
	objs, err := s.obj.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	cases := make(map[string]bool, len(ids))
	for _, id := range ids {
		cases[id] = true
	}
	n := 0
	for _, o := range objs {
		i := strings.LastIndexByte(o.Name, '.')
		if cases[o.Name] || i < 0 {
			continue
		}
		id := o.Name[:i]
		if !cases[id] || o.Metadata[metaCase] != id || checkObjectName(id, o.Name) != nil {
			continue
		}
		e, err := s.claims.Get(ctx, claimKey(id))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if string(e.Value()) == o.Name {
			continue
		}
		if err := s.obj.Delete(ctx, o.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
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
// directory is there already and finished (a stale one is replaced): the
// object its claim names (or an earlier version's object named by the
// id).
func (s *store) fetch(ctx context.Context, dir, id string) error {
	casesDir := filepath.Join(dir, s.casesDir)
	if s.stored(casesDir, id) {
		return nil
	}
	if err := setAside(filepath.Join(casesDir, id)); err != nil {
		return err
	}
	name, err := s.object(ctx, id)
	if err != nil {
		return fmt.Errorf("case %s: %w", id, err)
	}
	info, err := s.obj.GetInfo(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		err = badStored(err)
	}
	if err != nil {
		return fmt.Errorf("case %s: object %s: %w", id, name, err)
	}
	if name != id && info.Metadata[metaCase] != id {
		return badStored(fmt.Errorf("case %s: object %s holds case %q", id, name, peerText(info.Metadata[metaCase], maxObjectName)))
	}
	if bound := tarBound(s.spec.MaxCaseBytes); int64(info.Size) > bound {
		return badStored(fmt.Errorf("case %s: object of %d bytes, more than the bound %d", id, info.Size, bound))
	}
	r, err := s.obj.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("case %s: object %s: %w", id, name, err)
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
		return fmt.Errorf("case %s: object %s: %w", id, name, badStored(err))
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
			return fmt.Errorf("the case's artifacts are more than %d bytes, the bound on a stored case that serve set", max)
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
