package scorediff

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/coordbench/coordbench/internal/atomicfs"
)

// Names in a rescored directory.
const (
	// ReportFile is the difference report (Report) of the last rescore.
	ReportFile = "rescore.json"
	// BackupDir holds the old versions of the files a rescore replaced,
	// at their paths relative to the directory.
	BackupDir = "rescore-backup"
	// TmpPrefix starts the temporary names of a rescore.
	TmpPrefix = ".tmp-rescore-"
)

// File is one file of a rescored directory: its path relative to the
// directory, the contents read (nil: the file does not exist) and the
// contents rescored.
type File struct {
	Rel      string
	Old, New []byte
}

// Changed reports whether rescoring changed f.
func (f *File) Changed() bool { return !bytes.Equal(f.Old, f.New) }

// Apply replaces in dir the files whose contents changed and writes
// rep as dir/ReportFile. The old versions go first, whole, into
// dir/BackupDir (a temporary directory renamed into place), then each
// file is replaced through a temporary file and a rename, so that the
// directory holds at every moment each file old or new and complete, and
// every old one replaced is in the backup. An earlier rescore's backup
// must have been moved away: Apply never overwrites one. A file changed
// on disk since it was read is not replaced (an error).
func Apply(dir string, files []File, rep *Report) error {
	if err := atomicfs.RemoveTemps(dir, TmpPrefix); err != nil { // what a killed rescore left
		return err
	}
	var changed []File
	for _, f := range files {
		if f.Changed() {
			changed = append(changed, f)
		}
	}
	rep.Written, rep.Backup = []string{}, ""
	if len(changed) > 0 {
		backup := filepath.Join(dir, BackupDir)
		if _, err := os.Lstat(backup); err == nil {
			return fmt.Errorf("%s holds the backup of an earlier rescore: look at it and move it away, then rescore again", backup)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, f := range changed {
			now, err := os.ReadFile(filepath.Join(dir, f.Rel))
			if f.Old == nil && errors.Is(err, os.ErrNotExist) { // a new file
				continue
			}
			if err != nil {
				return err
			}
			if f.Old == nil || !bytes.Equal(now, f.Old) {
				return fmt.Errorf("%s changed while it was rescored: nothing written; rescore again", filepath.Join(dir, f.Rel))
			}
		}
		tmp, err := os.MkdirTemp(dir, TmpPrefix+"backup-")
		if err != nil {
			return err
		}
		for _, f := range changed {
			if f.Old == nil { // nothing to keep
				continue
			}
			p := filepath.Join(tmp, f.Rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				os.RemoveAll(tmp)
				return err
			}
			if err := os.WriteFile(p, f.Old, 0o644); err != nil {
				os.RemoveAll(tmp)
				return err
			}
		}
		if err := os.Rename(tmp, backup); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		rep.Backup = BackupDir
		for _, f := range changed {
			if err := atomicfs.WriteFile(filepath.Join(dir, f.Rel), TmpPrefix, f.New); err != nil {
				return fmt.Errorf("%w (the old files are in %s)", err, backup)
			}
			rep.Written = append(rep.Written, f.Rel)
		}
	}
	return atomicfs.WriteFile(filepath.Join(dir, ReportFile), TmpPrefix, atomicfs.MarshalLine(rep))
}
